package airlock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// RFC 8785 §3.2.2 and §3.2.3: the canonicalization the hash relies on.
func TestCanonicalJSONRFC8785(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			in:   `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			want: `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","` + "\u00f6" + `":"Latin Small Letter O With Diaeresis","` + "\u20ac" + `":"Euro Sign","` + "\U0001F600" + `":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`,
		},
	} {
		got := jsontext.Value(tc.in)
		if err := got.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("canonical form of %s\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestActionCanonicalJSON(t *testing.T) {
	a := Action{Agent: "coder-1", Tool: "write_file", Cwd: "/w", SessionID: "s", RequestedBy: "ann",
		TraceID: "t", CallID: "c", Hints: &Hints{Tier: TierSpend, Reason: "not hashed"},
		Args: json.RawMessage(`{"z": 1.50, "a": "<&>", "n": {"b": [true, null], "a": 1e2}}`)}
	got, err := a.CanonicalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":"coder-1","args":{"a":"<&>","n":{"a":100,"b":[true,null]},"z":1.5},"cwd":"/w","hints":{"needs_human":false,"tier":"spend"},"requested_by":"ann","session_id":"s","tool":"write_file"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	sum, err := a.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if h := sha256Hex(got); sum.String() != h {
		t.Errorf("Hash = %s, want the SHA-256 of the canonical JSON, %s", sum, h)
	}
	// A read-only claim is hashed where it is made, in canonical order; an
	// action without one hashes as it always has (above).
	a.Hints = &Hints{ReadOnly: true}
	got, err = a.CanonicalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"hints":{"needs_human":false,"read_only":true,"tier":""}`; !strings.Contains(string(got), want) {
		t.Errorf("with a read-only claim: %s, want %s", got, want)
	}
	canon := jsontext.Value(bytes.Clone(got))
	if err := canon.Canonicalize(); err != nil || string(canon) != string(got) {
		t.Errorf("not canonical: %s", got)
	}
}

func TestActionValidate(t *testing.T) {
	ok := Action{Agent: "a", Tool: "t"}
	for _, tc := range []struct {
		name string
		a    Action
		want string // substring of the error; "" for valid
	}{
		{"minimal", ok, ""},
		{"null args", Action{Agent: "a", Tool: "t", Args: json.RawMessage("null")}, ""},
		{"no agent", Action{Tool: "t"}, "no agent"},
		{"no tool", Action{Agent: "a"}, "no tool"},
		{"duplicate keys", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"path":"a","path":"b"}`)}, `duplicate object member name "path"`},
		{"nested duplicate", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"x":{"k":1,"k":1}}`)}, "duplicate"},
		{"not an object", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`["a"]`)}, "must be a JSON object"},
		{"truncated", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"a":`)}, "unexpected end"},
		{"trailing data", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{} {}`)}, "unexpected data after the object"},
		{"invalid utf-8", Action{Agent: "a", Tool: "t", Args: json.RawMessage("{\"a\":\"\xff\"}")}, "UTF-8"},
		{"inexact integer", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"n":9007199254740993}`)}, "cannot be represented exactly"},
		{"inexact decimal", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"n":0.30000000000000001}`)}, "cannot be represented exactly"},
		{"overflowing number", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"n":1e1000}`)}, "out of range"},
		{"underflowing number", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"n":1e-1000}`)}, "cannot be represented exactly"},
		{"exact exponent", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"n":2.5e-3}`)}, ""},
		{"exact long decimal", Action{Agent: "a", Tool: "t", Args: json.RawMessage(`{"n":0.1000000000000000}`)}, ""},
		{"too deep", Action{Agent: "a", Tool: "t", Args: json.RawMessage(strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65))}, "nesting deeper than 64"},
		{"control character in agent", Action{Agent: "a\x1b[31m", Tool: "t"}, "control character"},
		{"bidi override in tool", Action{Agent: "a", Tool: "t\u202e"}, "control character"},
		{"bad hint", Action{Agent: "a", Tool: "t", Hints: &Hints{Tier: 42}}, "hints.tier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(ErrorMessage(err), tc.want):
				t.Fatalf("Validate() = %q, want it to contain %q", ErrorMessage(err), tc.want)
			case err != nil && ErrorCode(err) != EINVALID:
				t.Fatalf("code = %s, want %s", ErrorCode(err), EINVALID)
			}
		})
	}
}

