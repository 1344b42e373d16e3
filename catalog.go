package airlock

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/sensitive"
)

// toolKind says how the catalog looks at a tool's arguments to refine its
// classification.
type toolKind uint8

const (
	kindPlain    toolKind = iota
	kindRead              // reads paths: reading a credential store is privileged
	kindWrite             // writes paths: writing under a system path is privileged
	kindCopyMove          // reads sources, writes destinations
	kindShell             // runs a shell script (args.command)
	kindArgv              // runs a program without a shell (args.argv, or command + args)
	kindGitPush           // pushes; args.force makes it destructive
)

// toolSpec is the catalog's knowledge of one tool.
type toolSpec struct {
	class      Class
	capability Capability
	tier       RiskTier
	kind       toolKind
	reason     string
}

// catalog is the built-in classification of tool names (DESIGN §1): the
// file, process, host, store, metadata, checkpoint, agent-state, SSE, MCP
// and git builtins, and the tools of common coding agents.
var catalog = map[string]toolSpec{
	// Files.
	"write_file":       {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "writes a file"},
	"write_file_bytes": {ClassFSWrite, CapWorkspaceWriteBytes, TierWrite, kindWrite, "writes a binary file"},
	"append_file":      {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "appends to a file"},
	"mkdir":            {ClassFSMkdir, CapWorkspaceWrite, TierWrite, kindWrite, "creates a directory"},
	"copy_file":        {ClassFSCopy, CapWorkspaceWrite, TierWrite, kindCopyMove, "copies a file"},
	"move_file":        {ClassFSMove, CapWorkspaceWrite, TierWrite, kindCopyMove, "moves a file"},
	"delete_file":      {ClassFSDelete, CapWorkspaceDelete, TierDestructive, kindPlain, "deletes a file"},
	"read_file":        {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "reads a file"},
	"list_dir":         {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "lists a directory"},
	"list_directory":   {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "lists a directory"},
	"file.read":        {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "reads a file"},
	"file.write":       {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "writes a file"},
	"file.edit":        {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "edits a file"},
	"file.patch":       {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "patches a file"},

	// Processes.
	"exec":          {ClassProcessExec, CapProcessExec, TierWrite, kindArgv, "runs a program"},
	"exec_at":       {ClassProcessExec, CapProcessExec, TierWrite, kindArgv, "runs a program in a directory"},
	"process.start": {ClassProcessExec, CapProcessExec, TierWrite, kindArgv, "starts a process"},
	"shell":         {ClassProcessExec, CapProcessExec, TierWrite, kindShell, "runs a shell command"},
	"shell_at":      {ClassProcessExec, CapProcessExec, TierWrite, kindShell, "runs a shell command in a directory"},
	"shell.exec":    {ClassProcessExec, CapProcessExec, TierWrite, kindShell, "runs a shell command"},
	"process.kill":  {ClassProcessKill, CapProcessSignal, TierDestructive, kindPlain, "kills a process"},

	// Host, stores and agent state.
	"host_call":           {ClassHostCall, CapHostCall, TierWrite, kindPlain, "calls a host function"},
	"store.write":         {ClassStoreWrite, CapStoreWrite, TierWrite, kindPlain, "writes to a store"},
	"store.put":           {ClassStoreWrite, CapStoreWrite, TierWrite, kindPlain, "writes to a store"},
	"store.delete":        {ClassStoreWrite, CapStoreWrite, TierDestructive, kindPlain, "deletes from a store"},
	"metadata.write":      {ClassMetadataWrite, CapMetadataWrite, TierWrite, kindPlain, "writes metadata"},
	"metadata.set":        {ClassMetadataWrite, CapMetadataWrite, TierWrite, kindPlain, "writes metadata"},
	"checkpoint.write":    {ClassCheckpointWrite, CapCheckpointWrite, TierWrite, kindPlain, "writes a checkpoint"},
	"checkpoint.save":     {ClassCheckpointWrite, CapCheckpointWrite, TierWrite, kindPlain, "writes a checkpoint"},
	"agent_state.write":   {ClassAgentStateWrite, CapAgentStateWrite, TierWrite, kindPlain, "writes the agent's state"},
	"agent_state.set":     {ClassAgentStateWrite, CapAgentStateWrite, TierWrite, kindPlain, "writes the agent's state"},
	"sse.write":           {ClassNetSSEWrite, CapNetworkEgress, TierNetworkEgress, kindPlain, "sends server-sent events"},
	"sse.send":            {ClassNetSSEWrite, CapNetworkEgress, TierNetworkEgress, kindPlain, "sends server-sent events"},
	"net.sse.write":       {ClassNetSSEWrite, CapNetworkEgress, TierNetworkEgress, kindPlain, "sends server-sent events"},
	"mcp_release":         {ClassMCPRelease, CapMCPRelease, TierNetworkEgress, kindPlain, "releases held MCP results to the outside"},
	"git.status":          {ClassGitRead, CapGitRead, TierRead, kindPlain, "reads the repository's status"},
	"git.log":             {ClassGitRead, CapGitRead, TierRead, kindPlain, "reads the history"},
	"git.diff":            {ClassGitRead, CapGitRead, TierRead, kindPlain, "reads changes"},
	"git.fetch":           {ClassGitRead, CapNetworkEgress, TierNetworkEgress, kindPlain, "fetches from a remote"},
	"git.pull":            {ClassGitWrite, CapNetworkEgress, TierNetworkEgress, kindPlain, "pulls from a remote"},
	"git.clone":           {ClassGitWrite, CapNetworkEgress, TierNetworkEgress, kindPlain, "clones a repository"},
	"git.add":             {ClassGitWrite, CapGitWrite, TierWrite, kindPlain, "stages changes"},
	"git.commit":          {ClassGitWrite, CapGitWrite, TierWrite, kindPlain, "commits"},
	"git.rebase":          {ClassGitWrite, CapGitWrite, TierWrite, kindPlain, "rebases (rewrites local history)"},
	"git.push":            {ClassGitWrite, CapNetworkEgress, TierNetworkEgress, kindGitPush, "pushes to a remote"},
	"git.worktree.create": {ClassGitWrite, CapGitWrite, TierWrite, kindPlain, "creates a worktree"},
	"git.worktree.remove": {ClassGitWrite, CapWorkspaceDelete, TierDestructive, kindPlain, "removes a worktree and its files"},

	// Claude Code.
	"Bash":         {ClassProcessExec, CapProcessExec, TierWrite, kindShell, "runs a shell command"},
	"BashOutput":   {ClassFSRead, CapWorkspaceRead, TierRead, kindPlain, "reads a background shell's output"},
	"KillShell":    {ClassProcessKill, CapProcessSignal, TierWrite, kindPlain, "stops a background shell the agent started"},
	"Read":         {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "reads a file"},
	"Grep":         {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "searches files"},
	"Glob":         {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "lists files"},
	"LS":           {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "lists a directory"},
	"NotebookRead": {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "reads a notebook"},
	"Edit":         {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "edits a file"},
	"MultiEdit":    {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "edits a file"},
	"Write":        {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "writes a file"},
	"NotebookEdit": {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "edits a notebook"},
	"WebFetch":     {ClassNetHTTP, CapNetworkEgress, TierNetworkEgress, kindPlain, "fetches a URL"},
	"WebSearch":    {ClassNetHTTP, CapNetworkEgress, TierNetworkEgress, kindPlain, "searches the web"},
	"TodoWrite":    {ClassAgentStateWrite, CapAgentStateWrite, TierRead, kindPlain, "updates the agent's own task list"},

	// Other coding agents (Gemini CLI, Codex, Cursor).
	"run_shell_command":   {ClassProcessExec, CapProcessExec, TierWrite, kindShell, "runs a shell command"},
	"run_terminal_cmd":    {ClassProcessExec, CapProcessExec, TierWrite, kindShell, "runs a shell command"},
	"local_shell":         {ClassProcessExec, CapProcessExec, TierWrite, kindArgv, "runs a program"},
	"container.exec":      {ClassProcessExec, CapProcessExec, TierWrite, kindArgv, "runs a program"},
	"apply_patch":         {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindPlain, "applies a patch"},
	"edit_file":           {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "edits a file"},
	"replace":             {ClassFSWrite, CapWorkspaceWriteText, TierWrite, kindWrite, "edits a file"},
	"read_many_files":     {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "reads files"},
	"search_file_content": {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "searches files"},
	"grep_search":         {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "searches files"},
	"file_search":         {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "finds files"},
	"codebase_search":     {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "searches the codebase"},
	"glob":                {ClassFSRead, CapWorkspaceRead, TierRead, kindRead, "lists files"},
	"web_fetch":           {ClassNetHTTP, CapNetworkEgress, TierNetworkEgress, kindPlain, "fetches a URL"},
	"google_web_search":   {ClassNetHTTP, CapNetworkEgress, TierNetworkEgress, kindPlain, "searches the web"},
	"save_memory":         {ClassAgentStateWrite, CapAgentStateWrite, TierWrite, kindPlain, "writes the agent's memory"},
}

