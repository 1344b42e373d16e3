package shell

import (
	"reflect"
	"testing"
)

func TestGetopt(t *testing.T) {
	g := getopt{short: "ot", optShort: "i", long: names("--output --target-directory"), optLong: names("--backup"),
		flags: names("--verbose --version")}
	tests := []struct {
		args []string
		opts []string // name=value, or name alone
		ops  []string
	}{
		{[]string{"-o", "f", "x"}, []string{"-o=f"}, []string{"x"}},
		{[]string{"-vof", "x"}, []string{"-v", "-o=f"}, []string{"x"}},
		{[]string{"-vo", "f", "x"}, []string{"-v", "-o=f"}, []string{"x"}},
		{[]string{"x", "--output=f"}, []string{"--output=f"}, []string{"x"}},
		{[]string{"--outp", "f", "x"}, []string{"--output=f"}, []string{"x"}},
		{[]string{"--ta=d", "x"}, []string{"--target-directory=d"}, []string{"x"}},
		{[]string{"--ver", "x"}, []string{"--ver"}, []string{"x"}}, // ambiguous: an error for the program
		{[]string{"--backup", "x"}, []string{"--backup"}, []string{"x"}},
		{[]string{"--backup=t", "x"}, []string{"--backup=t"}, []string{"x"}},
		{[]string{"-i", "x"}, []string{"-i"}, []string{"x"}},
		{[]string{"-ie", "x"}, []string{"-i=e"}, []string{"x"}},
		{[]string{"--", "-o", "x"}, nil, []string{"-o", "x"}},
		{[]string{"-", "x"}, nil, []string{"-", "x"}},
	}
	for _, tc := range tests {
		args := make([]arg, len(tc.args))
		for i, a := range tc.args {
			args[i] = literal(a)
		}
		p := g.parse(args)
		var opts, ops []string
		for _, o := range p.opts {
			if o.has {
				opts = append(opts, o.name+"="+o.val.val)
			} else {
				opts = append(opts, o.name)
			}
		}
		for _, o := range p.ops {
			ops = append(ops, o.val)
		}
		if !reflect.DeepEqual(opts, tc.opts) || !reflect.DeepEqual(ops, tc.ops) {
			t.Errorf("parse(%q) = %q, %q; want %q, %q", tc.args, opts, ops, tc.opts, tc.ops)
		}
	}
}

func TestStaticPrefix(t *testing.T) {
	tests := map[string]string{
		`--output="$F"`:        "--output=",
		`-o"$HOME/.bashrc"`:    "-o~/.bashrc",
		`-o${HOME}/x$Y`:        "-o~/x",
		`'--filter=$X'"$Y"`:    "--filter=$X",
		`--a\ b$(x)`:           "--a b",
		`$HOMER`:               "",
		"--to-command=`x`":     "--to-command=",
		`"--checkpoint-a"=x$y`: "--checkpoint-a=x",
	}
	for text, want := range tests {
		if got := staticPrefix(text); got != want {
			t.Errorf("staticPrefix(%s) = %q, want %q", text, got, want)
		}
	}
}
