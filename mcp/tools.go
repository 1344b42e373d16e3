package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/airlock-dev/airlock"
)

// tool is one tool of an upstream, as the gateway offers it.
type tool struct {
	name string          // the upstream's name for it
	raw  json.RawMessage // its definition as listed, passed on unchanged
	def  json.RawMessage // the part a person approves, for its pin
	// tier is what its annotations claim, raising the tier Airlock
	// classifies its calls at: destructiveHint destructive, openWorldHint
	// network-egress. readOnly is its readOnlyHint, passed on as a claim a
	// policy may trust (hints.read_only); by itself it lowers nothing.
	tier     airlock.RiskTier
	readOnly bool
	// refused says why the tool is not offered: its name breaks the rules,
	// or its definition is not released. Its calls are refused with code.
	refused string
	code    string
	release string // the request that would release it
}

// toolList is one listing of an upstream's tools.
type toolList struct {
	tools  []*tool
	byName map[string]*tool
}

// toolName is what the MCP specification allows in a tool name.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// maxPages bounds the pages of one listing.
const maxPages = 100

// listing returns the upstream's tools, listing them when it has not yet,
// since they changed, or always for an HTTP upstream (whose notifications
// the gateway does not receive outside a request).
func (u *upstream) listing(ctx context.Context) (*toolList, error) {
	u.mu.Lock()
	cached, gen := u.tools, u.gen
	u.mu.Unlock()
	if cached != nil && u.srv.URL == "" {
		return cached, nil
	}
	var raws []json.RawMessage
	var cursor string
	for page := 0; ; page++ {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		result, err := u.forward(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var r struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("MCP server %s listed its tools as %.200s: %v", u.srv.Name, result, err)
		}
		raws = append(raws, r.Tools...)
		if cursor = r.NextCursor; cursor == "" {
			break
		}
		if page == maxPages {
			return nil, fmt.Errorf("MCP server %s lists its tools over more than %d pages", u.srv.Name, maxPages)
		}
	}
	list := u.readTools(raws)
	if err := u.release(ctx, list); err != nil {
		return nil, err // not cached: the next listing asks again
	}
	u.mu.Lock()
	if u.gen == gen {
		u.tools = list
	}
	u.mu.Unlock()
	return list, nil
}

// release checks the listing against the definitions pinned for the
// agent: a tool not released is withheld, and the gateway waits on its
// request to list again once a person decides. When Airlock cannot answer,
// no tool is offered: the error says why.
func (u *upstream) release(ctx context.Context, list *toolList) error {
	var defs []airlock.ToolDefinition
	var offered []*tool
	for _, t := range list.tools {
		if t.refused == "" {
			defs = append(defs, airlock.ToolDefinition{Name: t.name, Definition: t.def})
			offered = append(offered, t)
		}
	}
	if len(defs) == 0 {
		return nil
	}
	rs, err := u.s.checker.ReleaseTools(ctx, u.s.agent, u.srv.Name, defs)
	if err == nil && len(rs) != len(defs) {
		err = fmt.Errorf("Airlock answered %d releases for %d tools", len(rs), len(defs))
	}
	if err != nil {
		u.s.g.logger().Error("check an MCP server's tools against their pins: none is offered", "server", u.srv.Name, "err", err)
		return fmt.Errorf("%s: Airlock could not check the tools of MCP server %s against their pins, so none is offered: %s",
			airlock.CodeUnavailable, u.srv.Name, airlock.ErrorMessage(err))
	}
	for i, r := range rs {
		if r.Released {
			continue
		}
		t := offered[i]
		t.refused, t.code = r.Message, cmp.Or(r.Code, airlock.CodeToolChanged)
		if r.Approval != nil && r.Approval.Status == airlock.StatusPending {
			t.release = r.Approval.ID
			u.s.awaitRelease(u, r.Approval.ID)
		}
		u.s.g.logger().Warn("an MCP server's tool is withheld", "server", u.srv.Name, "tool", t.name, "why", r.Message)
	}
	return nil
}

