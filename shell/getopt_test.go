package shell

import (
	"reflect"
	"strings"
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

// The spellings of network clients: roles take a value, abbreviations,
// optional values, unknown options.
func TestGetoptRoles(t *testing.T) {
	g := getopt{short: "o", long: names("--output --user"), flags: names("--verbose --pre"), optLong: names("--pager"),
		roles: map[string]role{"-T": sendsFile, "--upload-file": sendsFile, "--prefix": writesFile}}
	checkOpts(t, g, false, []optCase{
		{"-o f url", "-o=f", "url"},
		{"-of url", "-o=f", "url"},
		{"-sSLo f url", "-s -S -L -o=f", "url"},
		{"-sT f", "-s -T=f", ""},
		{"url --output f", "--output=f", "url"},
		{"--output=f url", "--output=f", "url"},
		{"--out f url", "--output=f", "url"},      // an abbreviation
		{"--upl f url", "--upload-file=f", "url"}, // one that matters
		{"--pre x", "--pre", "x"},                 // a flag is never an abbreviation of a longer option
		{"--pref x", "--prefix=x", ""},            // but its own prefix is
		{"--u x", "--u=x", ""},                    // ambiguous: each option it may be (below)
		{"--pager db", "--pager", "db"},           // an optional value must be attached
		{"--pager=less db", "--pager=less", "db"},
		{"--verb url", "--verbose", "url"},
		{"-- -o f", "", "-o f"},                   // operands after --
		{"--unknown=x url", "--unknown=x", "url"}, // unknown options keep their spelling
		{"--unknown x url", "--unknown", "x url"},
		{"-", "", "-"}, // stdin
	})
	if got := g.parse(words("--u x")).values("--upload-file", "--user"); len(got) != 1 || got[0].val != "x" {
		t.Errorf("--u x: the value of an ambiguous abbreviation is %v, want x as --upload-file's or --user's", got)
	}
	// openssl, sqlite3 and getopt_long_only (nmap) take long options after
	// one dash.
	single := getopt{short: "op", roles: map[string]role{"-iL": sendsFile, "-oN": writesFile, "-out": writesFile}, single: true}
	checkOpts(t, single, false, []optCase{
		{"-iL f", "-iL=f", ""},
		{"-oN=f x", "-oN=f", "x"},
		{"--out f", "-out=f", ""},
		{"-out=f", "-out=f", ""},
		{"-oXf x", "-o=Xf", "x"}, // not a long option: -o with a value
		{"-p 80 x", "-p=80", "x"},
		{"-sV x", "-s -V", "x"},
	})
	// A command's options are its own (npx CMD -c).
	checkOpts(t, getopt{short: "c"}, true, []optCase{{"-y eslint -c x", "-y", "eslint -c x"}})
}

func showOpts(opts []option) string {
	var b []string
	for _, o := range opts {
		if o.has {
			b = append(b, o.name+"="+o.val.val)
		} else {
			b = append(b, o.name)
		}
	}
	return strings.Join(b, " ")
}

func TestKnown(t *testing.T) {
	tests := []struct {
		text string
		val  string // "" when the word stays dynamic
	}{
		{`@"$HOME/.ssh/id_rsa"`, "@~/.ssh/id_rsa"},
		{`--post-file="${HOME}/.netrc"`, "--post-file=~/.netrc"},
		{`"$HOME"/.aws/credentials`, "~/.aws/credentials"},
		{`"$OUT"`, ""},
		{`"$HOME/$X"`, ""},
		{`"$(cat f)"`, ""},
	}
	for _, tc := range tests {
		got := known(arg{text: tc.text})
		if got.static != (tc.val != "") || got.val != tc.val {
			t.Errorf("known(%s) = %q static=%v, want %q", tc.text, got.val, got.static, tc.val)
		}
	}
}

// Go's flag package: -name or --name, the value after "=" or in the next
// word, no clusters.
func TestGoOptions(t *testing.T) {
	args := words("-exec=a --exec b -o c -toolexec d -- -exec e")
	g := goOptions("-exec", "-o", "-toolexec")
	if got, want := vals(g.parse(args).values("-exec")), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("-exec = %q, want %q", got, want)
	}
	for line, want := range map[string]bool{"-w": true, "--w x": true, "-w=true": true, "-w=false": false, "-l": false,
		"-- -w": false, "-wl": false} {
		if got := goFlag(g.parse(words(line)), "-w"); got != want {
			t.Errorf("goFlag(%q, -w) = %v, want %v", line, got, want)
		}
	}
}

// Spellings beyond getopt_long's: one-dash long options (find, java, gcc),
// gcc's joined values, options that end the options (python -c), words
// only known at run time.
func TestGetoptSpellings(t *testing.T) {
	checkOpts(t, getopt{short: "o", long: names("-exec -MF --output"), flags: names("-delete"), joined: true}, false,
		[]optCase{
			{"-exec=rm -delete -e x", "-exec=rm -delete -e", "x"}, // -e is no abbreviation
			{"-exec rm x", "-exec=rm", "x"},
			{"-MFdeps.d -MF d2 -objc", "-MF=deps.d -MF=d2 -o=bjc", ""},
			{"--output=a -oa", "--output=a -o=a", ""},
		})
	checkOpts(t, getopt{short: "cm", flags: names("-i"), final: names("-c -m")}, true, []optCase{
		{"-i -c code -x y", "-i -c=code", "-x y"},
		{"-ic code -x", "-i -c=code", "-x"},
		{"-mhttp.server 80", "-m=http.server", "80"},
	})
	dynamic := func(text string) arg { return arg{text: text} }
	g := getopt{short: "o", long: names("--output")}
	p := g.parse([]arg{dynamic(`--output="$F"`), dynamic(`-o/etc/$F`), dynamic(`"$HOME"/.bashrc`), dynamic(`"$X"`)})
	if got := showOpts(p.opts); got != "--output= -o=" || p.dyn {
		t.Errorf("dynamic options %q (dyn %v), want %q", got, p.dyn, "--output= -o=")
	}
	if v, ok := p.values("-o")[0].pathValue(); !ok || v != "/etc/*" {
		t.Errorf("-o/etc/$F names %q, want the pattern /etc/*", v)
	}
	if len(p.ops) != 2 || !p.ops[0].static || p.ops[0].val != "~/.bashrc" || p.ops[1].static {
		t.Errorf("operands %+v, want ~/.bashrc (its only expansion is $HOME) and a dynamic word", p.ops)
	}
	if p := g.parse([]arg{dynamic(`-x"$Y"`)}); !p.dyn {
		t.Error(`-x"$Y" may hold more options`)
	}
	// A wrapper's option only known at run time may be several words: its
	// command starts there.
	if p := g.split([]arg{literal("-x"), dynamic(`-o$Y`), literal("rm")}); len(p.ops) != 2 || !p.dyn {
		t.Errorf("split -x -o$Y rm: operands %d (dyn %v), want the dynamic word and rm", len(p.ops), p.dyn)
	}
}
