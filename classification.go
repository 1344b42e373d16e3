package airlock

import (
	"strings"
)

// Class names what kind of side effect an action has ("fs.write",
// "net.http"). The built-in classes are listed below; policies may define
// more. Classes are computed by Airlock, never taken from the agent.
type Class string

// Built-in action classes.
const (
	ClassFSRead          Class = "fs.read"
	ClassFSWrite         Class = "fs.write"
	ClassFSMkdir         Class = "fs.mkdir"
	ClassFSCopy          Class = "fs.copy"
	ClassFSMove          Class = "fs.move"
	ClassFSDelete        Class = "fs.delete"
	ClassFSPermissions   Class = "fs.permissions"
	ClassProcessExec     Class = "process.exec"
	ClassProcessKill     Class = "process.kill"
	ClassNetHTTP         Class = "net.http"
	ClassNetConnect      Class = "net.connect"
	ClassNetSSEWrite     Class = "net.sse.write"
	ClassHostCall        Class = "host.call"
	ClassStoreWrite      Class = "store.write"
	ClassMetadataWrite   Class = "metadata.write"
	ClassCheckpointWrite Class = "checkpoint.write"
	ClassAgentStateWrite Class = "agent_state.write"
	ClassMCPCall         Class = "mcp.call"
	ClassMCPRelease      Class = "mcp.release"
	ClassMCPResourceRead Class = "mcp.resource.read" // an MCP server's resources/read, through the MCP gateway
	ClassMCPPromptGet    Class = "mcp.prompt.get"    // an MCP server's prompts/get, through the MCP gateway
	ClassGitRead         Class = "git.read"
	ClassGitWrite        Class = "git.write"
	ClassPackageInstall  Class = "package.install"
	ClassPackagePublish  Class = "package.publish" // an irreversible public release
	ClassSystemAdmin     Class = "system.admin"
	ClassInfraRead       Class = "infra.read"
	ClassInfraChange     Class = "infra.change"
	ClassCredentialsRead Class = "credentials.read"
	// ClassGateConfigure is a write to the gate's own configuration: an
	// agent host's or an editor's settings, at the user's level or a
	// project's (.claude/, .codex/, .gemini/, .mcp.json, .vscode/tasks.json,
	// ...), or Airlock's own tokens, keys, data and configuration
	// (sensitive.GateConfig). Such a write can switch the gate off or run
	// commands outside it, so the class is privileged: an agent never
	// reconfigures the gate without a person.
	ClassGateConfigure Class = "gate.configure"
	ClassShellEnv      Class = "shell.env"
	ClassShellBuiltin  Class = "shell.builtin"
	ClassSpend         Class = "spend"
	ClassUnknown       Class = "unknown"
)

// classTiers are the tiers the built-in classes have by nature: a command
// of a class may be raised above it (a write under /etc is privileged), not
// lowered below it.
var classTiers = map[Class]RiskTier{
	ClassFSRead: TierRead, ClassFSWrite: TierWrite, ClassFSMkdir: TierWrite, ClassFSCopy: TierWrite,
	ClassFSMove: TierWrite, ClassFSDelete: TierDestructive, ClassFSPermissions: TierWrite,
	ClassProcessExec: TierWrite, ClassProcessKill: TierDestructive, ClassNetHTTP: TierNetworkEgress,
	ClassNetConnect: TierNetworkEgress, ClassNetSSEWrite: TierNetworkEgress, ClassHostCall: TierWrite,
	ClassStoreWrite: TierWrite, ClassMetadataWrite: TierWrite, ClassCheckpointWrite: TierWrite,
	ClassAgentStateWrite: TierWrite, ClassMCPCall: TierWrite, ClassMCPRelease: TierNetworkEgress,
	ClassMCPResourceRead: TierRead, ClassMCPPromptGet: TierWrite,
	ClassGitRead: TierRead, ClassGitWrite: TierWrite, ClassPackageInstall: TierNetworkEgress,
	ClassPackagePublish: TierDestructive, ClassSystemAdmin: TierPrivileged, ClassInfraRead: TierNetworkEgress,
	ClassInfraChange: TierDestructive, ClassCredentialsRead: TierPrivileged, ClassShellEnv: TierPrivileged,
	ClassShellBuiltin: TierRead, ClassSpend: TierSpend, ClassUnknown: TierPrivileged, ClassGateConfigure: TierPrivileged,
}

