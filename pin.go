package airlock

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// An MCP server can change what a tool says it does after a person let an
// agent use it — a rug pull — or add a tool nobody looked at. Airlock pins
// each tool's definition: the server's first listing is pinned as it is,
// and a definition that differs later, or a tool that appears later, is
// withheld from the agent until a person releases it (an action of class
// mcp.release that the policy decides, by default asking a person, with
// the change shown as a diff). The MCP gateway (package mcp) asks.

// ToolReleaseTool is the tool of the action that releases a tool
// definition: class mcp.release, tier privileged.
const ToolReleaseTool = "mcp.release"

// ToolDefinition is a tool as an MCP server lists it: the parts a person
// approves — name, title, description, input and output schema,
// annotations — as one JSON object.
type ToolDefinition struct {
	Name       string          `json:"name"`
	Definition json.RawMessage `json:"definition"`
}

// Hash is SHA-256 over the definition's RFC 8785 canonical JSON: key order
// and white space do not change it, any other byte does. Errors: EINVALID.
func (d ToolDefinition) Hash() (Hash, error) {
	v := jsontext.Value(bytes.Clone(d.Definition))
	if err := v.Canonicalize(); err != nil {
		return Hash{}, Errorf(EINVALID, "tool %s: definition: %v", d.Name, err)
	}
	if !bytes.HasPrefix(v, []byte("{")) {
		return Hash{}, Errorf(EINVALID, "tool %s: the definition is not a JSON object", d.Name)
	}
	return sha256.Sum256(v), nil
}

// ToolPin is a tool definition released to an agent for one MCP server:
// pinned at the server's first listing, or released by a person later.
type ToolPin struct {
	Agent      string          `json:"agent"`
	Server     string          `json:"server"`
	Tool       string          `json:"tool"`
	Hash       Hash            `json:"hash"`
	Definition json.RawMessage `json:"definition"`
	// ApprovalID is the release request that let it in; "" for a pin of
	// the first listing (or a release the policy allowed on its own).
	ApprovalID string    `json:"approval_id,omitempty"`
	Created    time.Time `json:"created"`
}

// Validate reports whether the pin is well formed.
func (p ToolPin) Validate() error {
	switch {
	case p.Agent == "" || p.Server == "" || p.Tool == "":
		return Errorf(EINVALID, "a tool pin needs an agent, a server and a tool")
	case p.Hash.IsZero():
		return Errorf(EINVALID, "tool pin %s/%s has no hash", p.Server, p.Tool)
	case !json.Valid(p.Definition):
		return Errorf(EINVALID, "tool pin %s/%s: the definition is not JSON", p.Server, p.Tool)
	}
	return nil
}

// ToolRelease says whether a tool may be offered to the agent and called.
type ToolRelease struct {
	Name     string `json:"name"`
	Hash     Hash   `json:"hash"`
	Released bool   `json:"released"`
	// Code and Message say why not: CodeToolChanged (a person has not
	// released it), or CodeUnavailable / CodeInvalid.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Approval is the release request, when one is queued.
	Approval *Approval `json:"approval,omitempty"`
}

// Events of tool pinning.
const (
	EventToolsPinned  = "mcp.tools.pinned"  // a server's first listing was pinned
	EventToolReleased = "mcp.tool.released" // a new or changed definition was released
)