func TestDecodeArgsNumbers(t *testing.T) {
	m, err := DecodeArgs([]byte(`{"i":42,"neg":-7,"f":1.5,"e":1e3,"big":1e300}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%T %T %T %T %T", m["i"], m["neg"], m["f"], m["e"], m["big"]),
		"int64 int64 float64 float64 float64"; got != want {
		t.Errorf("types = %s, want %s", got, want)
	}
}

// Property: the hash changes when any hashed field changes, and does not
// change with key order, whitespace, number spelling, trace or call IDs.
func TestHashProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		a := randomAction(r)
		h := mustHash(t, a)

		same := a
		same.Args = reformat(t, a.Args, r)
		same.TraceID, same.CallID = "other-trace", "other-call"
		if a.Hints != nil {
			hints := *a.Hints
			hints.Reason = "a different reason"
			same.Hints = &hints
		}
		if got := mustHash(t, same); got != h {
			t.Fatalf("case %d: hash changed with formatting only:\n%s\n%s", i, a.Args, same.Args)
		}

		for name, mutate := range map[string]func(*Action){
			"agent":        func(a *Action) { a.Agent += "x" },
			"tool":         func(a *Action) { a.Tool += "x" },
			"cwd":          func(a *Action) { a.Cwd += "/x" },
			"session_id":   func(a *Action) { a.SessionID += "x" },
			"requested_by": func(a *Action) { a.RequestedBy += "x" },
			"hints.tier":   func(a *Action) { a.Hints = &Hints{Tier: TierPrivileged} },
			"hints.human":  func(a *Action) { a.Hints = &Hints{NeedsHuman: true} },
			"hints.read":   func(a *Action) { a.Hints = &Hints{ReadOnly: true} },
			"args":         func(a *Action) { a.Args = mutateArgs(t, a.Args, r) },
		} {
			b := a
			mutate(&b)
			if b.Hints != nil && a.Hints != nil && *b.Hints == *a.Hints {
				continue
			}
			if got := mustHash(t, b); got == h {
				t.Fatalf("case %d: hash did not change when %s changed:\n%+v\n%+v", i, name, a, b)
			}
		}
	}
}

func mustHash(t *testing.T, a Action) Hash {
	t.Helper()
	h, err := a.Hash()
	if err != nil {
		t.Fatalf("Hash(%s): %v", a.Args, err)
	}
	return h
}

func randomAction(r *rand.Rand) Action {
	words := []string{"a", "b", "path", "€", "\"q\"", "ü", "x y", "<tag>", "\n"}
	pick := func() string { return words[r.IntN(len(words))] }
	a := Action{Agent: "agent-" + pick(), Tool: "tool." + pick(), Cwd: "/w/" + pick(), SessionID: "s" + pick(), RequestedBy: "p" + pick()}
	a.Agent = strings.ReplaceAll(a.Agent, "\n", "n")
	a.Tool = strings.ReplaceAll(a.Tool, "\n", "n")
	a.SessionID = strings.ReplaceAll(a.SessionID, "\n", "n")
	a.RequestedBy = strings.ReplaceAll(a.RequestedBy, "\n", "n")
	if r.IntN(3) == 0 {
		a.Hints = &Hints{Tier: RiskTier(1 + r.IntN(5)), Reason: pick()}
	}
	a.Args, _ = json.Marshal(randomValue(r, 3, true))
	return a
}

func randomValue(r *rand.Rand, depth int, object bool) any {
	if object || depth > 0 && r.IntN(3) == 0 {
		m := map[string]any{}
		for range 1 + r.IntN(4) {
			m[fmt.Sprintf("k%d%s", r.IntN(50), []string{"", "é", "😀", "Z"}[r.IntN(4)])] = randomValue(r, depth-1, false)
		}
		return m
	}
	switch r.IntN(6) {
	case 0:
		return r.IntN(1000) - 500
	case 1:
		return float64(r.IntN(10000)) / 8
	case 2:
		return []any{r.IntN(3), "s", nil}
	case 3:
		return r.IntN(2) == 0
	case 4:
		return nil
	}
	return fmt.Sprintf("str %d \u2028 \t", r.IntN(100))
}

// reformat re-encodes args with another key order and whitespace, and
// spells some numbers differently, without changing any value.
func reformat(t *testing.T, args json.RawMessage, r *rand.Rand) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeShuffled(&b, v, r)
	return b.Bytes()
}

func writeShuffled(b *bytes.Buffer, v any, r *rand.Rand) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" ,\n ")
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(" : ")
			writeShuffled(b, v[k], r)
		}
		b.WriteString(" }")
	case []any:
		b.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				b.WriteString(" , ")
			}
			writeShuffled(b, e, r)
		}
		b.WriteString("]")
	case float64:
		if v == float64(int64(v)) && r.IntN(2) == 0 {
			fmt.Fprintf(b, "%d.0", int64(v)) // 3 spelled 3.0
		} else {
			fmt.Fprintf(b, "%g", v)
		}
	case string:
		// Escape every non-ASCII character: same string, other bytes.
		b.WriteByte('"')
		for _, c := range v {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteRune(c)
			case c < 0x20 || c > 0x7e:
				if c > 0xffff {
					c -= 0x10000
					fmt.Fprintf(b, "\\u%04x\\u%04x", 0xd800+(c>>10), 0xdc00+(c&0x3ff))
				} else {
					fmt.Fprintf(b, "\\u%04X", c)
				}
			default:
				b.WriteRune(c)
			}
		}
		b.WriteByte('"')
	default:
		kb, _ := json.Marshal(v)
		b.Write(kb)
	}
}

// mutateArgs changes one value somewhere in args.
func mutateArgs(t *testing.T, args json.RawMessage, r *rand.Rand) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	k := keys[r.IntN(len(keys))]
	switch v := m[k].(type) {
	case string:
		m[k] = v + "!"
	case float64:
		m[k] = v + 1
	case bool:
		m[k] = !v
	case nil:
		m[k] = false
	default:
		m[k+"+"] = 1
	}
	b, _ := json.Marshal(m)
	return b
}

// FuzzCanonicalHash checks on arbitrary input that accepted args hash the
// same whatever their formatting, and that the canonical form is stable.
func FuzzCanonicalHash(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, `{"b":[1,2.5,"x"],"a":{"c":null}}`, `{"\u20ac":"x","\r":1}`,
		`{"n":1e30,"m":-0,"o":0.000001}`, `{"s":"\u0000\u001f\"\\/"}`, `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a := Action{Agent: "a", Tool: "t", Args: raw}
		h1, err := a.Hash()
		if verr := a.Validate(); (verr == nil) != (err == nil) {
			t.Fatalf("Validate and Hash disagree on %q: %v / %v", raw, verr, err)
		} else if err != nil {
			if ErrorMessage(err) != ErrorMessage(verr) {
				t.Fatalf("Hash and Validate report different errors for %q:\n%v\n%v", raw, err, verr)
			}
			return // refused input is fine; it must only never hash
		}
		canon, err := a.CanonicalJSON()
		if err != nil {
			t.Fatalf("hashed but no canonical JSON: %v", err)
		}
		v := jsontext.Value(bytes.Clone(canon))
		if err := v.Canonicalize(); err != nil || !bytes.Equal(v, canon) {
			t.Fatalf("canonical form is not stable:\n%s\n%s (%v)", canon, v, err)
		}
		if h := sha256Hex(canon); h != h1.String() {
			t.Fatalf("hash is not the SHA-256 of the canonical form")
		}
		// The directly assembled object is what the JSON library makes of
		// the whole view.
		args := json.RawMessage(bytes.TrimSpace(raw))
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}") // absent, null and {} hash alike
		}
		view, _ := json.Marshal(map[string]any{"agent": a.Agent, "args": args, "cwd": a.Cwd,
			"hints": nil, "requested_by": a.RequestedBy, "session_id": a.SessionID, "tool": a.Tool})
		lib := jsontext.Value(view)
		if err := lib.Canonicalize(); err != nil || !bytes.Equal(lib, canon) {
			t.Fatalf("canonical form differs from the library's:\n%s\n%s (%v)", canon, lib, err)
		}
		// The same args, indented and re-encoded, hash alike.
		var indented bytes.Buffer
		if err := json.Indent(&indented, raw, " ", "\t"); err == nil {
			b := a
			b.Args = indented.Bytes()
			if h2, err := b.Hash(); err != nil || h2 != h1 {
				t.Fatalf("indentation changed the hash (%v)", err)
			}
		}
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Top-level strings are escaped as RFC 8785 says: only quotes, backslashes
// and control characters, the latter as \uXXXX in lowercase or their short
// forms; nothing for HTML or JavaScript.
func TestCanonicalStrings(t *testing.T) {
	a := Action{Agent: "a", Tool: "t", Cwd: "/w/\x0f\"\\€<>\u2028\x7f\n"}
	got, err := a.CanonicalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"agent":"a","args":{},"cwd":"/w/\u000f\"\\€<>` + "\u2028\x7f" + `\n","hints":null,"requested_by":"","session_id":"","tool":"t"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestReadableArgs(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`{"c":"a \u0026\u0026 b"}`, "{\n  \"c\": \"a && b\"\n}", true},
		{`{"q":"say \"hi\"\\"}`, "{\n  \"q\": \"say \\\"hi\\\"\\\\\"\n}", true}, // JSON's own escapes stay
		{`{"e":"\ud83d\ude00"}`, "{\n  \"e\": \"😀\"\n}", true},
		{`{"nl":"a\nb"}`, "{\n  \"nl\": \"a\\nb\"\n}", true}, // control characters stay escaped
		{`{broken`, `{broken`, false},
	} {
		got, ok := ReadableArgs(json.RawMessage(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("ReadableArgs(%s) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestEffectHash(t *testing.T) {
	base := Action{Agent: "coder", Tool: "write_file", Args: json.RawMessage(`{"path":"a.txt","content":"hi"}`),
		SessionID: "s1", RequestedBy: "carol", TraceID: "t1", CallID: "c1", Cwd: "/work"}
	effect := func(a Action) Hash {
		t.Helper()
		h, err := a.EffectHash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := effect(base)
	if h, _ := base.Hash(); h == want {
		t.Fatal("the effect hash equals the action hash")
	}
	same := base
	same.SessionID, same.RequestedBy, same.TraceID, same.CallID = "s2", "dave", "t2", "c2"
	same.Args = json.RawMessage(`{ "content": "hi", "path": "a.txt" }`)
	if effect(same) != want {
		t.Error("another session, requester, trace or key order changed the effect")
	}
	for name, change := range map[string]func(*Action){
		"agent": func(a *Action) { a.Agent = "other" },
		"tool":  func(a *Action) { a.Tool = "edit_file" },
		"args":  func(a *Action) { a.Args = json.RawMessage(`{"path":"b.txt","content":"hi"}`) },
		"cwd":   func(a *Action) { a.Cwd = "/tmp" },
		"hints": func(a *Action) { a.Hints = &Hints{Tier: TierDestructive} },
	} {
		a := base
		change(&a)
		if effect(a) == want {
			t.Errorf("another %s has the same effect", name)
		}
	}
	bad := base
	bad.Args = json.RawMessage(`{"a":1,"a":2}`)
	if _, err := bad.EffectHash(); ErrorCode(err) != EINVALID {
		t.Errorf("duplicate keys: %v, want EINVALID", err)
	}
}

// TestFirstArg holds FirstArg to the member PickArgs would give by the
// same ranking, valid arguments or not.
func TestFirstArg(t *testing.T) {
	summaryArgs := []string{"command", "cmd", "file_path", "path", "url", "notebook_path", "pattern", "query", "ref", "branch"}
	summaryRank := map[string]int{}
	for i, k := range summaryArgs {
		summaryRank[k] = i
	}
	for _, raw := range []string{
		``, `null`, `[]`, `{}`, `{"path":"/a"}`, `{"path":"/a","command":"ls"}`, `{"command":"ls","path":"/a"}`,
		`{"x":1,"url":{"a":[1,2]},"ref":3}`, `{"pa\u0074h":"/esc"}`, `{"path":"/a","path":"/b"}`, `{"branch":1e400,"path":"/a"}`,
		`{"path":"/a","query":1e400}`, `{"path":"/a",`, `{"path":`, `{bad`, ` {"cmd" : "x" } `, `{"cmd":"\ud800"}`,
	} {
		want, wantOK := any(nil), false
		vals := PickArgs([]byte(raw), map[string]bool{"command": true, "cmd": true, "file_path": true, "path": true,
			"url": true, "notebook_path": true, "pattern": true, "query": true, "ref": true, "branch": true})
		for _, k := range summaryArgs {
			if v, ok := vals[k]; ok {
				want, wantOK = v, true
				break
			}
		}
		got, ok := FirstArg([]byte(raw), summaryRank)
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("FirstArg(%s) = %v, %v; want %v, %v", raw, got, ok, want, wantOK)
		}
	}
}

// TestCanonicalArgs: what an adapter forwards is the canonical form the
// action hash covers, and arguments that cannot be read one way only — or
// whose canonical form would change a number — are refused.
func TestCanonicalArgs(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{``, `{}`, ""},
		{`null`, `{}`, ""},
		{` {"b" : 1.50e3, "\u0061":"\u00e9<&>\u2028"} `, `{"a":"é<&>` + "\u2028" + `","b":1500}`, ""},
		{`{"path":"a","PATH":"b"}`, "", `"PATH"`},
		{`{"a":1,"a":2}`, "", "duplicate"},
		{`{"n":9007199254740993}`, "", "cannot be represented exactly"},
		{`[1]`, "", "object"},
		{`{"a":1} x`, "", "after"},
	} {
		got, err := CanonicalArgs(json.RawMessage(c.in))
		switch {
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("%s: %s %v, want %s", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(ErrorMessage(err), c.err)):
			t.Errorf("%s: %s %v, want an error naming %s", c.in, got, err, c.err)
		}
	}
}
