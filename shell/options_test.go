package shell

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestOptionsParse(t *testing.T) {
	specs, err := parseOptions(optionsText)
	if err != nil {
		t.Fatalf("options.txt:%v", err)
	}
	if len(specs) < 100 {
		t.Fatalf("options.txt has %d blocks", len(specs))
	}
}

// TestOptionsCoverHelp checks each block of options.txt against the help
// text of its program (testdata/help, INDEX): every option the help
// defines is listed, so that no option is left unjudged. The help texts
// were captured from the programs, or written from their documentation
// where the machine lacks them (each file's first line says which).
func TestOptionsCoverHelp(t *testing.T) {
	specs := optionSpecs()
	index, err := os.ReadFile("testdata/help/INDEX")
	if err != nil {
		t.Fatal(err)
	}
	for n, line := range strings.Split(strings.TrimSpace(string(index)), "\n") {
		block, file, ok := strings.Cut(line, "\t")
		file, _, _ = strings.Cut(file, "\t")
		if !ok {
			t.Fatalf("INDEX:%d: want block<TAB>file<TAB>how", n+1)
		}
		spec := specs[block]
		if spec == nil {
			t.Errorf("INDEX:%d: no block %q in options.txt", n+1, block)
			continue
		}
		text, err := os.ReadFile(filepath.Join("testdata/help", file))
		if err != nil {
			t.Errorf("INDEX:%d: %v", n+1, err)
			continue
		}
		for _, opt := range helpOptions(string(text)) {
			if !spec.lists(opt) {
				t.Errorf("options.txt:%d: %s does not list %s, which %s defines", spec.line, block, opt, file)
			}
		}
	}
}

// helpOptions returns the options a help text defines: the option words
// at the start of its definition lines (those whose first character, after
// blanks, is "-" or "+").
func helpOptions(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || l[0] != '-' && l[0] != '+' || strings.HasPrefix(line, "#") {
			continue
		}
		// The definition: option words separated by ", " or " | " up to
		// two blanks or the description.
		for _, m := range helpOptionWord.FindAllStringSubmatch(definitionPart(l), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

var helpOptionWord = regexp.MustCompile(`(?:^|[\s,|\[])((?:-{1,3}|\+)[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9])`)

// definitionPart is the start of a definition line, before its
// description (two blanks, or a tab).
func definitionPart(l string) string {
	if i := strings.Index(l, "  "); i >= 0 {
		l = l[:i]
	}
	if i := strings.IndexByte(l, '\t'); i >= 0 {
		l = l[:i]
	}
	return l
}

// lists reports whether the block lists option word opt.
func (sp *optSpec) lists(opt string) bool {
	if sp.helpWords[opt] {
		return true
	}
	switch {
	case strings.HasPrefix(opt, "+"):
		_, ok := sp.plus[opt[1]]
		return ok || len(opt) > 2 && sp.plus[0].kind != noValue
	case len(opt) == 2:
		_, ok := sp.short[opt[1]]
		if !ok {
			_, ok = sp.long[opt]
		}
		return ok
	}
	_, ok := sp.long[opt]
	if !ok && (sp.single || sp.whole) {
		_, _, ok = sp.longOption(opt)
	}
	if !ok && !sp.single && !sp.whole && opt[1] != '-' {
		// A cluster (-OO), or a short option with its value (-i6).
		ok = true
		for j := 1; j < len(opt); j++ {
			d, listed := sp.short[opt[j]]
			if !listed {
				return false
			}
			if d.kind != noValue {
				break
			}
		}
	}
	return ok
}

// slowHelp are programs whose help takes seconds to print (pip asks its
// index for a newer pip); their captured help is checked all the same.
var slowHelp = map[string]bool{"pip": true, "npm": true, "python": true, "python3": true, "yq": true}

// TestOptionsCoverLiveHelp checks the blocks against the help of the
// programs on this machine, where a help file was captured from one: a
// newer version's new option fails here until it is judged.
func TestOptionsCoverLiveHelp(t *testing.T) {
	specs := optionSpecs()
	index, err := os.ReadFile("testdata/help/INDEX")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(string(index)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			continue
		}
		cmdline, ok := strings.CutPrefix(f[2], "captured from: ")
		if !ok {
			continue
		}
		cmdline, _, _ = strings.Cut(cmdline, " (")
		words := strings.Fields(cmdline)
		if len(words) < 2 || strings.ContainsAny(cmdline, "|;&$<>") || slowHelp[words[0]] {
			continue
		}
		if _, err := osexec.LookPath(words[0]); err != nil {
			continue // captured elsewhere; the stored text is checked above
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, _ := osexec.CommandContext(ctx, words[0], words[1:]...).CombinedOutput()
		cancel()
		ran++
		for _, opt := range helpOptions(string(out)) {
			if !specs[f[0]].lists(opt) {
				t.Errorf("options.txt:%d: %s does not list %s, which `%s` on this machine defines", specs[f[0]].line, f[0], opt, cmdline)
			}
		}
	}
	t.Logf("checked %d blocks against their programs' help here", ran)
}
