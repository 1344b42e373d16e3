package shell

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
)

// The GTFOBins corpus (testdata/gtfobins): for every program of the table
// that GTFOBins lists, a command per function it lists (run a shell or a
// command, read or write files, upload, download, reverse or bind shells,
// load a library) with the lowest tier Airlock may give it. Each family's
// cases are in FAMILY.txt, in sections:
//
//	## program
//	min-tier<TAB>function<TAB>script
//
// function is a GTFOBins function, or "also" for a case of the same family
// that GTFOBins does not list. Scripts are escaped as in corpus.txt. The
// commands are written for Airlock, not copied: each does what the GTFOBins
// entry describes, aimed at what an agent must not do unasked (read
// ~/.ssh/id_rsa, write ~/.bashrc, reach attacker.example).

// gtfobinsFunctions are the functions GTFOBins lists, and "also".
var gtfobinsFunctions = []string{"shell", "command", "reverse-shell", "bind-shell", "file-write", "file-read",
	"upload", "download", "library-load", "privilege-escalation", "inherit", "also"}

type gtfobinsEntry struct {
	family    string
	functions []string
}

type gtfobinsCase struct {
	file      string
	line      int
	program   string
	tier      airlock.RiskTier
	function  string
	script    string
	rawScript string
}

func loadGTFOBinsIndex(t *testing.T) map[string]gtfobinsEntry {
	t.Helper()
	index := map[string]gtfobinsEntry{}
	eachLine(t, "testdata/gtfobins/INDEX", func(n int, line string) {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[2] == "" {
			t.Fatalf("INDEX:%d: want program<TAB>family<TAB>functions", n)
		}
		index[f[0]] = gtfobinsEntry{family: f[1], functions: strings.Fields(f[2])}
	})
	return index
}

func loadGTFOBinsCorpus(t *testing.T, family string) []gtfobinsCase {
	t.Helper()
	file := filepath.Join("testdata/gtfobins", family+".txt")
	var cases []gtfobinsCase
	program := ""
	eachLine(t, file, func(n int, line string) {
		if name, ok := strings.CutPrefix(line, "## "); ok {
			program = strings.TrimSpace(name)
			return
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || f[2] == "" || program == "" {
			t.Fatalf("%s:%d: want min-tier<TAB>function<TAB>script under a ## program line", file, n)
		}
		tier, err := airlock.ParseRiskTier(f[0])
		if err != nil {
			t.Fatalf("%s:%d: %v", file, n, err)
		}
		if !slices.Contains(gtfobinsFunctions, f[1]) {
			t.Fatalf("%s:%d: function %q is not one of %v", file, n, f[1], gtfobinsFunctions)
		}
		cases = append(cases, gtfobinsCase{file: file, line: n, program: program, tier: tier, function: f[1],
			script: shellUnescape(f[2]), rawScript: f[2]})
	})
	return cases
}

// eachLine calls f with every line of a file that is neither blank nor a
// comment ("# ").
func eachLine(t *testing.T, file string, f func(n int, line string)) {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line == "#" || strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "#\t") {
			continue
		}
		f(n, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestGTFOBins(t *testing.T) {
	index := loadGTFOBinsIndex(t)
	families := map[string]bool{}
	for _, e := range index {
		families[e.family] = true
	}
	for family := range families {
		t.Run(family, func(t *testing.T) {
			cases := loadGTFOBinsCorpus(t, family)
			covered := map[string]map[string]bool{}
			for _, tc := range cases {
				if covered[tc.program] == nil {
					covered[tc.program] = map[string]bool{}
				}
				covered[tc.program][tc.function] = true
				cmds, err := analyseShell(tc.script, "/home/u/project")
				if err != nil {
					t.Errorf("%s:%d: %q: %v", tc.file, tc.line, tc.rawScript, err)
					continue
				}
				if tier, class := shellOverall(cmds); tier < tc.tier {
					t.Errorf("%s:%d: %s %s: %q is %s %s, want at least %s\n%v", tc.file, tc.line, tc.program,
						tc.function, tc.rawScript, tier, class, tc.tier, shellEntries(cmds))
				}
			}
			for _, program := range slices.Sorted(maps.Keys(index)) {
				e := index[program]
				if e.family != family {
					continue
				}
				if programs()[baseName(program)] == nil {
					t.Errorf("INDEX: %s is not in the table", program)
				}
				for _, fn := range e.functions {
					if !covered[program][fn] {
						t.Errorf("%s.txt: no %s case for %s (GTFOBins lists it)", family, fn, program)
					}
				}
			}
			for program := range covered {
				if e, ok := index[program]; ok && e.family != family {
					t.Errorf("%s.txt: %s belongs in %s.txt", family, program, e.family)
				}
			}
		})
	}
}
