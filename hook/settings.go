package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Settings says where a host keeps its hooks and how it runs them.
type Settings struct {
	// Events are the hook events Airlock is installed on.
	Events []string
	// Dir is the host's folder in a home or a project (".claude"), and
	// DirEnv the variable that moves the user's one (CODEX_HOME).
	Dir, DirEnv string
	// File is the settings file in Dir; LocalFile a per-person one beside it
	// that is not committed ("" if the host has none).
	File, LocalFile string
	// TimeoutUnit is the unit of a hook's "timeout" (a second, or a
	// millisecond for Gemini CLI), and DefaultTimeout the host's default
	// (relay's, which the airlock-hook program also reads).
	TimeoutUnit, DefaultTimeout time.Duration
}

// SettingsOf returns where host keeps its hooks.
func SettingsOf(h Host) Settings {
	var s Settings
	switch h.(type) {
	case Claude:
		s = Settings{Events: claudeEvents, Dir: ".claude", DirEnv: "CLAUDE_CONFIG_DIR", File: "settings.json",
			LocalFile: "settings.local.json", TimeoutUnit: time.Second}
	case Codex:
		s = Settings{Events: codexHookEvents, Dir: ".codex", DirEnv: "CODEX_HOME", File: "hooks.json",
			TimeoutUnit: time.Second}
	case Gemini:
		s = Settings{Events: geminiEvents, Dir: ".gemini", DirEnv: "GEMINI_CLI_HOME", File: "settings.json",
			TimeoutUnit: time.Millisecond}
	default:
		panic(fmt.Sprintf("hook: no settings for %T", h))
	}
	r, _ := relay.Lookup(h.Name())
	s.DefaultTimeout = r.Timeout
	return s
}

// Entry is the hook Airlock installs on each event: a command, or (Claude
// Code) a URL the host POSTs to.
type Entry struct {
	// Command runs `airlock hook <host>`; empty when URL is set.
	Command string
	// URL is the server's /v1/hooks/<host>, for a host that POSTs hooks.
	URL string
	// Headers go with each POST; AllowedEnvVars are the variables the host
	// may interpolate into them ($AIRLOCK_TOKEN), never written out.
	Headers        map[string]string
	AllowedEnvVars []string
	// Timeout is the host's limit for one hook call.
	Timeout time.Duration
}

// FastProgram is the hook program that links only package relay:
// `airlock-hook <host>` answers as `airlock hook <host>` does.
const FastProgram = "airlock-hook"

// IsFastProgram reports whether the executable exe is FastProgram.
func IsFastProgram(exe string) bool {
	return fastProgram.MatchString(exe)
}

var fastProgram = regexp.MustCompile(`(^|[/\\])airlock-hook(\.exe)?$`)

// owned matches the commands and URLs of hooks Airlock installed for a
// host: an executable (airlock, by whatever path or name --command gave it)
// then `hook <host>`; FastProgram, by any path, then `<host>`; or a URL
// ending in /v1/hooks/<host>.
func owned(host string) *regexp.Regexp {
	h := regexp.QuoteMeta(host)
	exe := `("[^"]*"|'[^']*'|\S+)` // a word, bare or quoted for the shell
	fast := `("([^"]*[/\\])?airlock-hook(\.exe)?"|'([^']*[/\\])?airlock-hook(\.exe)?'|(\S*[/\\])?airlock-hook(\.exe)?)`
	return regexp.MustCompile(`^\s*` + exe + `\s+hook\s+` + h + `(\s|$)` +
		`|^\s*` + fast + `\s+` + h + `(\s|$)` +
		`|/v1/hooks/` + h + `([?#]|$)`)
}

// Install merges e into a host's settings file text (empty: a new file)
// on every event of s, and reports whether anything changed. Other hooks,
// other keys and their order are kept; an Airlock hook already there is
// replaced where it stands, so that installing twice changes nothing.
func Install(h Host, text []byte, e Entry) ([]byte, bool, error) {
	s := SettingsOf(h)
	root, err := parseObject(text)
	if err != nil {
		return nil, false, err
	}
	hooks, err := root.object("hooks")
	if err != nil {
		return nil, false, err
	}
	mine := owned(h.Name())
	entry := e.render(s)
	for _, event := range s.Events {
		groups, err := hooks.array(event)
		if err != nil {
			return nil, false, err
		}
		groups, err = placeEntry(groups, entry, mine)
		if err != nil {
			return nil, false, fmt.Errorf("hooks.%s: %w", event, err)
		}
		hooks.set(event, marshalArray(groups))
	}
	root.set("hooks", hooks.marshal())
	out := root.marshal()
	return out, !sameJSON(text, out), nil
}

