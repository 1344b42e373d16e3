package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// In front of several servers the gateway is one server to the client:
// it answers initialize with what the upstreams offer together, lists
// each kind of thing from all of them, and routes each request to the
// server it concerns — a prompt by its <server>__<name>, a resource by the
// server that listed its URI.

// Version is the gateway's version in its serverInfo.
const Version = "1"

// mergeInitialize answers the client's initialize for several upstreams.
func mergeInitialize(g *Gateway, results []json.RawMessage, errs []error) (json.RawMessage, error) {
	type caps = map[string]json.RawMessage
	merged := caps{"tools": json.RawMessage(`{"listChanged":true}`)}
	version := ""
	var instructions []string
	running := 0
	for i, raw := range results {
		if errs[i] != nil {
			g.logger().Error("an MCP server did not start: the others serve without it until it does", "server", g.Servers[i].Name, "err", errs[i])
			continue
		}
		running++
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    caps   `json:"capabilities"`
			Instructions    string `json:"instructions"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			continue
		}
		if version == "" || r.ProtocolVersion < version {
			version = r.ProtocolVersion
		}
		for _, k := range []string{"resources", "prompts", "logging", "completions"} {
			if c, ok := r.Capabilities[k]; ok {
				merged[k] = mergeCap(merged[k], c)
			}
		}
		if r.Instructions != "" {
			instructions = append(instructions, fmt.Sprintf("Server %s (its tools are named %s__<tool>): %s", g.Servers[i].Name, g.Servers[i].Name, r.Instructions))
		}
	}
	if running == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("none of the gateway's %d MCP servers started: %v", len(errs), errs[0])}
	}
	out := map[string]any{
		"protocolVersion": version,
		"capabilities":    merged,
		"serverInfo":      map[string]string{"name": "airlock-mcp-gateway", "version": Version},
	}
	if len(instructions) > 0 {
		out["instructions"] = strings.Join(instructions, "\n\n")
	}
	return json.Marshal(out)
}

// mergeCap merges two capability objects: a flag either sets is set.
func mergeCap(a, b json.RawMessage) json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, raw := range []json.RawMessage{a, b} {
		var o map[string]json.RawMessage
		if json.Unmarshal(raw, &o) != nil {
			continue
		}
		for k, v := range o {
			if string(v) == "true" || m[k] == nil {
				m[k] = v
			}
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// has reports whether the upstream offers capability name.
func (u *upstream) has(name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.caps[name]
	return ok
}

// routed answers a request of the client's other than tools, in front of
// several servers.
func (s *session) routed(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	switch req.Method {
	case "resources/list":
		return s.gather(ctx, "resources", req.Method, "resources", s.noteResources)
	case "resources/templates/list":
		return s.gather(ctx, "resources", req.Method, "resourceTemplates", s.noteTemplates)
	case "prompts/list":
		return s.gather(ctx, "prompts", req.Method, "prompts", s.renamePrompt)
	case "resources/subscribe", "resources/unsubscribe":
		return s.byURI(ctx, req)
	case "completion/complete":
		return s.complete(ctx, req)
	case "logging/setLevel":
		for _, u := range s.ups {
			if u.has("logging") {
				if _, err := u.forward(ctx, req.Method, req.Params); err != nil {
					s.g.logger().Warn("set an MCP server's log level", "server", u.srv.Name, "err", err)
				}
			}
		}
		return json.RawMessage(`{}`), nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not one the gateway routes across its servers", req.Method)}
}

// gather lists one kind of thing from every upstream that offers it, all
// pages, each item passed through each upstream's note.
func (s *session) gather(ctx context.Context, capability, method, key string, note func(*upstream, json.RawMessage) json.RawMessage) (json.RawMessage, error) {
	items := []json.RawMessage{}
	for _, u := range s.ups {
		if !u.has(capability) {
			continue
		}
		cursor := ""
		for page := 0; page <= maxPages; page++ {
			params := json.RawMessage(`{}`)
			if cursor != "" {
				params, _ = json.Marshal(map[string]string{"cursor": cursor})
			}
			result, err := u.forward(ctx, method, params)
			if err != nil {
				s.g.logger().Warn("list from an MCP server", "server", u.srv.Name, "method", method, "err", err)
				break
			}
			var r map[string]json.RawMessage
			var list []json.RawMessage
			if json.Unmarshal(result, &r) != nil || json.Unmarshal(r[key], &list) != nil {
				break
			}
			for _, it := range list {
				if it = note(u, it); it != nil {
					items = append(items, it)
				}
			}
			if json.Unmarshal(r["nextCursor"], &cursor) != nil || cursor == "" {
				break
			}
		}
	}
	return json.Marshal(map[string]any{key: items})
}

// noteResources remembers which upstream listed a resource's URI.
func (s *session) noteResources(u *upstream, item json.RawMessage) json.RawMessage {
	var r struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(item, &r) == nil && r.URI != "" {
		s.mu.Lock()
		if s.uris == nil {
			s.uris = map[string]*upstream{}
		}
		if other, ok := s.uris[r.URI]; ok && other != u {
			s.mu.Unlock()
			s.g.logger().Warn("two MCP servers list one resource URI: the first one serves it", "uri", r.URI, "server", other.srv.Name, "also", u.srv.Name)
			return nil
		}
		s.uris[r.URI] = u
		s.mu.Unlock()
	}
	return item
}

// noteTemplates remembers which upstream listed a URI template, by the
// literal part before its first expression.
func (s *session) noteTemplates(u *upstream, item json.RawMessage) json.RawMessage {
	var r struct {
		URITemplate string `json:"uriTemplate"`
	}
	if json.Unmarshal(item, &r) == nil && r.URITemplate != "" {
		prefix, _, _ := strings.Cut(r.URITemplate, "{")
		s.mu.Lock()
		s.templates = append(s.templates, templateRoute{prefix, u})
		s.mu.Unlock()
	}
	return item
}

// templateRoute is a URI template's literal prefix and its upstream.
type templateRoute struct {
	prefix string
	up     *upstream
}

// renamePrompt names a prompt <server>__<prompt>.
func (s *session) renamePrompt(u *upstream, item json.RawMessage) json.RawMessage {
	var r struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(item, &r) != nil || r.Name == "" {
		return nil
	}
	out, err := setParam(item, "name", u.srv.Name+"__"+r.Name)
	if err != nil {
		return nil
	}
	return out
}

// byServer finds the upstream and the name there of a thing the client
// knows as <server>__<name>.
func (s *session) byServer(name string) (*upstream, string, bool) {
	server, rest, ok := strings.Cut(name, "__")
	if !ok || rest == "" {
		return nil, "", false
	}
	for _, u := range s.ups {
		if u.srv.Name == server {
			return u, rest, true
		}
	}
	return nil, "", false
}

// byURI routes a request on a resource to the upstream that listed it.
func (s *session) byURI(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: req.Method + " needs a uri"}
	}
	u := s.resourceServer(p.URI)
	if u == nil {
		return nil, &jsonrpc.Error{Code: codeResourceNotFound, Message: fmt.Sprintf("resource %s: no MCP server of the gateway listed it (list resources first)", p.URI)}
	}
	return u.forward(ctx, req.Method, req.Params)
}

// resourceServer is the upstream that serves uri: the one that listed it,
// else the one whose template's prefix is the longest match, else the only
// one that offers resources.
func (s *session) resourceServer(uri string) *upstream {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.uris[uri]; u != nil {
		return u
	}
	var best *templateRoute
	for i, t := range s.templates {
		if strings.HasPrefix(uri, t.prefix) && (best == nil || len(t.prefix) > len(best.prefix)) {
			best = &s.templates[i]
		}
	}
	if best != nil {
		return best.up
	}
	offer := slices.DeleteFunc(slices.Clone(s.ups), func(u *upstream) bool { return !u.has("resources") })
	if len(offer) == 1 {
		return offer[0]
	}
	return nil
}

// complete routes completion/complete by the prompt or resource it
// completes an argument of.
func (s *session) complete(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	if p.Ref.Type == "ref/prompt" {
		u, name, ok := s.lookup(p.Ref.Name)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", p.Ref.Name)}
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(req.Params, &m)
		ref, err := setParam(m["ref"], "name", name)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		m["ref"] = ref
		params, _ := json.Marshal(m)
		return u.forward(ctx, req.Method, params)
	}
	u := s.resourceServer(p.Ref.URI)
	if u == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no MCP server of the gateway serves %s", p.Ref.URI)}
	}
	return u.forward(ctx, req.Method, req.Params)
}
