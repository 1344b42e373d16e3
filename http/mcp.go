package http

import (
	"context"

	"github.com/airlock-dev/airlock"
)

type releaseToolsInput struct {
	Body struct {
		Agent  string                   `json:"agent,omitempty" doc:"The agent the tools are offered to: an agent token's own when empty, and only its own."`
		Server string                   `json:"server" doc:"The MCP server's name, as in mcp__<server>__<tool>." minLength:"1"`
		Tools  []airlock.ToolDefinition `json:"tools" doc:"The server's listing: each tool's name and definition (name, title, description, input and output schema, annotations)."`
	}
}

type releaseToolsOutput struct {
	Body struct {
		Tools []airlock.ToolRelease `json:"tools" doc:"For each tool listed, in order: whether it may be offered and called, and if not, why and the request that would release it."`
	}
}

// releaseTools checks an MCP server's tool listing against the definitions
// pinned for the agent (gate.Enforcer.ReleaseTools): the MCP gateway
// asks before it offers a tool.
func (s *Server) releaseTools(ctx context.Context, in *releaseToolsInput) (*releaseToolsOutput, error) {
	t, err := s.allow(ctx, "release MCP tools", airlock.RoleAgent, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	agent := in.Body.Agent
	if agent == "" && t.Role == airlock.RoleAgent {
		agent = t.Agent
	}
	if err := s.actAs(ctx, t, agent, "release MCP tools"); err != nil {
		return nil, err
	}
	rs, err := s.Enforcer.ReleaseTools(ctx, agent, in.Body.Server, in.Body.Tools)
	if err != nil {
		return nil, err
	}
	out := &releaseToolsOutput{}
	out.Body.Tools = rs
	return out, nil
}
