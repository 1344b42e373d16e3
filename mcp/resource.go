package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// A resource read and a prompt are decided and recorded like a tool call:
// a server's resources/read runs its code to serve the URI (a file of the
// disk, a database row, a URL fetched), its prompts/get runs its code with
// the client's arguments. Their actions are mcp__<server>__resources/read
// with args {"uri": …} and mcp__<server>__prompts/get with args {"name": …,
// "arguments": {…}}; the upstream gets exactly those params.

// resourceParams are the params of a resources/read as the gateway reads
// them.
type resourceParams struct {
	URI  string      `json:"uri"`
	Meta requestMeta `json:"_meta"`
}

// readResource decides a resources/read and forwards it when Airlock
// allows it. A refusal is a JSON-RPC error (a resource's result has no
// error flag) whose message says the code, why and what to do next.
func (s *session) readResource(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	var p resourceParams
	if err := readParams(req.Method, req.Params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, invalidParams(req.Method + " needs a uri")
	}
	token, err := p.Meta.token()
	if err != nil {
		return nil, err
	}
	u := s.ups[0]
	if len(s.ups) > 1 {
		if u = s.resourceServer(p.URI); u == nil {
			return nil, &jsonrpc.Error{Code: codeResourceNotFound, Message: fmt.Sprintf("resource %s: no MCP server of the gateway listed it (list resources first)", p.URI)}
		}
	}
	args, err := decidedObject(map[string]any{"uri": p.URI})
	if err != nil {
		return nil, invalidParams(req.Method + ": " + err.Error())
	}
	return s.gated(ctx, u, req, catalog.MCPResourceRead, args, token)
}

// promptParams are the params of a prompts/get as the gateway reads them.
type promptParams struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Meta      requestMeta    `json:"_meta"`
}

// getPrompt decides a prompts/get and forwards it when Airlock allows it.
// In front of several servers, a prompt is named <server>__<prompt>.
func (s *session) getPrompt(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	var p promptParams
	if err := readParams(req.Method, req.Params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, invalidParams(req.Method + " needs a name")
	}
	token, err := p.Meta.token()
	if err != nil {
		return nil, err
	}
	u, name := s.ups[0], p.Name
	if len(s.ups) > 1 {
		var ok bool
		if u, name, ok = s.byServer(p.Name); !ok {
			return nil, invalidParams(fmt.Sprintf("unknown prompt %q: the gateway's are named <server>__<name>", p.Name))
		}
	}
	decided := map[string]any{"name": name}
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		if p.Arguments.Kind() != '{' {
			return nil, invalidParams(req.Method + " arguments must be an object")
		}
		decided["arguments"] = json.RawMessage(p.Arguments)
	}
	args, err := decidedObject(decided)
	if err != nil {
		return nil, invalidParams(req.Method + ": " + err.Error())
	}
	return s.gated(ctx, u, req, catalog.MCPPromptGet, args, token)
}

// gated decides the action of method on upstream u with args, and
// forwards args (with the progress token) when it is allowed.
func (s *session) gated(ctx context.Context, u *upstream, req *jsonrpc.Request, method string, args json.RawMessage, token jsontext.Value) (json.RawMessage, error) {
	a := airlock.Action{Agent: s.agent, Tool: catalog.MCPTool(u.srv.Name, method), Args: args, SessionID: s.id, CallID: idText(req.ID)}
	enf, err := s.decide(ctx, a, token)
	if err != nil {
		return nil, err
	}
	if !enf.Allowed {
		return nil, refusedError(enf.Code, enf.Message, enf.Approval)
	}
	if !decidedAs(enf, a) {
		return nil, refusedError(airlock.CodeDenied, notDecidedAs, enf.Approval)
	}
	return s.forwardDecided(ctx, u, enf, method, withMeta(args, token), false)
}

// decidedObject encodes the members of a decided request as the action's
// arguments: strictly checked and canonical, the bytes the action hash
// covers and the upstream gets.
func decidedObject(members map[string]any) (json.RawMessage, error) {
	b, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	args, err := airlock.CanonicalArgs(b)
	if err != nil {
		return nil, fmt.Errorf("%s", airlock.ErrorMessage(err))
	}
	return args, nil
}

// JSON-RPC error codes of the gateway's own (the range -32000 to -32099
// is the server's to define): MCP's for a resource not found, and
// Airlock's refusal of a request whose answer cannot say it was refused
// (a resource, a prompt); its data carries airlock/code and
// airlock/approval as a tool result's _meta does.
const (
	codeResourceNotFound = -32002
	codeRefused          = -32010
)

// refusedError is the JSON-RPC error of a resource read or a prompt that
// did not run: its message says the stable code, why, and what to do next.
func refusedError(code, message string, ap *airlock.Approval) *jsonrpc.Error {
	text, meta := refusal(code, message, ap)
	data, _ := json.Marshal(meta)
	return &jsonrpc.Error{Code: codeRefused, Message: text, Data: data}
}