// Argument names the catalog reads. Tools differ in what they call a path.
var (
	readPathKeys  = []string{"path", "file_path", "notebook_path", "paths", "file_paths", "target_file", "absolute_path"}
	writePathKeys = []string{"path", "file_path", "notebook_path", "paths", "target_file", "absolute_path", "destination", "dest", "dst", "target", "to", "new_path"}
	sourceKeys    = []string{"source", "src", "from", "path", "old_path"}
	scriptKeys    = []string{"command", "cmd", "script"}
	dirKeys       = []string{"cwd", "dir", "workdir", "working_directory", "directory"}
)

// catalogKeys are every argument the catalog reads.
var catalogKeys = func() map[string]bool {
	m := map[string]bool{"argv": true, "args": true, "force": true, "force_with_lease": true, "delete": true}
	for _, keys := range [][]string{readPathKeys, writePathKeys, sourceKeys, scriptKeys, dirKeys} {
		for _, k := range keys {
			m[k] = true
		}
	}
	return m
}()

// mcpTool splits an MCP tool name, mcp__<server>__<tool>.
func mcpTool(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// classifyBuiltin classifies an action with the built-in catalog alone,
// and sh for shell commands. A tool the catalog does not know is class
// unknown.
func classifyBuiltin(sh ShellAnalyser, x *activation) Classification {
	a := x.a
	spec, ok := catalog[a.Tool]
	if !ok {
		if server, tool, ok := mcpTool(a.Tool); ok {
			return Classification{
				Class: ClassMCPCall, Capability: CapMCPCall, Tier: TierWrite, Source: "catalog",
				Reason:  "calls tool " + tool + " of MCP server " + server,
				Generic: true,
			}
		}
		return unknownTool(a.Tool)
	}
	c := Classification{Class: spec.class, Capability: spec.capability, Tier: spec.tier, Source: "catalog", Reason: spec.reason}
	if spec.kind == kindPlain {
		return c
	}
	args := x.args // decoded already when a condition ran first
	if !x.decoded {
		args = pickArgs(a.Args, catalogKeys)
	}
	cwd := a.Cwd
	if d, ok := firstString(args, dirKeys); ok {
		cwd = sensitive.Clean(d, a.Cwd)
	}
	switch spec.kind {
	case kindRead:
		raiseForCredentials(&c, stringsArg(args, readPathKeys), cwd)
	case kindWrite:
		raiseForSystemPaths(&c, stringsArg(args, writePathKeys), cwd)
	case kindCopyMove:
		raiseForCredentials(&c, stringsArg(args, sourceKeys), cwd)
		dests := stringsArg(args, []string{"destination", "dest", "dst", "to", "target", "new_path"})
		if spec.class == ClassFSMove {
			dests = append(dests, stringsArg(args, sourceKeys)...) // moving a system file away changes the system
		}
		raiseForSystemPaths(&c, dests, cwd)
	case kindGitPush:
		if truthy(args["force"]) || truthy(args["force_with_lease"]) || truthy(args["delete"]) {
			c.Tier, c.Reason = TierDestructive, "pushes with force or deletes a remote branch"
		}
	case kindShell:
		script, ok := firstString(args, scriptKeys)
		if !ok {
			return opaque(c, "the call has no command string (args.command)")
		}
		if sh == nil {
			return opaque(c, errNoShellAnalyser)
		}
		cmds, err := sh.AnalyseScript(script, cwd)
		if err != nil {
			return opaque(c, err.Error())
		}
		c.Source = "shell"
		c.Commands = cmds
		aggregate(&c)
	case kindArgv:
		argv, err := argvOf(args)
		if err != nil {
			return opaque(c, err.Error())
		}
		if sh == nil {
			return opaque(c, errNoShellAnalyser)
		}
		var cmds []Command
		if argv == nil { // a command line without an argument list: run by a shell
			script, _ := firstString(args, scriptKeys)
			cmds, err = sh.AnalyseScript(script, cwd)
		} else {
			cmds, err = sh.AnalyseArgv(argv, cwd)
		}
		if err != nil {
			return opaque(c, err.Error())
		}
		c.Source = "shell"
		c.Commands = cmds
		aggregate(&c)
	}
	return c
}

// errNoShellAnalyser is why a gate built without a ShellAnalyser denies
// every shell command.
const errNoShellAnalyser = "the gate has no shell analyser (see airlock.ShellAnalyser and package shell)"

func unknownTool(name string) Classification {
	return Classification{
		Class: ClassUnknown, Capability: CapUnknown, Tier: TierPrivileged, Source: "unknown tool",
		Reason:  "no classifier knows tool " + strconv.Quote(name),
		Generic: true,
	}
}

// opaque marks a script that could not be analysed: the decision will be
// the strictest one.
func opaque(c Classification, why string) Classification {
	c.Class, c.Capability, c.Tier = ClassUnknown, CapUnknown, TierPrivileged
	c.Source, c.Reason, c.Opaque = "shell", "the command could not be analysed", why
	return c
}

// aggregate sets a script's class, capability and tier to those of its most
// dangerous command (the first one on ties). A script of inert commands only
// is a read.
func aggregate(c *Classification) {
	best := -1
	for i := range c.Commands {
		cmd := &c.Commands[i]
		if cmd.Inert {
			continue
		}
		if best < 0 || cmd.Tier > c.Commands[best].Tier {
			best = i
		}
	}
	if best < 0 {
		c.Class, c.Capability, c.Tier = ClassShellBuiltin, CapShellState, TierRead
		c.Reason = "runs only shell built-ins"
		return
	}
	cmd := c.Commands[best]
	c.Class, c.Capability, c.Tier = cmd.Class, cmd.Capability, cmd.Tier
	c.Reason = fmt.Sprintf("%s: %s", cmd.Text, cmd.Reason)
}

func raiseForSystemPaths(c *Classification, paths []string, cwd string) {
	for _, p := range paths {
		if _, ok := sensitive.SystemPlace(sensitive.Clean(p, cwd), false); ok {
			c.Tier = TierPrivileged
			c.Capability = CapHostAdmin
			c.Reason = fmt.Sprintf("%s under a system path: %s", c.Reason, sensitive.Clean(p, cwd))
			return
		}
	}
}

func raiseForCredentials(c *Classification, paths []string, cwd string) {
	for _, p := range paths {
		if what, ok := sensitive.Secret(sensitive.Clean(p, cwd), false); ok {
			c.Class, c.Capability, c.Tier = ClassCredentialsRead, CapCredentialsRead, TierPrivileged
			c.Reason = fmt.Sprintf("reads %s: %s", what, sensitive.Clean(p, cwd))
			return
		}
	}
}

// argvOf reads an exec-style argument list: args.argv, or args.command with
// args.args. It returns nil, nil when there is only a command line.
func argvOf(args map[string]any) ([]string, error) {
	if v, ok := args["argv"]; ok {
		argv, ok := stringList(v)
		if !ok || len(argv) == 0 {
			return nil, fmt.Errorf("args.argv must be a non-empty list of strings")
		}
		return argv, nil
	}
	cmd, ok := args["command"].(string)
	if !ok {
		if list, isList := stringList(args["command"]); isList && len(list) > 0 {
			return list, nil
		}
		return nil, fmt.Errorf("the call has neither args.argv nor args.command")
	}
	if v, ok := args["args"]; ok {
		rest, ok := stringList(v)
		if !ok {
			return nil, fmt.Errorf("args.args must be a list of strings")
		}
		return append([]string{cmd}, rest...), nil
	}
	return nil, nil
}

func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func firstString(args map[string]any, keys []string) (string, bool) {
	for _, k := range keys {
		if s, ok := args[k].(string); ok {
			return s, true
		}
	}
	return "", false
}

// stringsArg collects the string values (or lists of strings) of keys.
func stringsArg(args map[string]any, keys []string) []string {
	var out []string
	for _, k := range keys {
		switch v := args[k].(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true" || v == "yes" || v == "1"
	case int64:
		return v != 0
	case float64:
		return v != 0
	}
	return false
}

// CatalogEntry describes one tool the built-in catalog knows.
type CatalogEntry struct {
	Tool       string
	Class      Class
	Capability Capability
	Tier       RiskTier
	Reason     string
}

// Catalog lists the built-in catalog, sorted by tool name. MCP tools
// (mcp__<server>__<tool>) are class mcp.call, tier write, unless a policy
// classifier says otherwise; unknown tools are class unknown.
func Catalog() []CatalogEntry {
	out := make([]CatalogEntry, 0, len(catalog))
	for name, s := range catalog {
		out = append(out, CatalogEntry{Tool: name, Class: s.class, Capability: s.capability, Tier: s.tier, Reason: s.reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}
