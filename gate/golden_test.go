package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"golang.org/x/tools/txtar"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

// goldenCase is one action of a golden file and the decision it must get.
// Fields left out of `want` are not checked.
type goldenCase struct {
	Name   string         `yaml:"name"`
	Action map[string]any `yaml:"action"`
	Want   struct {
		Outcome    string   `yaml:"outcome"`
		Code       *string  `yaml:"code"`
		Class      string   `yaml:"class"`
		Capability string   `yaml:"capability"`
		Tier       string   `yaml:"tier"`
		Rule       string   `yaml:"rule"`
		Layer      string   `yaml:"layer"`
		Source     string   `yaml:"source"`
		NeedsHuman *bool    `yaml:"needs_human"`
		Overridden *bool    `yaml:"overridden"`
		Overrides  []string `yaml:"overrides"` // override kinds, in order
		Command    *int     `yaml:"command"`
		Commands   []string `yaml:"commands"` // per-command outcome ("inert" for inert ones)
		Ceilings   []string `yaml:"ceilings"` // the rules and defaults that stopped at their ceiling, "id@command" ("levels default@1")
		Preset     *string  `yaml:"preset"`
		Reviewers  []string `yaml:"reviewers"`
		Owner      *string  `yaml:"owner"`
		Timeout    string   `yaml:"timeout"`
		Errors     *int     `yaml:"condition_errors"`
	} `yaml:"want"`
}

// TestGolden runs every testdata/policy/*.txtar: the policies it holds
// (its *.yaml files, top layer first; a file named session-ID.yaml is pushed
// for session ID) and the cases of its cases.yaml, or the exact load error
// of its `error` file.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/policy/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			gate, loadErr := loadGolden(ar)
			if want, ok := archiveFile(ar, "error"); ok {
				if loadErr == nil {
					t.Fatalf("policies loaded; want error:\n%s", want)
				}
				got := errorText(loadErr)
				if *update {
					setArchiveFile(ar, "error", got+"\n")
					if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				if got != strings.TrimSpace(want) {
					t.Fatalf("load error:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
				}
				return
			}
			if loadErr != nil {
				t.Fatal(loadErr)
			}
			src, ok := archiveFile(ar, "cases.yaml")
			if !ok {
				t.Fatal("no cases.yaml and no error file")
			}
			var cases []goldenCase
			if err := yaml.UnmarshalWithOptions([]byte(src), &cases, yaml.Strict()); err != nil {
				t.Fatalf("cases.yaml: %v", err)
			}
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) { checkGolden(t, gate, c) })
			}
		})
	}
}

func loadGolden(ar *txtar.Archive) (*gate.Gate, error) {
	var layers []*gate.Policy
	type push struct {
		session string
		p       *gate.Policy
	}
	var pushes []push
	for _, f := range ar.Files {
		if !strings.HasSuffix(f.Name, ".yaml") || f.Name == "cases.yaml" {
			continue
		}
		p, err := gate.LoadPolicy(f.Name, f.Data)
		if err != nil {
			return nil, err
		}
		if id, ok := strings.CutPrefix(strings.TrimSuffix(f.Name, ".yaml"), "session-"); ok {
			pushes = append(pushes, push{id, p})
			continue
		}
		layers = append(layers, p)
	}
	g, err := gate.New(shell.Analyser{}, layers...)
	if err != nil {
		return nil, err
	}
	for _, ps := range pushes {
		if err := g.PushSession(ps.session, ps.p); err != nil {
			return nil, err
		}
	}
	return g, nil
}

var update = flag.Bool("update", false, "rewrite the error files of the golden tests with the errors they get")

// errorText is what a user sees of a load error.
func errorText(err error) string {
	var pe *gate.PolicyError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return airlock.ErrorMessage(err)
}

func setArchiveFile(ar *txtar.Archive, name, data string) {
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
		}
	}
}