// Tier returns the natural risk tier of a built-in class, and whether c is
// one.
func (c Class) Tier() (RiskTier, bool) {
	t, ok := classTiers[c]
	return t, ok
}

// Capability names the permission a class of action needs
// ("workspace.write_text", "network.egress").
type Capability string

// Built-in capabilities.
const (
	CapWorkspaceRead       Capability = "workspace.read"
	CapWorkspaceWrite      Capability = "workspace.write"
	CapWorkspaceWriteText  Capability = "workspace.write_text"
	CapWorkspaceWriteBytes Capability = "workspace.write_bytes"
	CapWorkspaceDelete     Capability = "workspace.delete"
	CapProcessExec         Capability = "process.exec"
	CapProcessSignal       Capability = "process.signal"
	CapNetworkEgress       Capability = "network.egress"
	CapHostCall            Capability = "host.call"
	CapHostAdmin           Capability = "host.admin"
	CapStoreWrite          Capability = "store.write"
	CapMetadataWrite       Capability = "metadata.write"
	CapCheckpointWrite     Capability = "checkpoint.write"
	CapAgentStateWrite     Capability = "agent_state.write"
	CapMCPCall             Capability = "mcp.call"
	CapMCPRelease          Capability = "mcp.release"
	CapGitRead             Capability = "git.read"
	CapGitWrite            Capability = "git.write"
	CapCredentialsRead     Capability = "credentials.read"
	CapGateConfigure       Capability = "gate.configure"
	CapShellState          Capability = "shell.state"
	CapSpend               Capability = "spend"
	CapUnknown             Capability = "unknown"
)

// Classification is what Airlock computed an action to be. For a shell
// command, Commands holds every command found in the parsed script, and the
// class, capability and tier are those of the most dangerous one.
type Classification struct {
	Class      Class      `json:"class"`
	Capability Capability `json:"capability"`
	Tier       RiskTier   `json:"tier"`
	// Reason says in a few words why Airlock classified the action this way.
	Reason string `json:"reason,omitempty"`
	// Source is what produced the classification: "catalog", "shell",
	// "classifier <id> (<file:line>)", "unknown tool".
	Source string `json:"source,omitempty"`
	// Commands lists every command a shell script would run, in source order.
	Commands []Command `json:"commands,omitempty"`
	// Opaque is set when a shell script or a patch could not be analysed (a
	// parse error or a limit reached). An opaque action is always denied.
	Opaque string `json:"opaque,omitempty"`
	// Generic is set when Airlock knows only the kind of tool (an MCP call)
	// or nothing at all (class unknown). A policy classifier may replace a
	// generic classification, even with a lower tier; it can only raise a
	// specific one.
	Generic bool `json:"generic,omitempty"`
}

// Command is one effect found in a shell script: a program it runs, or a
// redirection that writes a file.
type Command struct {
	// Text is the command as Airlock understood it: words separated by single
	// spaces, quoted where needed; dynamic words ($VAR, $(…)) appear as
	// written. Redirections read "> file". Policy `command:` patterns match
	// this text.
	Text string `json:"text"`
	// Name is the program ("rm"), or "" for a redirection.
	Name       string     `json:"name,omitempty"`
	Class      Class      `json:"class"`
	Capability Capability `json:"capability"`
	Tier       RiskTier   `json:"tier"`
	Reason     string     `json:"reason,omitempty"`
	// Via lists the wrappers the command ran through, outermost first
	// ("sudo", "sh -c", "xargs").
	Via []string `json:"via,omitempty"`
	// Line and Col locate the command in the outermost script (1-based).
	Line int `json:"line,omitempty"`
	Col  int `json:"col,omitempty"`
	// Generic is set when Airlock does not know the program and classified it
	// only as "runs a program"; a policy classifier may replace a generic
	// classification with a lower tier, never a specific one.
	Generic bool `json:"generic,omitempty"`
	// Inert is set for commands that change nothing outside the shell itself
	// (cd, echo, true, a plain variable assignment). They are listed for the
	// reviewer but take no part in the decision.
	Inert bool `json:"inert,omitempty"`
}

// String returns "class/capability (tier)".
func (c Classification) String() string {
	var b strings.Builder
	b.WriteString(string(c.Class))
	if c.Capability != "" {
		b.WriteString("/")
		b.WriteString(string(c.Capability))
	}
	b.WriteString(" (")
	b.WriteString(c.Tier.String())
	b.WriteString(")")
	return b.String()
}
