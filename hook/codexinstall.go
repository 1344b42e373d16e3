package hook

import (
	"encoding/json"
	"path/filepath"
)

// CodexOwned lists Airlock's handlers in the text of a Codex hooks.json at
// source, each as Codex keys its trust: by event, group and position.
func CodexOwned(source string, text []byte) ([]CodexHook, error) {
	if real, err := filepath.EvalSymlinks(source); err == nil {
		source = real
	}
	source = filepath.Clean(source)
	root, err := parseObject(text)
	if err != nil {
		return nil, err
	}
	hooks, err := root.object("hooks")
	if err != nil {
		return nil, err
	}
	mine := owned(Codex{}.Name())
	var found []CodexHook
	for _, m := range hooks.members {
		groups, err := hooks.array(m.key)
		if err != nil {
			continue
		}
		for gi, g := range groups {
			var group struct {
				Matcher *string           `json:"matcher"`
				Hooks   []json.RawMessage `json:"hooks"`
			}
			if json.Unmarshal(g, &group) != nil {
				continue
			}
			for hi, raw := range group.Hooks {
				if !ownedHook(raw, mine) {
					continue
				}
				var h struct {
					Command                string  `json:"command"`
					Timeout                *uint64 `json:"timeout"`
					Async                  bool    `json:"async"`
					StatusMessage          *string `json:"statusMessage"`
					AdditionalContextLimit *uint64 `json:"additionalContextLimit"`
				}
				if err := json.Unmarshal(raw, &h); err != nil {
					return nil, err
				}
				found = append(found, CodexHook{
					Source: source, Event: m.key, Group: gi, Handler: hi, Matcher: group.Matcher,
					Command: h.Command, Timeout: h.Timeout, Async: h.Async, StatusMessage: h.StatusMessage,
					AdditionalContextLimit: h.AdditionalContextLimit,
				})
			}
		}
	}
	return found, nil
}

// CodexTrusted reports whether config.toml text trusts the hook with this
// key and hash, enabled, as Codex requires before it runs the hook.
func CodexTrusted(config []byte, key, hash string) bool {
	st, ok := codexStates(config)[key]
	if !ok {
		return false
	}
	if en, ok := st["enabled"].(bool); ok && !en {
		return false
	}
	return st["trusted_hash"] == hash
}