func archiveFile(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

func checkGolden(t *testing.T, g *gate.Gate, c goldenCase) {
	t.Helper()
	raw, err := json.Marshal(c.Action)
	if err != nil {
		t.Fatal(err)
	}
	var a airlock.Action
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("action: %v", err)
	}
	d := g.Decide(context.Background(), a)
	w := c.Want
	fail := func(what string, got, want any) {
		t.Errorf("%s = %v, want %v\n%s", what, got, want, d.Explain())
	}
	if w.Outcome == "" {
		t.Fatal("case has no want.outcome")
	}
	if got := d.Outcome.String(); got != w.Outcome {
		fail("outcome", got, w.Outcome)
	}
	if w.Code != nil && d.Code != *w.Code {
		fail("code", d.Code, *w.Code)
	}
	if w.Class != "" && string(d.Classification.Class) != w.Class {
		fail("class", d.Classification.Class, w.Class)
	}
	if w.Capability != "" && string(d.Classification.Capability) != w.Capability {
		fail("capability", d.Classification.Capability, w.Capability)
	}
	if w.Tier != "" && d.Classification.Tier.String() != w.Tier {
		fail("tier", d.Classification.Tier, w.Tier)
	}
	if w.Rule != "" {
		got := "-"
		if d.Rule != nil {
			got = d.Rule.ID
		}
		if got != w.Rule {
			fail("rule", got, w.Rule)
		}
	}
	if w.Layer != "" && (d.Rule == nil || d.Rule.Layer.String() != w.Layer) {
		fail("rule layer", d.Rule, w.Layer)
	}
	if w.Source != "" && d.Source != w.Source {
		fail("source", d.Source, w.Source)
	}
	if w.NeedsHuman != nil && d.NeedsHuman != *w.NeedsHuman {
		fail("needs_human", d.NeedsHuman, *w.NeedsHuman)
	}
	if w.Overridden != nil && d.Overridden != *w.Overridden {
		fail("overridden", d.Overridden, *w.Overridden)
	}
	if w.Overrides != nil {
		var kinds []string
		for _, o := range d.Overrides {
			kinds = append(kinds, o.Kind)
		}
		if !slices.Equal(kinds, w.Overrides) {
			fail("override kinds", kinds, w.Overrides)
		}
	}
	if w.Command != nil && d.Command != *w.Command {
		fail("deciding command", d.Command, *w.Command)
	}
	if w.Commands != nil {
		var got []string
		for _, cd := range d.Commands {
			if cd.Inert {
				got = append(got, "inert")
			} else {
				got = append(got, cd.Outcome.String())
			}
		}
		if !slices.Equal(got, w.Commands) {
			fail("command outcomes", got, w.Commands)
		}
	}
	if w.Ceilings != nil {
		var got []string
		for _, c := range d.Ceilings {
			id := "?"
			switch {
			case c.Rule != nil:
				id = c.Rule.ID
			case c.Default != nil:
				id = c.Default.Source
			}
			got = append(got, fmt.Sprintf("%s@%d", id, c.Command))
		}
		if !slices.Equal(got, w.Ceilings) {
			fail("ceilings", got, w.Ceilings)
		}
	}
	if w.Preset != nil && d.Preset.String() != *w.Preset {
		fail("preset", d.Preset, *w.Preset)
	}
	if w.Reviewers != nil && !slices.Equal(d.Reviewers, w.Reviewers) {
		fail("reviewers", d.Reviewers, w.Reviewers)
	}
	if w.Owner != nil && d.Owner != *w.Owner {
		fail("owner", d.Owner, *w.Owner)
	}
	if w.Timeout != "" {
		want, err := time.ParseDuration(w.Timeout)
		if err != nil {
			t.Fatal(err)
		}
		if d.Timeout != want {
			fail("timeout", d.Timeout, want)
		}
	}
	if w.Errors != nil && len(d.ConditionErrors) != *w.Errors {
		fail("condition errors", d.ConditionErrors, *w.Errors)
	}
	// Invariants every decision keeps.
	if d.NeedsHuman && d.Outcome.Runs() {
		t.Errorf("needs-human decision runs: %s", d)
	}
	if d.Code == "" && !d.Outcome.Runs() && d.Outcome != airlock.Ask {
		t.Errorf("refusal without a code: %s", d)
	}
}