// readTools reads a listing: each tool's name, hash and claims. A tool
// whose name breaks the rules, or that two definitions share, is refused.
func (u *upstream) readTools(raws []json.RawMessage) *toolList {
	list := &toolList{byName: map[string]*tool{}}
	log := u.s.g.logger()
	for _, raw := range raws {
		t, err := readTool(raw)
		if err != nil {
			log.Warn("an MCP server listed a tool Airlock cannot read: it is not offered", "server", u.srv.Name, "err", err)
			continue
		}
		switch {
		case !toolName.MatchString(t.name):
			t.refused, t.code = fmt.Sprintf("its name %q breaks MCP's rules (1 to 128 letters, digits, '_', '-' and '.')", t.name), airlock.CodeInvalid
		case list.byName[t.name] != nil:
			t.refused, t.code = "the server lists two tools by this name", airlock.CodeInvalid
			list.byName[t.name].refused, list.byName[t.name].code = t.refused, t.code
		case u.s.g.Namespace && len(u.srv.Name)+2+len(t.name) > 128:
			t.refused, t.code = fmt.Sprintf("%s__%s is longer than MCP's 128 characters", u.srv.Name, t.name), airlock.CodeInvalid
		}
		if t.refused != "" {
			log.Warn("an MCP server's tool is not offered", "server", u.srv.Name, "tool", t.name, "why", t.refused)
		}
		list.tools = append(list.tools, t)
		if list.byName[t.name] == nil {
			list.byName[t.name] = t
		}
	}
	return list
}

// readTool reads one tool's definition. One that JSON readers could read
// two ways (a member repeated, or differing from another only in case) is
// refused: the client would show one and the pin hold another.
func readTool(raw json.RawMessage) (*tool, error) {
	var d struct {
		Name         string          `json:"name"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  json.RawMessage `json:"annotations,omitempty"`
		Meta         json.RawMessage `json:"_meta,omitempty"`
		Icons        json.RawMessage `json:"icons,omitempty"`
	}
	ambiguous := airlock.CheckJSON(raw)
	if err := jsonv2.Unmarshal(raw, &d, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return nil, err
	}
	if d.Name == "" {
		return nil, fmt.Errorf("a tool without a name: %.200s", raw)
	}
	// The definition a person approves: what the model reads, what the
	// tool accepts and claims, and what the client shows or acts on beside
	// it (_meta, such as an app's UI resource, and icons). A tool without
	// _meta and icons hashes as it did before they were pinned.
	def, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	t := &tool{name: d.Name, raw: raw, def: def}
	if ambiguous != nil {
		t.refused, t.code = "its definition can be read two ways: "+airlock.ErrorMessage(ambiguous), airlock.CodeInvalid
		return t, nil
	}
	var a struct {
		DestructiveHint *bool `json:"destructiveHint"`
		OpenWorldHint   *bool `json:"openWorldHint"`
		ReadOnlyHint    bool  `json:"readOnlyHint"`
	}
	if len(d.Annotations) > 0 && json.Unmarshal(d.Annotations, &a) == nil {
		// Absent, MCP reads destructiveHint as true and openWorldHint as
		// true; only a claim made raises the tier: Airlock's own
		// classification (mcp.call, write) stands for the rest.
		if a.OpenWorldHint != nil && *a.OpenWorldHint {
			t.tier = airlock.TierNetworkEgress
		}
		if a.DestructiveHint != nil && *a.DestructiveHint {
			t.tier = airlock.TierDestructive
		}
		t.readOnly = a.ReadOnlyHint
	}
	return t, nil
}

// offered is the tool's name for the client: <server>__<tool> when the
// gateway fronts several servers.
func (s *session) offered(u *upstream, name string) string {
	if s.g.Namespace {
		return u.srv.Name + "__" + name
	}
	return name
}

// lookup finds the upstream and the tool a client's tool name stands for.
func (s *session) lookup(name string) (*upstream, string, bool) {
	if !s.g.Namespace {
		return s.ups[0], name, true
	}
	server, tool, ok := strings.Cut(name, "__")
	if !ok {
		return nil, "", false
	}
	for _, u := range s.ups {
		if u.srv.Name == server {
			return u, tool, true
		}
	}
	return nil, "", false
}

// listTools answers tools/list with every offered tool of every running
// upstream, in one page.
func (s *session) listTools(ctx context.Context) (json.RawMessage, error) {
	tools := []json.RawMessage{}
	var firstErr error
	for _, u := range s.ups {
		list, err := u.listing(ctx)
		if err != nil {
			s.g.logger().Warn("list an MCP server's tools", "server", u.srv.Name, "err", err)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, t := range list.tools {
			if t.refused != "" {
				continue
			}
			raw := t.raw
			if s.g.Namespace {
				var err error
				if raw, err = setParam(raw, "name", s.offered(u, t.name)); err != nil {
					continue
				}
			}
			tools = append(tools, raw)
		}
	}
	if len(tools) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return json.Marshal(map[string]any{"tools": tools})
}
