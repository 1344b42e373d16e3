package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"
)

func TestLoadPolicyYAMLFeatures(t *testing.T) {
	p := mustLoad(t, "anchors.yaml", `
name: anchors
rules:
  - &writes {id: writes, tool: write_file, outcome: !!str ask, reviewers: [ann]}
  - {id: reads, tool: Read, outcome: auto}
tests:
  - name: anchors and tags work
    action: {agent: a, tool: write_file}
    expect: {outcome: ask, rule: writes}
`)
	if p.Name() != "anchors" || len(p.rules) != 2 {
		t.Fatalf("got %s with %d rules", p, len(p.rules))
	}
	if empty := mustLoad(t, "empty.yaml", ""); len(empty.rules) != 0 || empty.Layer() != airlock.LayerProject {
		t.Fatalf("empty policy: %d rules, layer %s", len(empty.rules), empty.Layer())
	}
	if named := mustLoad(t, "dir/base.yaml", "rules: []\n"); named.Name() != "base" {
		t.Fatalf("name from the file = %q, want base", named.Name())
	}
}

func TestLoadPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"two documents", "default: ask\n---\ndefault: auto\n", "p.yaml:3:1: a policy file holds one YAML document"},
		{"merge key", "rules:\n  - <<: {tool: a}\n    outcome: ask\n", "merge keys (<<) are not supported"},
		{"unknown alias", "rules:\n  - *nope\n", "p.yaml:2:5:"},
		{"not a mapping", "- a\n- b\n", "p.yaml:1:1: policy: expected a mapping (key: value), got a list"},
		{"duplicate key", "default: ask\ndefault: auto\n", "p.yaml:2:1: mapping key \"default\" already defined"},
		{"bad version", "version: 2\n", "unsupported policy version 2"},
		{"bad tag", "default: !custom ask\n", "unsupported tag !custom"},
		{"bad glob", "rules:\n  - {tool: \"[a\", outcome: ask}\n", "bad pattern"},
		{"condition type", "rules:\n  - {tool: a, when: '\"x\"', outcome: ask}\n", "condition must be a bool"},
		{"condition too long", "rules:\n  - {tool: a, outcome: ask, when: '" + strings.Repeat("true && ", 600) + "true'}\n", "size"},
		{"classifier without tool", "classifiers:\n  - {class: x, tier: read}\n", "a classifier needs tool or command"},
		{"test without expect", "tests:\n  - {action: {agent: a, tool: t}}\n", "a test needs expect"},
		{"test with invalid action", "tests:\n  - {action: {agent: a}, expect: ask}\n", "action has no tool"},
		{"empty tool list", "rules:\n  - {tool: [], outcome: ask}\n", "needs at least one name or pattern"},
		{"too big", "# " + strings.Repeat("x", MaxPolicyBytes) + "\n", "more than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPolicy("p.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("loaded; want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
			if airlock.ErrorCode(err) != airlock.EINVALID {
				t.Fatalf("code %s, want %s", airlock.ErrorCode(err), airlock.EINVALID)
			}
		})
	}
}

// The conditions' positions point into the file, for every scalar style.
func TestConditionErrorPositions(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"rules:\n  - tool: a\n    outcome: ask\n    when: args.x ==\n", "p.yaml:4:"},
		{"rules:\n  - tool: a\n    outcome: ask\n    when: \"args.x.foo(\"\n", "p.yaml:4:"},
		{"rules:\n  - tool: a\n    outcome: ask\n    when: |\n      args.x == 1 &&\n      nope(1)\n", "p.yaml:6:11:"},
	} {
		_, err := LoadPolicy("p.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error for\n%s\n= %v, want it to start with %q", tc.src, err, tc.want)
		}
	}
}

// The published schema accepts every policy of the golden files, rejects
// what the loader rejects for being unknown, and knows the same fields.
func TestPolicySchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	schema, err := c.Compile("../schema/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	validate := func(name string, src []byte) error {
		var v any
		if err := yaml.Unmarshal(src, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Round-trip through JSON so the schema sees JSON types.
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return schema.Validate(doc)
	}
	files, _ := filepath.Glob("testdata/policy/*.txtar")
	checked := 0
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		broken := slices.ContainsFunc(ar.Files, func(f txtar.File) bool { return f.Name == "error" })
		for _, f := range ar.Files {
			if !strings.HasSuffix(f.Name, ".yaml") || f.Name == "cases.yaml" {
				continue
			}
			if broken {
				continue // syntax and value errors the schema may or may not see
			}
			if err := validate(file+"/"+f.Name, f.Data); err != nil {
				t.Errorf("%s/%s does not validate: %v", file, f.Name, err)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("validated only %d policies", checked)
	}
	for _, bad := range []string{"rulez: []\n", "rules:\n  - {tool: a, outcom: ask}\n", "default: atuo\n", "floors: {tiers: {huge: ask}}\n",
		"default: {max_tier: spend}\n", "default: {outcome: auto, max_tier: huge}\n", "default: {outcome: auto, ceiling: spend}\n"} {
		if err := validate("bad", []byte(bad)); err == nil {
			t.Errorf("schema accepts %q", bad)
		}
	}

	raw, err := os.ReadFile("../schema/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		def    string
		fields []string
	}{
		{"", policyFields}, {"floors", floorFields}, {"agent", agentFields}, {"classifier", classifierFields},
		{"rule", ruleFields}, {"test", testFields}, {"action", actionFields}, {"default", defaultFields},
		{"sensitivePaths", sensitivePathNames()}, {"action.hints", hintFields},
	} {
		var got []string
		def, prop, nested := strings.Cut(tc.def, ".")
		switch {
		case def == "":
			for k := range s.Properties {
				got = append(got, k)
			}
		case nested:
			for k := range s.Defs[def].Properties[prop].Properties {
				got = append(got, k)
			}
		default:
			for k := range s.Defs[def].Properties {
				got = append(got, k)
			}
		}
		want := slices.Clone(tc.fields)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("schema %q fields %v, loader fields %v", tc.def, got, want)
		}
	}
}

// FuzzLoadPolicy: whatever the bytes, loading never panics, every problem
// is located in the file, and a loaded policy decides without panicking.
func FuzzLoadPolicy(f *testing.F) {
	files, _ := filepath.Glob("testdata/policy/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, fl := range ar.Files {
			if strings.HasSuffix(fl.Name, ".yaml") {
				f.Add(fl.Data)
			}
		}
	}
	actions := []airlock.Action{
		{Agent: "a", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "git status && rm -rf /"})},
		{Agent: "a1", Tool: "write_file", Args: airlock.MustArgs(map[string]any{"path": "/etc/x"})},
		{Agent: "bob", Tool: "mcp__x__y", Hints: &airlock.Hints{Tier: airlock.TierSpend}},
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := LoadPolicy("f.yaml", src)
		if err != nil {
			var pe *PolicyError
			if !asPolicyError(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error is not a located *PolicyError: %v", err)
			}
			for _, pr := range pe.Problems {
				if pr.File != "f.yaml" || pr.Message == "" {
					t.Fatalf("problem without file or message: %+v", pr)
				}
			}
			return
		}
		for _, a := range actions {
			d := stack{p}.decide(context.Background(), ShellForTests, &a)
			if !d.Outcome.Valid() {
				t.Fatalf("invalid outcome %v", d.Outcome)
			}
		}
		RunPolicyTests(ShellForTests, p)
	})
}

func asPolicyError(err error, pe **PolicyError) bool {
	e, ok := err.(*PolicyError)
	*pe = e
	return ok
}
