package shell

import (
	"reflect"
	"strings"
	"testing"
)

func argWords(s string) []arg {
	var out []arg
	for _, w := range strings.Fields(s) {
		out = append(out, literal(w))
	}
	return out
}

func argValues(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.val
	}
	return out
}

func TestGetoptLongSpell(t *testing.T) {
	g := getoptLong{spec: getopt{short: "ks", long: []string{"--kill-after", "--signal"}, exact: true},
		flags:    []string{"--foreground", "--verbose", "--version"},
		optional: map[byte]string{'i': "--replace"}}
	tests := []struct {
		args    string
		leading bool
		want    string
	}{
		{"--sig KILL 5 rm", true, "--signal KILL 5 rm"},
		{"--sig=KILL 5 rm", true, "--signal=KILL 5 rm"},
		{"--k 1 5 rm", true, "--kill-after 1 5 rm"},
		// Ambiguous: the program refuses it, so it stays.
		{"--ver 5 rm", true, "--ver 5 rm"},
		{"--verb 5 rm", true, "--verbose 5 rm"},
		// Only the wrapper's own options, not its command's.
		{"5 rm --sig", true, "5 rm --sig"},
		// The value of -s, not an option.
		{"-s --sig 5 rm --sig", true, "-s --sig 5 rm --sig"},
		// Anywhere before "--" for a program that takes options anywhere.
		{"x --fore y -- --sig", false, "x --foreground y -- --sig"},
		{"-tiX sh", true, "-t --replace=X sh"},
		{"-iX sh", true, "--replace=X sh"},
		{"-i sh", true, "-i sh"},
		{"-sKILL 5 rm", true, "-sKILL 5 rm"},
	}
	for _, tc := range tests {
		got := strings.Join(argValues(g.spell(argWords(tc.args), tc.leading)), " ")
		if got != tc.want {
			t.Errorf("spell(%q, %v) = %q, want %q", tc.args, tc.leading, got, tc.want)
		}
	}
}

func TestGetoptLongParse(t *testing.T) {
	g := getoptLong{spec: getopt{short: "cO", long: []string{"--command", "--log-out"}, exact: true},
		flags: []string{"--quiet", "--append"}}
	opts, ops := g.parse(argWords("out.txt --comm ls -qO log -- -c x"))
	var names []string
	for _, o := range opts {
		names = append(names, o.name+"="+o.val.val)
	}
	if want := []string{"--command=ls", "-q=", "-O=log"}; !reflect.DeepEqual(names, want) {
		t.Errorf("options %v, want %v", names, want)
	}
	if got, want := argValues(ops), []string{"out.txt", "-c", "x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("operands %v, want %v", got, want)
	}
}

func TestFdExec(t *testing.T) {
	tests := []struct {
		word  string
		ok    bool
		first string
	}{
		{"-x", true, ""}, {"--exec", true, ""}, {"-X", true, ""}, {"--exec-batch", true, ""},
		{"-Hx", true, ""}, {"-xrm", true, "rm"}, {"--exec=rm", true, "rm"},
		{"-ex", false, ""}, {"-H", false, ""}, {"x", false, ""}, {"--extension", false, ""},
	}
	for _, tc := range tests {
		cmd, ok := fdExec(literal(tc.word))
		first := ""
		if len(cmd) > 0 {
			first = cmd[0].val
		}
		if ok != tc.ok || first != tc.first {
			t.Errorf("fdExec(%q) = %q, %v; want %q, %v", tc.word, first, ok, tc.first, tc.ok)
		}
	}
}

func TestSysctlPath(t *testing.T) {
	tests := map[string]string{
		"net.ipv4.ip_forward":        "/proc/sys/net/ipv4/ip_forward",
		"net/ipv4/ip_forward":        "/proc/sys/net/ipv4/ip_forward",
		"net.ipv4.conf.eth0/1.rp":    "/proc/sys/net/ipv4/conf/eth0.1/rp",
		"/../../etc/shadow":          "/etc/shadow",
		"kernel/../../../etc/shadow": "/etc/shadow",
		"kernel.//.//.//.etc.shadow": "/etc/shadow",
	}
	for key, want := range tests {
		if got := sysctlPath(key); got != want {
			t.Errorf("sysctlPath(%q) = %q, want %q", key, got, want)
		}
	}
}
