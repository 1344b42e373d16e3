package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// ReleaseTools checks an MCP server's listing against the definitions
// released to agent for it. On the server's first listing every tool is
// pinned as listed. Later, a tool whose definition was pinned or released
// is released; any other — changed or new — is checked as an mcp.release
// action, which the policy decides (a person, by default): allowed, its
// definition is pinned and released; otherwise it is withheld with
// CodeToolChanged and the request that would release it. Errors: EINVALID
// (a malformed definition), EUNAVAILABLE (the pins could not be read).
func (e *Enforcer) ReleaseTools(ctx context.Context, agent, server string, defs []airlock.ToolDefinition) ([]airlock.ToolRelease, error) {
	if agent == "" || server == "" {
		return nil, airlock.Errorf(airlock.EINVALID, "releasing tools needs an agent and a server")
	}
	out := make([]airlock.ToolRelease, len(defs))
	for i, d := range defs {
		h, err := d.Hash()
		if err != nil {
			return nil, err
		}
		if d.Name == "" {
			return nil, airlock.Errorf(airlock.EINVALID, "a tool of server %s has no name", server)
		}
		out[i] = airlock.ToolRelease{Name: d.Name, Hash: h}
	}
	pins, err := e.Store.ToolPins(ctx, agent, server)
	if err != nil {
		return nil, airlock.Errorf(airlock.EUNAVAILABLE, "read the tool pins of %s: %s", server, airlock.ErrorMessage(err))
	}
	if len(pins) == 0 {
		return out, e.pinFirst(ctx, agent, server, defs, out)
	}
	pinned := map[string]bool{}
	latest := map[string]airlock.ToolPin{}
	for _, p := range pins {
		pinned[p.Tool+"\x00"+p.Hash.String()] = true
		latest[p.Tool] = p // oldest first: the last one is the latest
	}
	for i, d := range defs {
		r := &out[i]
		if pinned[d.Name+"\x00"+r.Hash.String()] {
			r.Released = true
			continue
		}
		prev, changed := latest[d.Name]
		a, err := releaseAction(agent, server, d, r.Hash, prev, changed)
		if err != nil {
			return nil, err
		}
		enf := e.Check(ctx, a)
		if !enf.Allowed {
			r.Code, r.Message, r.Approval = airlock.CodeToolChanged, releaseMessage(server, d.Name, changed, enf), enf.Approval
			if enf.Code == airlock.CodeUnavailable {
				r.Code = airlock.CodeUnavailable
			}
			continue
		}
		pin := airlock.ToolPin{Agent: agent, Server: server, Tool: d.Name, Hash: r.Hash, Definition: d.Definition, ApprovalID: approvalID(enf.Approval)}
		payload := map[string]any{"server": server, "tool": d.Name, "hash": r.Hash, "change": changeOf(changed), "decision_seq": enf.Seq}
		ev := airlock.NewEvent(airlock.EventToolReleased, &a, enf.Label, pin.ApprovalID, payload)
		if err := e.Store.PinTools(ctx, []airlock.ToolPin{pin}, airlock.Record{Events: []airlock.Event{ev}}); err != nil {
			r.Code, r.Message = airlock.CodeUnavailable, fmt.Sprintf("tool %s of MCP server %s was released, but the release could not be recorded: %s", d.Name, server, airlock.ErrorMessage(err))
			continue
		}
		r.Released = true
	}
	return out, nil
}

// pinFirst pins a server's first listing.
func (e *Enforcer) pinFirst(ctx context.Context, agent, server string, defs []airlock.ToolDefinition, out []airlock.ToolRelease) error {
	pins := make([]airlock.ToolPin, len(defs))
	listed := make([]map[string]any, len(defs))
	for i, d := range defs {
		pins[i] = airlock.ToolPin{Agent: agent, Server: server, Tool: d.Name, Hash: out[i].Hash, Definition: d.Definition}
		listed[i] = map[string]any{"tool": d.Name, "hash": out[i].Hash}
	}
	ev := airlock.NewEvent(airlock.EventToolsPinned, &airlock.Action{Agent: agent}, "pinned", "", map[string]any{"server": server, "tools": listed})
	if err := e.Store.PinTools(ctx, pins, airlock.Record{Events: []airlock.Event{ev}}); err != nil {
		return airlock.Errorf(airlock.EUNAVAILABLE, "pin the tools of %s: %s", server, airlock.ErrorMessage(err))
	}
	for i := range out {
		out[i].Released = true
	}
	return nil
}

func changeOf(changed bool) string {
	if changed {
		return "changed"
	}
	return "new"
}

// releaseAction is the action that releases definition d of a tool: the
// same for every session of the agent, so that one person's release serves
// them all.
func releaseAction(agent, server string, d airlock.ToolDefinition, h airlock.Hash, prev airlock.ToolPin, changed bool) (airlock.Action, error) {
	args := map[string]any{
		"server": server, "tool": d.Name, "hash": h, "change": changeOf(changed),
		"definition": d.Definition,
	}
	if changed {
		args["previous"] = prev.Definition
		args["previous_hash"] = prev.Hash
		args["diff"] = DefinitionDiff(prev.Definition, d.Definition)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return airlock.Action{}, airlock.Errorf(airlock.EINVALID, "tool %s: %v", d.Name, err)
	}
	return airlock.Action{Agent: agent, Tool: airlock.ToolReleaseTool, Args: b}, nil
}

// releaseMessage says why a tool is withheld and what releases it.
func releaseMessage(server, tool string, changed bool, enf airlock.Enforcement) string {
	what := fmt.Sprintf("tool %s of MCP server %s appeared after its first listing", tool, server)
	if changed {
		what = fmt.Sprintf("the definition of tool %s of MCP server %s changed since it was pinned", tool, server)
	}
	msg := what + ": it is withheld until a person releases it"
	if enf.Approval != nil && enf.Approval.ID != "" {
		msg += fmt.Sprintf(" (request %s: approve it in the inbox or with `airlock approvals approve %s`)", enf.Approval.ID, enf.Approval.ID)
	}
	if enf.Code != "" && enf.Code != airlock.CodeSuggested && enf.Code != airlock.CodeNeedsHuman {
		msg += "; " + enf.Code + ": " + enf.Message
	}
	return msg
}

// DefinitionDiff is a line diff of two JSON definitions, each pretty
// printed with sorted keys: lines only in a start with "-", lines only in b
// with "+", lines in both with " ".
func DefinitionDiff(a, b json.RawMessage) string {
	pa, pb := pretty(a), pretty(b)
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(pa, pb)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var s strings.Builder
	for _, d := range diffs {
		mark := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			mark = "-"
		case diffmatchpatch.DiffInsert:
			mark = "+"
		}
		for _, line := range strings.SplitAfter(d.Text, "\n") {
			if line != "" {
				s.WriteString(mark + line)
			}
		}
	}
	return s.String()
}

// pretty prints a JSON value indented, with its keys sorted and its text
// as written (no \u003c for <: a person reads it).
func pretty(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw) + "\n"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(raw) + "\n"
	}
	return b.String()
}
