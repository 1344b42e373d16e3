package shell

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSedScript(t *testing.T) {
	tests := []struct {
		script string
		want   sedOps
	}{
		{"s/a/b/g", sedOps{}},
		{"1!G;h;$!d", sedOps{}},
		{"/start/,/end/{/end/!p}", sedOps{}},
		{"e rm -rf ~", sedOps{commands: []string{"rm -rf ~"}}},
		{"1e exec sh", sedOps{commands: []string{"exec sh"}}},
		{"$!{e id\n}", sedOps{commands: []string{"id"}}},
		{"e", sedOps{input: true}},
		{"s/x/y/e", sedOps{input: true}},
		{"s/x/y/ge", sedOps{input: true}},
		{"w out.txt", sedOps{writes: []string{"out.txt"}}},
		{"/x/W out; p", sedOps{writes: []string{"out; p"}}}, // the name runs to the end of the line
		{"1s/.*/DATA/w ~/.bashrc", sedOps{writes: []string{"~/.bashrc"}}},
		{"s|a|b|2w /tmp/x\np", sedOps{writes: []string{"/tmp/x"}}},
		{"r ~/.ssh/id_rsa", sedOps{reads: []string{"~/.ssh/id_rsa"}}},
		{"$R /etc/shadow", sedOps{reads: []string{"/etc/shadow"}}},
		{"a hello; e rm -rf /", sedOps{}}, // text, not a command
		{"i\\\nfirst\\\nsecond\ne id", sedOps{commands: []string{"id"}}},
		{"y/abc/xyz/;w f", sedOps{writes: []string{"f"}}},
		{`s/\//e/w f`, sedOps{writes: []string{"f"}}}, // an escaped delimiter
		{`\,x,e id`, sedOps{commands: []string{"id"}}},
		{"0~3e date", sedOps{commands: []string{"date"}}},
		{":a;N;$!ba;s/\\n/ /g", sedOps{}},
		{"# e rm -rf /\np", sedOps{}},
		{"/[/]/e rm -rf ~", sedOps{commands: []string{"rm -rf ~"}}}, // the delimiter inside brackets
		{"s/[/]/x/e", sedOps{input: true}},
		{"/[]/]/w f", sedOps{writes: []string{"f"}}},
		{"/[[:alpha:]/]/e id", sedOps{commands: []string{"id"}}},
		{`\,[,],e id`, sedOps{commands: []string{"id"}}},
	}
	for _, tc := range tests {
		got, err := sedScript(tc.script)
		if err != nil {
			t.Errorf("sedScript(%q): %v", tc.script, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("sedScript(%q) = %+v, want %+v", tc.script, got, tc.want)
		}
	}
	for _, bad := range []string{"s/a/b", "k", "y/ab/", "/unclosed"} {
		if _, err := sedScript(bad); err == nil {
			t.Errorf("sedScript(%q): no error", bad)
		}
	}
}

// The scripts that sedScript says run or write really do, under GNU sed,
// and those it says do not, do not.
func TestSedScriptAgainstGNUSed(t *testing.T) {
	sed, err := osexec.LookPath("sed")
	if err == nil {
		if out, verr := osexec.Command(sed, "--version").Output(); verr != nil || !strings.Contains(string(out), "GNU sed") {
			err = errors.New("sed is not GNU sed")
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("GNU sed is needed: %v", err)
		}
		t.Skip(err)
	}
	for _, script := range []string{
		"e touch ran", "1e touch ran", "s/.*/touch ran/e", "w ran", "1s/x/y/w ran",
		"/x/W ran", "s/a/b/g", "a e touch ran", "y/ab/ba/", "# w ran", "/[/x]/e touch ran", "s/[/]*x/touch ran/e",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := osexec.Command(sed, "-n", script, "in")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sed -n %q: %v\n%s", script, err, out)
		}
		_, statErr := os.Stat(filepath.Join(dir, "ran"))
		ran := statErr == nil
		ops, err := sedScript(script)
		if err != nil {
			t.Fatalf("sedScript(%q): %v", script, err)
		}
		said := len(ops.commands) > 0 || ops.input || len(ops.writes) > 0
		if ran != said {
			t.Errorf("sed -n %q: GNU sed ran or wrote: %v; sedScript says %+v", script, ran, ops)
		}
	}
}
