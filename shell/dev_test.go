package shell

import (
	"reflect"
	"strings"
	"testing"
)

// words turns a command line split on spaces into args, for the parsers'
// tests.
func words(line string) []arg {
	var out []arg
	for _, w := range strings.Fields(line) {
		out = append(out, literal(w))
	}
	return out
}

func vals(args []arg) []string {
	out := []string{}
	for _, a := range args {
		out = append(out, a.val)
	}
	return out
}

func TestMakeCalls(t *testing.T) {
	tests := []struct {
		text, fn string
		want     []string
	}{
		{"$(shell rm -rf x)", "shell", []string{"rm -rf x"}},
		{"X := ${shell echo $(Y)} $(shell id)", "shell", []string{"id", "echo $(Y)"}},
		{"$(shell echo (a) b)", "shell", []string{"echo (a) b"}},
		{"$(shellx y) $(file >out,x)", "shell", nil},
		{"$(file >out,x) $(file <in)", "file", []string{">out,x", "<in"}},
		{"$(shell unclosed", "shell", []string{"unclosed"}},
	}
	for _, tc := range tests {
		if got := makeCalls(tc.text, tc.fn); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("makeCalls(%q, %q) = %q, want %q", tc.text, tc.fn, got, tc.want)
		}
	}
}

func TestTomlStrings(t *testing.T) {
	tests := []struct {
		v    string
		want []string
	}{
		{`"rm -rf x"`, []string{"rm -rf x"}},
		{`['rm', "-rf", 'x']`, []string{"rm", "-rf", "x"}},
		{`/bin/sh`, []string{"/bin/sh"}},
		{` [sh] `, []string{"sh"}},
		{`"unclosed`, []string{"unclosed"}},
	}
	for _, tc := range tests {
		if got := tomlStrings(tc.v); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("tomlStrings(%q) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestJoinedValues(t *testing.T) {
	args := words("-o a -ob -MF c -MFd -aux-info=e -objc")
	got := vals(joinedValues(args, "-o", "-MF", "-aux-info"))
	want := []string{"a", "b", "c", "d", "e", "bjc"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("joinedValues = %q, want %q", got, want)
	}
}

func TestLangParse(t *testing.T) {
	l := lang{name: "x", code: "e", values: "rI", libs: "r", inPlace: true, interactive: "d",
		long: []string{"--out"}, writes: []string{"--out"}, listen: []string{"--listen"}}
	tests := []struct {
		line string
		want langParse
	}{
		{"-rsocket -e x y", langParse{code: true, libs: words("socket"), ops: words("y")}},
		{"-r socket script a", langParse{libs: words("socket"), ops: words("script a")}},
		{"-pi.bak -e x f", langParse{code: true, inPlace: true, ops: words("f")}},
		{"-d script", langParse{interactive: true, ops: words("script")}},
		{"--out f --listen=1 s", langParse{listen: "--listen", writes: words("f"), ops: words("s")}},
		{"--version", langParse{info: true, ops: []arg{}}},
	}
	for _, tc := range tests {
		got := l.parse(words(tc.line))
		if got.ops == nil {
			got.ops = []arg{}
		}
		if tc.want.ops == nil {
			tc.want.ops = []arg{}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}
