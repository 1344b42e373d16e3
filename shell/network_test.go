package shell

import (
	"reflect"
	"strings"
	"testing"
)

// flagCase is a command's arguments and how parseFlags reads them: its
// options as name=value (a name alone has no value) and its operands.
type flagCase struct{ args, opts, ops string }

func checkFlags(t *testing.T, spec flagSpec, tests []flagCase) {
	t.Helper()
	for _, tc := range tests {
		opts, ops := parseFlags(words(tc.args), spec)
		if got := showOpts(opts); got != tc.opts {
			t.Errorf("parseFlags(%q) options = %q, want %q", tc.args, got, tc.opts)
		}
		if got := joinTexts(ops); got != tc.ops {
			t.Errorf("parseFlags(%q) operands = %q, want %q", tc.args, got, tc.ops)
		}
	}
}

func TestParseFlags(t *testing.T) {
	spec := flagSpec{
		short:    "o",
		long:     []string{"--output", "--user"},
		names:    []string{"--verbose", "--pre"},
		roles:    map[string]role{"-T": sendsFile, "--upload-file": sendsFile, "--prefix": writesFile},
		optional: []string{"--pager"},
		abbrev:   true,
	}
	checkFlags(t, spec, []flagCase{
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
		{"--u x", "--upload-file=x", ""},          // ambiguous: the option that matters
		{"--pager db", "--pager", "db"},           // an optional value must be attached
		{"--pager=less db", "--pager=less", "db"},
		{"--verb url", "--verbose", "url"},
		{"-- -o f", "", "-o f"},                   // operands after --
		{"--unknown=x url", "--unknown=x", "url"}, // unknown options keep their spelling
		{"--unknown x url", "--unknown", "x url"},
		{"-", "", "-"}, // stdin
	})
	// openssl, sqlite3 and getopt_long_only (nmap) take long options after
	// one dash.
	single := flagSpec{short: "op", roles: map[string]role{"-iL": sendsFile, "-oN": writesFile, "-out": writesFile}, single: true, abbrev: true}
	checkFlags(t, single, []flagCase{
		{"-iL f", "-iL=f", ""},
		{"-oN=f x", "-oN=f", "x"},
		{"--out f", "-out=f", ""},
		{"-out=f", "-out=f", ""},
		{"-oXf x", "-o=Xf", "x"}, // not a long option: -o with a value
		{"-p 80 x", "-p=80", "x"},
		{"-sV x", "-s -V", "x"},
	})
	// A command's options are its own (npx CMD -c).
	checkFlags(t, flagSpec{short: "c", posix: true}, []flagCase{{"-y eslint -c x", "-y", "eslint -c x"}})
}

func TestConsole(t *testing.T) {
	con := &consoleLang{
		shell: []string{"!"},
		cmds: map[string][]act{
			"get": {{role: writesFile, word: -1}}, "put": {{role: sendsFile, word: 1}},
			"source -e": {{role: runsCommand}}, "fetch": {{role: writesFile, after: "-o"}},
		},
		abbrev: 2,
		seps:   []string{";", "&&"},
	}
	// The words each command applies to.
	files := []struct {
		line string
		want []string
	}{
		{"get remote local", []string{"local"}},
		{"get remote", []string{"remote"}},
		{"ge remote local", []string{"local"}}, // abbreviated
		{"put 'my file' remote", []string{"my file"}},
		{"put -p local remote", []string{"local"}},
		{"fetch x -o out y", []string{"out"}},
		{"ls -l", nil},
	}
	for _, tc := range files {
		words := consoleWords(tc.line)
		var got []string
		if _, acts, n := con.lookup(words); acts != nil {
			got = pick(words[n:], acts[0])
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("console %q applies to %q, want %q", tc.line, got, tc.want)
		}
	}
	// The shell commands a line runs.
	shells := []struct{ line, want string }{
		{"source -e 'rm -rf ~'", "rm -rf ~"},
		{"!rm -rf ~", "rm -rf ~"},
		{"open h; get a b && !ls; x", "ls; x"}, // a shell command takes the rest of the line
		{"get a '|sort -u'", "sort -u"},
		{"get a |cat > f", "cat > f"},
		{"get a b", ""},
	}
	for _, tc := range shells {
		c := &call{name: "x"}
		var e effect
		c.runConsole(&e, con, "x", tc.line)
		var got []string
		for _, n := range c.subs {
			got = append(got, n.script)
		}
		if s := strings.Join(got, " | "); s != tc.want {
			t.Errorf("console %q runs %q, want %q", tc.line, s, tc.want)
		}
	}
}

func TestConsoleSplit(t *testing.T) {
	psql := &consoleLang{backslash: true}
	got := psql.split(`select '\x' \g out \! echo \n`)
	want := []string{`select '\x' `, `\g out `, `\! echo \n`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split = %q, want %q", got, want)
	}
	if got, want := consoleWords(`set editor="vim -x" \o a\ b`), []string{"set", "editor=vim -x", `\o`, "a b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("consoleWords = %q, want %q", got, want)
	}
}

func TestSocatAddress(t *testing.T) {
	tests := []struct {
		addr string
		want socatEnd
	}{
		{"exec:/bin/sh,pty,stderr", socatEnd{typ: "EXEC", param: "/bin/sh", opts: []string{"pty", "stderr"}}},
		{"TCP-LISTEN:1234,fork", socatEnd{typ: "TCP-LISTEN", param: "1234", opts: []string{"fork"}}},
		{"/etc/shadow", socatEnd{typ: "GOPEN", param: "/etc/shadow"}},
		{"-", socatEnd{typ: "-"}},
		{"readline,history=/h", socatEnd{typ: "READLINE", opts: []string{"history=/h"}}},
	}
	for _, tc := range tests {
		if got := socatAddress(tc.addr); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("socatAddress(%q) = %+v, want %+v", tc.addr, got, tc.want)
		}
	}
}

func TestURLName(t *testing.T) {
	for u, want := range map[string]string{
		"https://x.example/a/.bashrc":  ".bashrc",
		"https://x.example/a/b?c=d":    "b",
		"https://x.example":            "index.html",
		"https://x.example/":           "index.html",
		"ftp://x.example/pub/file.tgz": "file.tgz",
	} {
		if got := urlName(u); got != want {
			t.Errorf("urlName(%q) = %q, want %q", u, got, want)
		}
	}
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

func TestHomeWord(t *testing.T) {
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
		got := homeWord(arg{text: tc.text})
		if got.static != (tc.val != "") || got.val != tc.val {
			t.Errorf("homeWord(%s) = %q static=%v, want %q", tc.text, got.val, got.static, tc.val)
		}
	}
}
