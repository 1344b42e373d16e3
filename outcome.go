package airlock

import (
	"fmt"
)

// Outcome is what the gate does with an action, ordered from most to least
// autonomy: Auto < Notify < Ask < Suggest < Shadow < Deny. Combining two
// opinions always keeps the later (stricter) one. The zero value is not an
// outcome.
type Outcome uint8

// The outcomes, from most to least autonomy.
const (
	Auto    Outcome = iota + 1 // runs
	Notify                     // runs; the agent's owner is told afterwards
	Ask                        // blocks until a person approves (runs) or rejects / times out (refused)
	Suggest                    // skipped now; a non-blocking approval request is queued
	Shadow                     // skipped; recorded as what would have happened
	Deny                       // refused
)

var outcomeNames = [...]string{
	Auto:    "auto",
	Notify:  "notify",
	Ask:     "ask",
	Suggest: "suggest",
	Shadow:  "shadow",
	Deny:    "deny",
}

// outcomeAliases are the seed vocabularies a policy may use for outcomes.
var outcomeAliases = map[string]Outcome{
	"act_auto":          Auto,
	"act_with_approval": Ask,
	"L1":                Auto,
	"L2":                Notify,
	"L3":                Ask,
	"Auto":              Auto,
	"Ask":               Ask,
	"Deny":              Deny,
	"HITL Auto":         Auto,
	"HITL Ask":          Ask,
	"HITL Deny":         Deny,
}

// Outcomes returns every outcome in ascending order of restriction.
func Outcomes() []Outcome { return []Outcome{Auto, Notify, Ask, Suggest, Shadow, Deny} }

// String returns the canonical name ("ask").
func (o Outcome) String() string {
	if o.Valid() {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Valid reports whether o is one of the defined outcomes.
func (o Outcome) Valid() bool { return o >= Auto && o <= Deny }

// Runs reports whether the action runs without waiting for a person.
func (o Outcome) Runs() bool { return o == Auto || o == Notify }

// Code returns the refusal code for outcomes that refuse or skip the action
// at decision time, and "" for auto, notify and ask (ask's final code comes
// from its resolution: CodeRejected or CodeTimeout).
func (o Outcome) Code() string {
	switch o {
	case Suggest:
		return CodeSuggested
	case Shadow:
		return CodeShadow
	case Deny:
		return CodeDenied
	}
	return ""
}

// ParseOutcome parses an outcome name or one of its seed aliases (act_auto,
// act_with_approval, L1/L2/L3, Auto/Ask/Deny, "HITL Ask").
func ParseOutcome(s string) (Outcome, error) {
	for _, o := range Outcomes() {
		if outcomeNames[o] == s {
			return o, nil
		}
	}
	if o, ok := outcomeAliases[s]; ok {
		return o, nil
	}
	return 0, Errorf(EINVALID, "unknown outcome %q%s", s, suggest(s, outcomeSpellings()))
}

// isLevelName reports whether s is written in the levels vocabulary.
func isLevelName(s string) bool { return s == "L1" || s == "L2" || s == "L3" }

func outcomeSpellings() []string {
	names := append([]string(nil), outcomeNames[1:]...)
	for k := range outcomeAliases {
		names = append(names, k)
	}
	return names
}

// MarshalText implements encoding.TextMarshaler. The zero Outcome (no
// outcome: a shell command with no effect to judge) is "".
func (o Outcome) MarshalText() ([]byte, error) {
	if o == 0 {
		return nil, nil
	}
	if !o.Valid() {
		return nil, Errorf(EINVALID, "invalid outcome %d", uint8(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; aliases are accepted.
func (o *Outcome) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*o = 0
		return nil
	}
	v, err := ParseOutcome(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}

// Preset is a name for how much an agent's rules are trusted for dangerous
// (write tier and above) actions.
type Preset uint8

// The presets, from most to least autonomy. The zero value means "none set":
// rules alone decide.
const (
	PresetNone         Preset = iota
	PresetAutonomous          // rules alone decide; it lifts no ceiling
	PresetStandard            // dangerous actions ask unless a rule explicitly allows them
	PresetConservative        // dangerous actions always ask, even where a rule said auto
)

var presetNames = [...]string{
	PresetNone:         "",
	PresetAutonomous:   "autonomous",
	PresetStandard:     "standard",
	PresetConservative: "conservative",
}

// String returns the preset's name.
func (p Preset) String() string {
	if int(p) < len(presetNames) {
		return presetNames[p]
	}
	return fmt.Sprintf("Preset(%d)", uint8(p))
}

// Meaning says, for people, what the preset does to an agent's actions.
func (p Preset) Meaning() string {
	switch p {
	case PresetStandard:
		return "write-tier and riskier actions ask unless a rule names their tool, class or command"
	case PresetConservative:
		return "write-tier and riskier actions always ask, even where a rule says auto"
	case PresetAutonomous:
		return "the rules alone decide; a rule or default that loosens still stops at its ceiling"
	default:
		return "the rules alone decide"
	}
}

// ParsePreset parses a preset name.
func ParsePreset(s string) (Preset, error) {
	for p, name := range presetNames {
		if p > 0 && name == s {
			return Preset(p), nil
		}
	}
	return 0, Errorf(EINVALID, "unknown preset %q%s", s, suggest(s, presetNames[1:]))
}

// MarshalText implements encoding.TextMarshaler.
func (p Preset) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; "" is no preset.
func (p *Preset) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*p = 0
		return nil
	}
	v, err := ParsePreset(string(b))
	*p = v
	return err
}

// Layer is where a policy sits in the stack. Policies stack from the
// organisation down to a session; a lower layer can only tighten.
type Layer uint8

// The layers, from the top of the stack down.
const (
	LayerOrganisation Layer = iota + 1
	LayerProject
	LayerAgent
	LayerSession
)

var layerNames = [...]string{
	LayerOrganisation: "organisation",
	LayerProject:      "project",
	LayerAgent:        "agent",
	LayerSession:      "session",
}

// String returns the layer's name.
func (l Layer) String() string {
	if l >= LayerOrganisation && l <= LayerSession {
		return layerNames[l]
	}
	return fmt.Sprintf("Layer(%d)", uint8(l))
}

// ParseLayer parses a layer name; "organization" is accepted too.
func ParseLayer(s string) (Layer, error) {
	if s == "organization" {
		return LayerOrganisation, nil
	}
	for l, name := range layerNames {
		if l > 0 && name == s {
			return Layer(l), nil
		}
	}
	return 0, Errorf(EINVALID, "unknown layer %q%s", s, suggest(s, layerNames[1:]))
}

// MarshalText implements encoding.TextMarshaler.
func (l Layer) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Layer) UnmarshalText(b []byte) error {
	v, err := ParseLayer(string(b))
	*l = v
	return err
}
