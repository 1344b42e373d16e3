package shell

import (
	"reflect"
	"strings"
	"testing"
)

func TestStaticPrefix(t *testing.T) {
	tests := []struct {
		text, want string
		complete   bool
	}{
		{`--output="$F"`, "--output=", false},
		{`-o"$HOME/.bashrc"`, "-o~/.bashrc", true},
		{`-o${HOME}/x$Y`, "-o~/x", false},
		{`'--filter=$X'"$Y"`, "--filter=$X", false},
		{`--a\ b$(x)`, "--a b", false},
		{`$HOMER`, "", false},
		{"--to-command=`x`", "--to-command=", false},
		{`"--checkpoint-a"=x$y`, "--checkpoint-a=x", false},
		{`\$HOME`, "$HOME", true},
	}
	for _, tc := range tests {
		if got, complete := staticPrefix(tc.text); got != tc.want || complete != tc.complete {
			t.Errorf("staticPrefix(%s) = %q, %v; want %q, %v", tc.text, got, complete, tc.want, tc.complete)
		}
	}
}

func TestAwkProgram(t *testing.T) {
	tests := []struct {
		prog string
		want awkOps
	}{
		{`{ print $1 }`, awkOps{}},
		{`/a|b/ { print }`, awkOps{}},
		{`{ if (a > b) print a }`, awkOps{}},
		{`{ print (a > b) }`, awkOps{}},
		{`BEGIN { system("rm -rf ~") }`, awkOps{commands: []string{"rm -rf ~"}}},
		{`BEGIN { system("rm -rf " "~") }`, awkOps{commands: []string{"rm -rf ~"}}},
		{`BEGIN { c = "id"; c | getline x }`, awkOps{commands: []string{"id"}}},
		{`BEGIN { c = "ls " $1; system(c) }`, awkOps{dynamic: true}},
		{`{ system("rm " $1) }`, awkOps{dynamic: true}},
		{`{ print | "sort -u" }`, awkOps{commands: []string{"sort -u"}}},
		{`{ print $0 > "out.txt" }`, awkOps{writes: []string{"out.txt"}}},
		{`{ print $0 >> $1 }`, awkOps{writes: []string{""}}},
		{`{ print > "/dev/stderr" }`, awkOps{}},
		{`BEGIN { while ((getline l < "/etc/passwd") > 0) n++ }`, awkOps{reads: []string{"/etc/passwd"}}},
		{`BEGIN { s = "/inet/tcp/0/example.com/80"; print "x" |& s }`, awkOps{network: true}},
		{`@include "inplace"; { sub(/a/, "b") } 1`, awkOps{inPlace: true}},
		{`@load "filefuncs"; BEGIN { }`, awkOps{code: true}},
		{`# system("x")` + "\n{ print }", awkOps{}},
	}
	for _, tc := range tests {
		got, err := awkProgram(tc.prog, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("awkProgram(%q) = %+v, %v; want %+v", tc.prog, got, err, tc.want)
		}
	}
	if _, err := awkProgram(`{ print "unterminated }`, nil); err == nil {
		t.Error("an unterminated string scans")
	}
}

func TestDcCommands(t *testing.T) {
	tests := map[string][]string{
		"1 2 + p":         nil,
		"!rm -rf ~":       {"rm -rf ~"},
		"[!id]x":          {"id"},
		"1 2 !<a p":       nil,
		"1 p\n!date\n2 p": {"date"},
	}
	for script, want := range tests {
		if got := dcCommands(script); !reflect.DeepEqual(got, want) {
			t.Errorf("dcCommands(%q) = %q, want %q", script, got, want)
		}
	}
}

func TestTarArgs(t *testing.T) {
	tests := map[string]string{
		"xzf a.tgz":            "-x -z -f a.tgz",
		"cIf prog a.tar src":   "-c -I prog -f a.tar src",
		"-xf a.tar":            "-xf a.tar",
		"xf a.tar -C /tmp":     "-x -f a.tar -C /tmp",
		"x/f a.tar":            "x/f a.tar",
		"cvf - --to-command x": "-c -v -f - --to-command x",
	}
	for in, want := range tests {
		var args []arg
		for _, w := range strings.Fields(in) {
			args = append(args, literal(w))
		}
		var got []string
		for _, a := range tarArgs(args) {
			got = append(got, a.val)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("tarArgs(%q) = %q, want %q", in, strings.Join(got, " "), want)
		}
	}
}