// Uninstall removes from a host's settings file text exactly the hooks
// Install added — groups left empty and a "hooks" key left empty too —
// and reports whether anything changed.
func Uninstall(h Host, text []byte) ([]byte, bool, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return text, false, nil
	}
	root, err := parseObject(text)
	if err != nil {
		return nil, false, err
	}
	if _, ok := root.get("hooks"); !ok {
		return text, false, nil
	}
	hooks, err := root.object("hooks")
	if err != nil {
		return nil, false, err
	}
	mine := owned(h.Name())
	changed := false
	for _, m := range append([]member(nil), hooks.members...) {
		groups, err := hooks.array(m.key)
		if err != nil {
			continue // not a hook list: not ours to touch
		}
		kept, removed := dropEntries(groups, mine)
		if !removed {
			continue
		}
		changed = true
		if len(kept) == 0 {
			hooks.remove(m.key)
		} else {
			hooks.set(m.key, marshalArray(kept))
		}
	}
	if !changed {
		return text, false, nil
	}
	if len(hooks.members) == 0 {
		root.remove("hooks")
	} else {
		root.set("hooks", hooks.marshal())
	}
	return root.marshal(), true, nil
}

// Installed returns the Airlock hooks in a host's settings text, by event.
func Installed(h Host, text []byte) (map[string][]json.RawMessage, error) {
	found := map[string][]json.RawMessage{}
	if len(bytes.TrimSpace(text)) == 0 {
		return found, nil
	}
	root, err := parseObject(text)
	if err != nil {
		return nil, err
	}
	hooks, err := root.object("hooks")
	if err != nil {
		return nil, err
	}
	mine := owned(h.Name())
	for _, m := range hooks.members {
		groups, err := hooks.array(m.key)
		if err != nil {
			continue
		}
		for _, g := range groups {
			for _, hk := range groupHooks(g) {
				if ownedHook(hk, mine) {
					found[m.key] = append(found[m.key], hk)
				}
			}
		}
	}
	return found, nil
}

// render is the entry as the host's settings spell it.
func (e Entry) render(s Settings) json.RawMessage {
	timeout := int64(e.Timeout / s.TimeoutUnit)
	var v any
	if e.URL != "" {
		v = struct {
			Type           string            `json:"type"`
			URL            string            `json:"url"`
			Headers        map[string]string `json:"headers,omitempty"`
			AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
			Timeout        int64             `json:"timeout,omitempty"`
		}{"http", e.URL, e.Headers, e.AllowedEnvVars, timeout}
	} else {
		v = struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int64  `json:"timeout,omitempty"`
		}{"command", e.Command, timeout}
	}
	b, _ := json.Marshal(v)
	return b
}

// placeEntry puts entry in the hook groups of one event: in place of a
// group that held only Airlock's hook (its matcher made to match every
// tool), else as a new group matching every tool at the end. An Airlock hook
// sharing a group with others is taken out of it: the others' matcher is
// theirs, and Airlock's hook must see every tool.
func placeEntry(groups []json.RawMessage, entry json.RawMessage, mine *regexp.Regexp) ([]json.RawMessage, error) {
	placed := false
	out := make([]json.RawMessage, 0, len(groups)+1)
	for _, g := range groups {
		obj, err := parseObject(g)
		if err != nil {
			return nil, err
		}
		list, err := obj.array("hooks")
		if err != nil {
			return nil, err
		}
		var kept []json.RawMessage
		for _, hk := range list {
			if !ownedHook(hk, mine) {
				kept = append(kept, hk)
			}
		}
		switch {
		case len(kept) == len(list):
			out = append(out, g)
		case len(kept) > 0:
			obj.set("hooks", marshalArray(kept))
			out = append(out, obj.marshal())
		case !placed:
			if m, ok := obj.get("matcher"); ok && !matchesAll(m) {
				obj.set("matcher", json.RawMessage(`"*"`))
			}
			obj.set("hooks", marshalArray([]json.RawMessage{entry}))
			out, placed = append(out, obj.marshal()), true
		}
	}
	if !placed {
		out = append(out, json.RawMessage(`{"matcher":"*","hooks":[`+string(entry)+`]}`))
	}
	return out, nil
}

