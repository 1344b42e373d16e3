package airlock_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlock-dev/airlock"
)

func TestCheckJSON(t *testing.T) {
	deep := strings.Repeat("[", airlock.MaxJSONDepth+1) + strings.Repeat("]", airlock.MaxJSONDepth+1)
	for _, c := range []struct {
		name, doc string
		mention   []string // "" : accepted
	}{
		{"an object", `{"name":"x","arguments":{"path":"a","Path2":1}}`, nil},
		{"a string", `"x"`, nil},
		{"white space around", " \n{\"a\":[1,2,{\"a\":3}]}\t\n", nil},
		{"one name in sibling objects", `[{"a":1},{"a":2,"b":{"a":3}}]`, nil},
		{"names that only look alike", `{"path":1,"path_":2,"pаth":3}`, nil}, // the third has a Cyrillic а
		{"exact repeat", `{"a":1,"a":2}`, []string{`duplicate member "a" at /a (byte offset 7)`}},
		{"repeat in a nested object", `{"pad":{"a":{"k":1,"k":2}}}`, []string{`"k"`, "/pad/a/k"}},
		{"repeat in an array's object", `{"x":[{"m":1},{"m":1,"M":2}]}`, []string{`"M"`, `"m"`, "/x/1/M", "only in case"}},
		{"ASCII case", `{"name":"a","NAME":"b"}`, []string{`"NAME"`, "/NAME", `differs from "name"`}},
		{"escaped repeat", `{"path":"a","\u0070ath":"b"}`, []string{`"path"`, "/path"}},
		{"escaped case", `{"path":"a","\u0050ATH":"b"}`, []string{`"PATH"`}},
		{"the Kelvin sign", `{"mask":1,"mas\u212a":2}`, []string{`"mas\u212a"`, `"/mas\u212a"`, `differs from "mask"`}},
		{"the long s", `{"args":1,"argſ":2}`, []string{`"arg\u017f"`}},
		{"the long s before", `{"ſ":1,"S":2}`, []string{`"S"`}},
		{"dotted capital I", `{"id":1,"İd":2}`, []string{`"\u0130d"`}},
		{"dotless small i", `{"ID":1,"ıd":2}`, []string{`"\u0131d"`}},
		{"final sigma", `{"σ":1,"ς":2}`, []string{`"\u03c2"`}},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", []string{"UTF-8", "/a"}},
		{"invalid UTF-8 in a name", "{\"\xfe\":1}", []string{"UTF-8"}},
		{"lone surrogate", `{"\ud800":1,"\ud801":2}`, []string{"surrogate"}},
		{"trailing data", `{"a":1} {"a":2}`, []string{"after top-level value", "offset 7"}},
		{"trailing garbage", `{"a":1}x`, []string{"after top-level value"}},
		{"empty", ``, []string{"empty"}},
		{"only white space", " \n ", []string{"empty"}},
		{"truncated", `{"a":`, []string{"malformed JSON", "unexpected EOF"}},
		{"not JSON", `hello`, []string{"malformed JSON", "invalid character 'h'"}},
		{"too deep", deep, []string{"nested deeper than " + strconv.Itoa(airlock.MaxJSONDepth)}},
		{"a control character in a name", "{\"a\\n\":1,\"A\\n\":2}", []string{`"A\n"`, `"/A\n"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := airlock.CheckJSON([]byte(c.doc))
			if c.mention == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if airlock.ErrorCode(err) != airlock.EINVALID {
				t.Errorf("code %s, want %s", airlock.ErrorCode(err), airlock.EINVALID)
			}
			for _, m := range c.mention {
				if !strings.Contains(airlock.ErrorMessage(err), m) {
					t.Errorf("%q does not say %s", airlock.ErrorMessage(err), m)
				}
			}
		})
	}
}

// TestCheckJSONFoldsAsEncodingJSON: every pair of names encoding/json
// matches to one field — the pair a decision read through it could be
// fooled by — is refused by CheckJSON, over every cased rune.
func TestCheckJSONFoldsAsEncodingJSON(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Other_Lowercase, r) && !unicode.Is(unicode.Other_Uppercase, r) {
			continue
		}
		others := map[rune]bool{unicode.ToLower(r): true, unicode.ToUpper(r): true, unicode.ToTitle(r): true,
			unicode.ToUpper(unicode.ToLower(r)): true, unicode.ToLower(unicode.ToUpper(r)): true}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			others[f] = true
		}
		for o := range others {
			if o == r {
				continue
			}
			field, name := "x"+string(o), "x"+string(r)
			typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + field + `"`)}})
			v := reflect.New(typ)
			doc, _ := json.Marshal(map[string]int{name: 1})
			if err := json.Unmarshal(doc, v.Interface()); err != nil || v.Elem().Field(0).Int() != 1 {
				continue // encoding/json keeps them apart
			}
			n++
			both, _ := json.Marshal(map[string]int{field: 1, name: 2})
			if airlock.CheckJSON(both) == nil {
				t.Errorf("encoding/json reads %q (%U) as %q (%U), CheckJSON lets %s through", name, r, field, o, both)
			}
		}
	}
	if n < 2000 {
		t.Errorf("only %d pairs folded: the test did not reach encoding/json's folding", n)
	}
}

// FuzzCheckJSON: CheckJSON never panics, and what it accepts every strict
// reader accepts too: one valid JSON value, with no name repeated.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"A":1}}`, `[{"k":1,"\u212a":2}]`, `{"ſ":1,"s":2}`, `"x"`, `{"a":[1,{"b":null}]} `, "{\"\xff\":1}", `{"\ud800":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if airlock.CheckJSON(data) != nil {
			return
		}
		if !json.Valid(data) || !jsontext.Value(data).IsValid() {
			t.Fatalf("CheckJSON accepted %q, which a strict reader refuses", data)
		}
	})
}

// BenchmarkCheckJSON: the strict read every adapter makes of its input,
// on a tool call's params as an MCP client sends them (small) and with a
// file's content in the arguments (large).
func BenchmarkCheckJSON(b *testing.B) {
	small := []byte(`{"name":"write_file","arguments":{"path":"/work/app/notes.txt","content":"hello","options":{"mode":"0644","create":true}},"_meta":{"progressToken":"t-1"}}`)
	large := []byte(`{"name":"write_file","arguments":{"path":"/work/app/big.txt","content":"` + strings.Repeat("lorem ipsum ", 8<<10) + `"}}`)
	for _, c := range []struct {
		name string
		doc  []byte
	}{{"small", small}, {"large", large}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			b.ReportAllocs()
			for b.Loop() {
				if err := airlock.CheckJSON(c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
