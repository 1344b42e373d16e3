package shell

import (
	"reflect"
	"strings"
	"testing"
)

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