func matchesAll(m json.RawMessage) bool {
	var s string
	return json.Unmarshal(m, &s) == nil && (s == "*" || s == "" || s == ".*")
}

// dropEntries removes Airlock's hooks from the groups of one event, and
// groups left without hooks.
func dropEntries(groups []json.RawMessage, mine *regexp.Regexp) ([]json.RawMessage, bool) {
	removed := false
	var out []json.RawMessage
	for _, g := range groups {
		obj, err := parseObject(g)
		if err != nil {
			out = append(out, g)
			continue
		}
		list, err := obj.array("hooks")
		if err != nil {
			out = append(out, g)
			continue
		}
		var kept []json.RawMessage
		for _, hk := range list {
			if ownedHook(hk, mine) {
				removed = true
				continue
			}
			kept = append(kept, hk)
		}
		switch {
		case len(kept) == len(list):
			out = append(out, g)
		case len(kept) > 0:
			obj.set("hooks", marshalArray(kept))
			out = append(out, obj.marshal())
		}
	}
	return out, removed
}

func groupHooks(g json.RawMessage) []json.RawMessage {
	obj, err := parseObject(g)
	if err != nil {
		return nil
	}
	list, _ := obj.array("hooks")
	return list
}

func ownedHook(hk json.RawMessage, mine *regexp.Regexp) bool {
	var h struct {
		Command string `json:"command"`
		URL     string `json:"url"`
	}
	if json.Unmarshal(hk, &h) != nil {
		return false
	}
	return (h.Command != "" && mine.MatchString(h.Command)) || (h.URL != "" && mine.MatchString(h.URL))
}

// object is a JSON object that keeps its members' order and bytes.
type object struct{ members []member }

type member struct {
	key   string
	value json.RawMessage
}

// parseObject reads a JSON object (empty text: an empty one), with where a
// syntax error is.
func parseObject(text []byte) (*object, error) {
	o := &object{}
	if len(bytes.TrimSpace(text)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, syntaxError(text, dec.InputOffset(), "want a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(text, dec.InputOffset(), err.Error())
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, syntaxError(text, dec.InputOffset(), err.Error())
		}
		if _, dup := o.get(key); dup {
			return nil, syntaxError(text, dec.InputOffset(), fmt.Sprintf("key %q appears twice", key))
		}
		o.members = append(o.members, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(text, dec.InputOffset(), err.Error())
	}
	if _, err := dec.Token(); err == nil {
		return nil, syntaxError(text, dec.InputOffset(), "data after the JSON object")
	}
	return o, nil
}

// syntaxError locates a problem at a byte offset as line:col.
func syntaxError(text []byte, off int64, msg string) error {
	off = min(off, int64(len(text)))
	line := 1 + bytes.Count(text[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(text[:off], '\n')
	if strings.Contains(msg, "invalid character '/'") {
		msg += " (comments are not JSON: remove them first)"
	}
	return airlock.Errorf(airlock.EINVALID, "%d:%d: %s", line, col, msg)
}

func (o *object) get(key string) (json.RawMessage, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

func (o *object) set(key string, v json.RawMessage) {
	for i, m := range o.members {
		if m.key == key {
			o.members[i].value = v
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

func (o *object) remove(key string) {
	for i, m := range o.members {
		if m.key == key {
			o.members = append(o.members[:i], o.members[i+1:]...)
			return
		}
	}
}

// object returns the member key as an object (absent: a new one).
func (o *object) object(key string) (*object, error) {
	v, ok := o.get(key)
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return &object{}, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return nil, airlock.Errorf(airlock.EINVALID, "%q is not an object", key)
	}
	return parseObject(v)
}

// array returns the member key as an array (absent: an empty one).
func (o *object) array(key string) ([]json.RawMessage, error) {
	v, ok := o.get(key)
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, airlock.Errorf(airlock.EINVALID, "%q is not a list", key)
	}
	return list, nil
}

func (o *object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		panic(fmt.Sprintf("hook: settings: %v", err)) // members are valid JSON
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func marshalArray(list []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// sameJSON reports whether two texts hold the same JSON, whitespace aside.
func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
