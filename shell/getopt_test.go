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

// optCase is a command line and how a getopt reads it: its options as
// name=value (a name alone has no value) and its operands.
type optCase struct{ args, opts, ops string }

// checkOpts reads each case with g, with options anywhere (parse) or
// only before the first operand (split).
func checkOpts(t *testing.T, g getopt, split bool, tests []optCase) {
	t.Helper()
	for _, tc := range tests {
		p := g.parse(words(tc.args))
		if split {
			p = g.split(words(tc.args))
		}
		if got := showOpts(p.opts); got != tc.opts {
			t.Errorf("%q: options %q, want %q", tc.args, got, tc.opts)
		}
		if got := joinTexts(p.ops); got != tc.ops {
			t.Errorf("%q: operands %q, want %q", tc.args, got, tc.ops)
		}
	}
}

// A wrapper's options end at its command; getopt_long takes any
// unambiguous prefix of a long option for it.
func TestGetoptSplit(t *testing.T) {
	g := getopt{short: "ks", long: names("--kill-after --signal"), flags: names("--foreground --verbose --version"),
		optShort: "i"}
	checkOpts(t, g, true, []optCase{
		{"--sig KILL 5 rm", "--signal=KILL", "5 rm"},
		{"--sig=KILL 5 rm", "--signal=KILL", "5 rm"},
		{"--k 1 5 rm", "--kill-after=1", "5 rm"},
		{"--ver 5 rm", "--ver", "5 rm"}, // ambiguous: the program refuses it
		{"--verb 5 rm", "--verbose", "5 rm"},
		{"5 rm --sig", "", "5 rm --sig"},                  // the command's options, not the wrapper's
		{"-s --sig 5 rm --sig", "-s=--sig", "5 rm --sig"}, // the value of -s, not an option
		{"-tiX sh", "-t -i=X", "sh"},
		{"-iX sh", "-i=X", "sh"},
		{"-i sh", "-i", "sh"},
		{"-sKILL 5 rm", "-s=KILL", "5 rm"},
	})
	// Anywhere before "--" for a program that takes options anywhere.
	checkOpts(t, g, false, []optCase{{"x --fore y -- --sig", "--foreground", "x y --sig"}})
	checkOpts(t, getopt{short: "cO", long: names("--command --log-out"), flags: names("--quiet --append")}, false,
		[]optCase{{"out.txt --comm ls -qO log -- -c x", "--command=ls -q -O=log", "out.txt -c x"}})
}
