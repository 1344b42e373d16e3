package catalog

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock"
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
	kindPatch             // applies a Codex patch (args.command, args.input or args.patch)
	kindStdin             // types args.chars into a running command
	kindMonitor           // watches a shell command's output (args.command) or a WebSocket (args.ws)
)

// toolSpec is the catalog's knowledge of one tool.
type toolSpec struct {
	class      airlock.Class
	capability airlock.Capability
	tier       airlock.RiskTier
	kind       toolKind
	reason     string
}

// argRaise raises a call whose argument key has one of values.
type argRaise struct {
	key        string
	values     []string
	class      airlock.Class
	capability airlock.Capability
	tier       airlock.RiskTier
	reason     string
}

// catalog is the built-in classification of tool names (docs/POLICY.md, Classification): the
// file, process, host, store, metadata, checkpoint, agent-state, SSE, MCP
// and git builtins, and the tools of common coding agents.
var catalog = map[string]toolSpec{
	// Files.
	"write_file":       {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "writes a file"},
	"write_file_bytes": {airlock.ClassFSWrite, airlock.CapWorkspaceWriteBytes, airlock.TierWrite, kindWrite, "writes a binary file"},
	"append_file":      {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "appends to a file"},
	"mkdir":            {airlock.ClassFSMkdir, airlock.CapWorkspaceWrite, airlock.TierWrite, kindWrite, "creates a directory"},
	"copy_file":        {airlock.ClassFSCopy, airlock.CapWorkspaceWrite, airlock.TierWrite, kindCopyMove, "copies a file"},
	"move_file":        {airlock.ClassFSMove, airlock.CapWorkspaceWrite, airlock.TierWrite, kindCopyMove, "moves a file"},
	"delete_file":      {airlock.ClassFSDelete, airlock.CapWorkspaceDelete, airlock.TierDestructive, kindWrite, "deletes a file"},
	"read_file":        {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "reads a file"},
	"list_dir":         {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "lists a directory"},
	"list_directory":   {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "lists a directory"},
	"file.read":        {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "reads a file"},
	"file.write":       {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "writes a file"},
	"file.edit":        {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "edits a file"},
	"file.patch":       {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "patches a file"},

	// Processes.
	"exec":          {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindArgv, "runs a program"},
	"exec_at":       {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindArgv, "runs a program in a directory"},
	"process.start": {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindArgv, "starts a process"},
	"shell":         {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"shell_at":      {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command in a directory"},
	"shell.exec":    {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"process.kill":  {airlock.ClassProcessKill, airlock.CapProcessSignal, airlock.TierDestructive, kindPlain, "kills a process"},

	// Host, stores and agent state.
	"host_call":             {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "calls a host function"},
	"store.write":           {airlock.ClassStoreWrite, airlock.CapStoreWrite, airlock.TierWrite, kindPlain, "writes to a store"},
	"store.put":             {airlock.ClassStoreWrite, airlock.CapStoreWrite, airlock.TierWrite, kindPlain, "writes to a store"},
	"store.delete":          {airlock.ClassStoreWrite, airlock.CapStoreWrite, airlock.TierDestructive, kindPlain, "deletes from a store"},
	"metadata.write":        {airlock.ClassMetadataWrite, airlock.CapMetadataWrite, airlock.TierWrite, kindPlain, "writes metadata"},
	"metadata.set":          {airlock.ClassMetadataWrite, airlock.CapMetadataWrite, airlock.TierWrite, kindPlain, "writes metadata"},
	"checkpoint.write":      {airlock.ClassCheckpointWrite, airlock.CapCheckpointWrite, airlock.TierWrite, kindPlain, "writes a checkpoint"},
	"checkpoint.save":       {airlock.ClassCheckpointWrite, airlock.CapCheckpointWrite, airlock.TierWrite, kindPlain, "writes a checkpoint"},
	"agent_state.write":     {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierWrite, kindPlain, "writes the agent's state"},
	"agent_state.set":       {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierWrite, kindPlain, "writes the agent's state"},
	"sse.write":             {airlock.ClassNetSSEWrite, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "sends server-sent events"},
	"sse.send":              {airlock.ClassNetSSEWrite, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "sends server-sent events"},
	"net.sse.write":         {airlock.ClassNetSSEWrite, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "sends server-sent events"},
	"mcp_release":           {airlock.ClassMCPRelease, airlock.CapMCPRelease, airlock.TierNetworkEgress, kindPlain, "releases held MCP results to the outside"},
	airlock.ToolReleaseTool: {airlock.ClassMCPRelease, airlock.CapMCPRelease, airlock.TierPrivileged, kindPlain, "releases an MCP server's new or changed tool definition to the agent, which may then call it"},
	"git.status":            {airlock.ClassGitRead, airlock.CapGitRead, airlock.TierRead, kindPlain, "reads the repository's status"},
	"git.log":               {airlock.ClassGitRead, airlock.CapGitRead, airlock.TierRead, kindPlain, "reads the history"},
	"git.diff":              {airlock.ClassGitRead, airlock.CapGitRead, airlock.TierRead, kindPlain, "reads changes"},
	"git.fetch":             {airlock.ClassGitRead, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "fetches from a remote"},
	"git.pull":              {airlock.ClassGitWrite, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "pulls from a remote"},
	"git.clone":             {airlock.ClassGitWrite, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "clones a repository"},
	"git.add":               {airlock.ClassGitWrite, airlock.CapGitWrite, airlock.TierWrite, kindPlain, "stages changes"},
	"git.commit":            {airlock.ClassGitWrite, airlock.CapGitWrite, airlock.TierWrite, kindPlain, "commits"},
	"git.rebase":            {airlock.ClassGitWrite, airlock.CapGitWrite, airlock.TierWrite, kindPlain, "rebases (rewrites local history)"},
	"git.push":              {airlock.ClassGitWrite, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindGitPush, "pushes to a remote"},
	"git.worktree.create":   {airlock.ClassGitWrite, airlock.CapGitWrite, airlock.TierWrite, kindPlain, "creates a worktree"},
	"git.worktree.remove":   {airlock.ClassGitWrite, airlock.CapWorkspaceDelete, airlock.TierDestructive, kindPlain, "removes a worktree and its files"},

	// Claude Code 2.1 (the tool names its binary defines, and the older
	// names it still accepts as aliases; MultiEdit, LS and NotebookRead
	// are from earlier releases).
	"Bash":                   {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"PowerShell":             {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierPrivileged, kindPlain, "runs a PowerShell command, which Airlock cannot analyse"},
	"Monitor":                {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindMonitor, "watches a command's output"},
	"REPL":                   {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindPlain, "runs JavaScript that Airlock cannot inspect"},
	"TaskOutput":             {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads a background task's output"},
	"BashOutput":             {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads a background task's output"},
	"BashOutputTool":         {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads a background task's output"},
	"AgentOutput":            {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads a background task's output"},
	"AgentOutputTool":        {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads a background task's output"},
	"TaskStop":               {airlock.ClassProcessKill, airlock.CapProcessSignal, airlock.TierWrite, kindPlain, "stops a background task the agent started"},
	"KillShell":              {airlock.ClassProcessKill, airlock.CapProcessSignal, airlock.TierWrite, kindPlain, "stops a background task the agent started"},
	"KillBash":               {airlock.ClassProcessKill, airlock.CapProcessSignal, airlock.TierWrite, kindPlain, "stops a background task the agent started"},
	"Read":                   {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "reads a file"},
	"Grep":                   {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "searches files"},
	"Glob":                   {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "lists files"},
	"LS":                     {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "lists a directory"},
	"LSP":                    {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "looks up definitions and references"},
	"NotebookRead":           {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "reads a notebook"},
	"Edit":                   {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "edits a file"},
	"MultiEdit":              {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "edits a file"},
	"Write":                  {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "writes a file"},
	"NotebookEdit":           {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "edits a notebook"},
	"WebFetch":               {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "fetches a URL"},
	"WebSearch":              {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "searches the web"},
	"Artifact":               {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindRead, "publishes a file as a claude.ai web page"},
	"SendUserFile":           {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindRead, "sends files to the user through claude.ai"},
	"Projects":               {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindRead, "reads or writes the session's claude.ai project"},
	"DesignSync":             {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindRead, "syncs design components with a claude.ai project"},
	"ShareOnboardingGuide":   {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "uploads ONBOARDING.md and makes a share link"},
	"RemoteTrigger":          {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "reads the user's cloud agent routines"},
	"ListMcpResourcesTool":   {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierRead, kindPlain, "lists the resources of MCP servers"},
	"ListMcpResources":       {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierRead, kindPlain, "lists the resources of MCP servers"},
	"ReadMcpResourceDirTool": {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierRead, kindPlain, "lists a directory resource of an MCP server"},
	"ReadMcpResourceDir":     {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierRead, kindPlain, "lists a directory resource of an MCP server"},
	"ReadMcpResourceTool":    {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierWrite, kindPlain, "reads a resource from an MCP server, which does what it likes to serve it"},
	"ReadMcpResource":        {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierWrite, kindPlain, "reads a resource from an MCP server, which does what it likes to serve it"},
	// A subagent's own tool calls pass the gate; starting one is still more
	// than a read: it spends, and acts on its own.
	"Agent":                    {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "starts a subagent"},
	"Task":                     {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "starts a subagent"},
	"Workflow":                 {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "runs a workflow script that starts subagents"},
	"SendMessage":              {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "sends instructions to another agent"},
	"Skill":                    {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "runs a skill, whose instructions may run commands or allow tools"},
	"CronCreate":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierWrite, kindPlain, "schedules a prompt to run later"},
	"CronDelete":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierWrite, kindPlain, "cancels a scheduled prompt"},
	"EnterWorktree":            {airlock.ClassGitWrite, airlock.CapGitWrite, airlock.TierWrite, kindPlain, "creates a worktree and works in it"},
	"ExitWorktree":             {airlock.ClassGitWrite, airlock.CapGitWrite, airlock.TierWrite, kindPlain, "leaves a worktree, keeping it"},
	"TodoWrite":                {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"TaskCreate":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"TaskUpdate":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"TaskGet":                  {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the agent's own task list"},
	"TaskList":                 {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the agent's own task list"},
	"CronList":                 {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "lists the agent's scheduled prompts"},
	"EnterPlanMode":            {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "switches the agent to plan mode"},
	"ExitPlanMode":             {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "presents the agent's plan to the user"},
	"AskUserQuestion":          {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "asks the user a question"},
	"SendUserMessage":          {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "sends the user a message"},
	"Brief":                    {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "sends the user a message"},
	"PushNotification":         {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "notifies the user"},
	"ScheduleWakeup":           {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "picks when the agent resumes"},
	"ReportFindings":           {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reports review findings to the host"},
	"StructuredOutput":         {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "returns the agent's final answer"},
	"ToolSearch":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "searches the host's tools"},
	"ShowOnboardingRolePicker": {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "shows the user a role picker"},

	// Gemini CLI 0.61 (ALL_BUILTIN_TOOL_NAMES, its legacy aliases and the
	// background-process tools; save_memory is from earlier releases).
	"run_shell_command":         {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"list_background_processes": {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "lists the agent's background commands"},
	"read_background_output":    {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads a background command's output"},
	"replace":                   {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "edits a file"},
	"read_many_files":           {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "reads files"},
	"search_file_content":       {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "searches files"},
	"grep_search":               {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "searches files"},
	"glob":                      {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "lists files"},
	"get_internal_docs":         {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindPlain, "reads Gemini CLI's own documentation"},
	"web_fetch":                 {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "fetches a URL"},
	"google_web_search":         {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "searches the web"},
	"list_mcp_resources":        {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierRead, kindPlain, "lists the resources of MCP servers"},
	"read_mcp_resource":         {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierWrite, kindPlain, "reads a resource from an MCP server, which does what it likes to serve it"},
	"invoke_agent":              {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "starts a subagent"},
	"activate_skill":            {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "activates a skill, whose instructions may run commands or allow tools"},
	"save_memory":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierWrite, kindPlain, "writes the agent's memory"},
	"write_todos":               {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"tracker_create_task":       {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"tracker_update_task":       {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"tracker_add_dependency":    {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own task list"},
	"tracker_get_task":          {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the agent's own task list"},
	"tracker_list_tasks":        {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the agent's own task list"},
	"tracker_visualize":         {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the agent's own task list"},
	"enter_plan_mode":           {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "switches the agent to plan mode"},
	"exit_plan_mode":            {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "presents the agent's plan to the user"},
	"ask_user":                  {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "asks the user a question"},
	"update_topic":              {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's topic"},
	"complete_task":             {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "returns the agent's final answer"},

	// OpenAI Codex CLI 0.169 (the tool handlers its binary names; shell is
	// among the processes above, its command an argument list). Its hooks
	// report the shell tool as Bash.
	"shell_command":                     {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"exec_command":                      {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"local_shell":                       {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindArgv, "runs a program"},
	"write_stdin":                       {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindStdin, "reads a running command's output"},
	"apply_patch":                       {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindPatch, "applies a patch"},
	"view_image":                        {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "reads an image"},
	"web_search":                        {airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "searches the web"},
	"list_mcp_resource_templates":       {airlock.ClassMCPCall, airlock.CapMCPCall, airlock.TierRead, kindPlain, "lists the resource templates of MCP servers"},
	"spawn_agent":                       {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "starts a subagent"},
	"resume_agent":                      {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "resumes a subagent"},
	"send_input":                        {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "sends instructions to a subagent"},
	"send_message":                      {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "sends instructions to a subagent"},
	"followup_task":                     {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "gives a subagent a follow-up task"},
	"close_agent":                       {airlock.ClassProcessKill, airlock.CapProcessSignal, airlock.TierWrite, kindPlain, "stops a subagent the agent started"},
	"request_permissions":               {airlock.ClassHostCall, airlock.CapHostCall, airlock.TierWrite, kindPlain, "asks the host for wider sandbox permissions"},
	"request_plugin_install":            {airlock.ClassPackageInstall, airlock.CapNetworkEgress, airlock.TierNetworkEgress, kindPlain, "installs a plugin"},
	"update_plan":                       {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "updates the agent's own plan"},
	"wait_agent":                        {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "waits for a subagent"},
	"list_agents":                       {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "lists the agent's subagents"},
	"request_user_input":                {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "asks the user a question"},
	"tool_search":                       {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "searches the host's tools"},
	"list_available_plugins_to_install": {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "lists plugins the user could install"},
	"get_context_remaining":             {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the agent's context budget"},
	"new_context_window":                {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "starts a fresh context window"},
	"current_time":                      {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "reads the time"},
	"sleep":                             {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "waits"},
	"wait_for_environment":              {airlock.ClassAgentStateWrite, airlock.CapAgentStateWrite, airlock.TierRead, kindPlain, "waits for the environment"},

	// Other coding agents (Cursor, and common names).
	"run_terminal_cmd": {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindShell, "runs a shell command"},
	"container.exec":   {airlock.ClassProcessExec, airlock.CapProcessExec, airlock.TierWrite, kindArgv, "runs a program"},
	"edit_file":        {airlock.ClassFSWrite, airlock.CapWorkspaceWriteText, airlock.TierWrite, kindWrite, "edits a file"},
	"file_search":      {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "finds files"},
	"codebase_search":  {airlock.ClassFSRead, airlock.CapWorkspaceRead, airlock.TierRead, kindRead, "searches the codebase"},
}

// catalogRaises are the argument values that make a tool's call stricter
// than its catalog entry.
var catalogRaises = map[string][]argRaise{
	// A remote subagent or cloud routine runs outside this gate: whatever
	// it does, Airlock never sees.
	"Agent":         {{"isolation", []string{"remote"}, airlock.ClassHostCall, airlock.CapHostCall, airlock.TierPrivileged, "starts a subagent in a remote environment, outside the gate"}},
	"Task":          {{"isolation", []string{"remote"}, airlock.ClassHostCall, airlock.CapHostCall, airlock.TierPrivileged, "starts a subagent in a remote environment, outside the gate"}},
	"RemoteTrigger": {{"action", []string{"create", "update", "run"}, airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierPrivileged, "creates, changes or runs a cloud agent routine, outside the gate"}},
	"ExitWorktree":  {{"action", []string{"remove"}, airlock.ClassGitWrite, airlock.CapWorkspaceDelete, airlock.TierDestructive, "removes the worktree and its branch"}},
	"Projects":      {{"method", []string{"project_delete"}, airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierDestructive, "deletes a document of the session's claude.ai project"}},
	// Gemini's browser agent drives a browser: it reaches the network.
	"invoke_agent": {{"agent_name", []string{"browser_agent"}, airlock.ClassNetHTTP, airlock.CapNetworkEgress, airlock.TierNetworkEgress, "starts the browser subagent"}},
}

// Argument names the catalog reads. Tools differ in what they call a path.
var (
	readPathKeys  = []string{"path", "file_path", "notebook_path", "paths", "file_paths", "target_file", "absolute_path", "local_path", "include"}
	writePathKeys = []string{"path", "file_path", "notebook_path", "paths", "target_file", "absolute_path", "destination", "dest", "dst", "target", "to", "new_path"}
	sourceKeys    = []string{"source", "src", "from", "path", "old_path"}
	destKeys      = []string{"destination", "dest", "dst", "to", "target", "new_path"}
	scriptKeys    = []string{"command", "cmd", "script"}
	patchKeys     = []string{"command", "input", "patch"}
	dirKeys       = []string{"cwd", "dir", "workdir", "working_directory", "directory", "dir_path"}
)

// catalogKeys are every argument the catalog reads.
var catalogKeys = func() map[string]bool {
	m := map[string]bool{"argv": true, "args": true, "force": true, "force_with_lease": true, "delete": true, "chars": true, "ws": true}
	for _, keys := range [][]string{readPathKeys, writePathKeys, sourceKeys, scriptKeys, patchKeys, dirKeys} {
		for _, k := range keys {
			m[k] = true
		}
	}
	for _, raises := range catalogRaises {
		for _, r := range raises {
			m[r.key] = true
		}
	}
	return m
}()

// MCPResourceRead and MCPPromptGet name, after mcp__<server>__, the
// actions the MCP gateway decides for a server's resources/read (args
// {"uri": …}) and prompts/get (args {"name": …, "arguments": {…}}). MCP's
// tool names have no "/": no tool of a server can take these names.
const (
	MCPResourceRead = "resources/read"
	MCPPromptGet    = "prompts/get"
)

// MCPTool is the tool of an action on MCP server server: mcp__<server>__<name>.
func MCPTool(server, name string) string { return "mcp__" + server + "__" + name }

// mcpTool splits an MCP tool name: mcp__<server>__<tool> (Claude Code,
// Codex) or mcp_<server>_<tool> (Gemini CLI). The catalog is looked up
// first, so a built-in name (mcp_release) is never taken for an MCP tool.
func mcpTool(name string) (server, tool string, ok bool) {
	if rest, found := strings.CutPrefix(name, "mcp__"); found {
		server, tool, found = strings.Cut(rest, "__")
		if !found || server == "" || tool == "" {
			return "", "", false
		}
		return server, tool, true
	}
	return geminiMCPTool(name)
}

// geminiMCPTool splits Gemini CLI's MCP tool name, mcp_<server>_<tool>.
// Gemini joins server and tool with one underscore and allows underscores
// in both, so mcp_a_b_c may be tool b_c of server a or tool c of server
// a_b: the name alone cannot say. Gemini's own parser (parseMcpToolName)
// takes the server to be the text up to the first underscore, and so does
// Airlock, so that both name the same server; the reason quotes the full
// name, and policy rules match the full name, never the split. A name
// that starts "mcp__" is the other hosts' form, which Gemini refuses, and
// a tool part made of underscores only is no name (Gemini refuses it too).
func geminiMCPTool(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp_")
	if !found || strings.HasPrefix(rest, "_") {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "_")
	if !found || server == "" || strings.Trim(tool, "_") == "" {
		return "", "", false
	}
	return server, tool, true
}

// Classify classifies an action with the built-in catalog alone,
// and sh for shell commands. A tool the catalog does not know is class
// unknown.
func Classify(sh ShellAnalyser, a *airlock.Action, decoded map[string]any, cat *sensitive.Catalogue) airlock.Classification {
	spec, ok := catalog[a.Tool]
	if !ok {
		if server, tool, ok := mcpTool(a.Tool); ok {
			if strings.HasPrefix(a.Tool, "mcp__") {
				if c, ok := classifyKnownMCP(server, tool, a, cat); ok {
					return c
				}
				switch tool {
				case MCPResourceRead:
					return classifyResourceRead(server, a, decoded, cat)
				case MCPPromptGet:
					// A prompt is a template the server fills in, but it fills
					// it in by running its own code with the client's
					// arguments, which may do anything a tool does: nothing
					// proves it only reads. So it is what a tool call without
					// annotations is, tier write — generic, so that a policy
					// that trusts a server's prompts may say they are reads.
					return airlock.Classification{Class: airlock.ClassMCPPromptGet, Capability: airlock.CapMCPCall, Tier: airlock.TierWrite, Source: "catalog",
						Reason: "gets a prompt of MCP server " + server + ", which runs the server's code with its arguments", Generic: true}
				}
			}
			reason := "calls tool " + tool + " of MCP server " + server
			if !strings.HasPrefix(a.Tool, "mcp__") {
				reason += " (" + a.Tool + ": the server is the text up to the first underscore)"
			}
			return airlock.Classification{
				Class: airlock.ClassMCPCall, Capability: airlock.CapMCPCall, Tier: airlock.TierWrite, Source: "catalog",
				Reason: reason, Generic: true,
			}
		}
		return unknownTool(a.Tool)
	}
	c := airlock.Classification{Class: spec.class, Capability: spec.capability, Tier: spec.tier, Source: "catalog", Reason: spec.reason}
	raises := catalogRaises[a.Tool]
	if spec.kind == kindPlain && raises == nil {
		return c
	}
	args := decoded // decoded already when a condition ran first
	if args == nil {
		args = airlock.PickArgs(a.Args, catalogKeys)
	}
	for _, r := range raises {
		if v, ok := args[r.key].(string); ok && slices.Contains(r.values, v) && r.tier > c.Tier {
			c.Class, c.Capability, c.Tier, c.Reason = r.class, r.capability, r.tier, r.reason
		}
	}
	cwd := a.Cwd
	dir, hasDir := firstString(args, dirKeys)
	if hasDir {
		cwd = sensitive.Clean(dir, a.Cwd)
	}
	switch spec.kind {
	case kindRead:
		paths := stringsArg(args, readPathKeys)
		if hasDir { // a read tool's directory (Gemini's dir_path) is what it reads
			paths = append(paths, cwd)
		}
		raiseForCredentials(&c, paths, cwd, cat)
	case kindWrite:
		raiseForSystemPaths(&c, stringsArg(args, writePathKeys), cwd, cat)
	case kindCopyMove:
		raiseForCredentials(&c, stringsArg(args, sourceKeys), cwd, cat)
		dests := stringsArg(args, destKeys)
		if spec.class == airlock.ClassFSMove {
			dests = append(dests, stringsArg(args, sourceKeys)...) // moving a system file away changes the system
		}
		raiseForSystemPaths(&c, dests, cwd, cat)
	case kindGitPush:
		if truthy(args["force"]) || truthy(args["force_with_lease"]) || truthy(args["delete"]) {
			c.Tier, c.Reason = airlock.TierDestructive, "pushes with force or deletes a remote branch"
		}
	case kindShell:
		return shellCall(c, sh, args, cwd, cat)
	case kindMonitor:
		if _, ok := firstString(args, scriptKeys); !ok && args["ws"] != nil {
			c.Class, c.Capability, c.Tier, c.Reason = airlock.ClassNetConnect, airlock.CapNetworkEgress, airlock.TierNetworkEgress, "watches a WebSocket"
			return c
		}
		return shellCall(c, sh, args, cwd, cat)
	case kindPatch:
		patch, ok := firstString(args, patchKeys)
		if !ok {
			argv, isList := firstList(args, patchKeys)
			if patch, ok = patchArgv(argv); !isList || !ok {
				return opaquePatch(c, "the call has no patch (args.command, args.input or args.patch)")
			}
		}
		return classifyPatch(c, patch, cwd, cat)
	case kindStdin:
		if chars, _ := args["chars"].(string); chars != "" {
			// What the keystrokes do depends on the program reading them
			// (a shell, a REPL, a prompt), which the call does not say.
			c.Class, c.Capability, c.Tier = airlock.ClassUnknown, airlock.CapUnknown, airlock.TierPrivileged
			c.Reason = "types input into a running command, which Airlock cannot see into"
		}
	case kindArgv:
		argv, err := argvOf(args)
		if err != nil {
			return opaque(c, err.Error())
		}
		if patch, ok := patchArgv(argv); ok {
			return classifyPatch(patchSpec(), patch, cwd, cat)
		}
		if sh == nil {
			return opaque(c, errNoShellAnalyser)
		}
		var cmds []airlock.Command
		if argv == nil { // a command line without an argument list: run by a shell
			script, _ := firstString(args, scriptKeys)
			cmds, err = sh.AnalyseScript(script, cwd, cat)
		} else {
			cmds, err = sh.AnalyseArgv(argv, cwd, cat)
		}
		if err != nil {
			return opaque(c, err.Error())
		}
		c.Source = "shell"
		c.Commands = cmds
		Aggregate(&c)
	}
	return c
}

// uriKeys are the arguments of a resource read.
var uriKeys = map[string]bool{"uri": true}

// classifyResourceRead classifies a resources/read of MCP server server.
// A file: URI that names a local path is judged like the path a read tool
// is given: a read, unless it names a secret or a folder of them. Any other
// URI makes the server fetch it (http, https: network egress) or serve it
// however it likes (a database row, a custom scheme, another host's file:
// tier write), which Airlock cannot prove to be a read: those are generic,
// for a policy that trusts a server to say otherwise.
func classifyResourceRead(server string, a *airlock.Action, decoded map[string]any, cat *sensitive.Catalogue) airlock.Classification {
	args := decoded
	if args == nil {
		args = airlock.PickArgs(a.Args, uriKeys)
	}
	uri, _ := args["uri"].(string)
	c := airlock.Classification{Class: airlock.ClassMCPResourceRead, Source: "catalog"}
	if p, ok := fileURIPath(uri); ok {
		c.Capability, c.Tier = airlock.CapWorkspaceRead, airlock.TierRead
		c.Reason = "reads file " + p + " through MCP server " + server
		raiseForCredentials(&c, []string{p}, "", cat)
		if c.Tier == airlock.TierRead && cat.HoldsSecrets(p) {
			c.Class, c.Capability, c.Tier = airlock.ClassCredentialsRead, airlock.CapCredentialsRead, airlock.TierPrivileged
			c.Reason = "reads a folder that holds secrets: " + p
		}
		return c
	}
	c.Generic = true
	switch scheme, _, _ := strings.Cut(uri, ":"); strings.ToLower(scheme) {
	case "http", "https", "ws", "wss", "ftp", "ftps", "sftp", "ssh", "git", "s3", "gs":
		c.Capability, c.Tier = airlock.CapNetworkEgress, airlock.TierNetworkEgress
		c.Reason = "has MCP server " + server + " fetch " + strconv.Quote(airlock.ClipText(uri, 200))
	default:
		c.Capability, c.Tier = airlock.CapMCPCall, airlock.TierWrite
		c.Reason = "reads resource " + strconv.Quote(airlock.ClipText(uri, 200)) + " of MCP server " + server + ", which does what it likes to serve it"
	}
	return c
}

// fileURIPath returns the local path a file: URI names — file:///p or
// file://localhost/p, percent-decoded and cleaned — and false for any
// other URI: another host's file, a relative or opaque form, one with a
// query, a fragment or user information, or a path with a backslash or a
// control character, which a server may read as another path than Airlock
// would.
func fileURIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "file") || u.Opaque != "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(uri, "#") {
		return "", false
	}
	if h := u.Host; h != "" && !strings.EqualFold(h, "localhost") {
		return "", false
	}
	p := u.Path
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return "", false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	// A Windows path (file:///C:/Users/me/...) is judged without its drive:
	// the secrets catalogue knows /Users/<name>/ and the names in it.
	if len(p) >= 3 && p[2] == ':' && ('a' <= p[1]|0x20 && p[1]|0x20 <= 'z') && (len(p) == 3 || p[3] == '/') {
		p = "/" + strings.TrimPrefix(p[3:], "/")
	}
	return sensitive.Clean(p, ""), true
}

// shellCall classifies a call that runs a shell script (args.command,
// args.cmd), or a program when the script key holds an argument list.
func shellCall(c airlock.Classification, sh ShellAnalyser, args map[string]any, cwd string, cat *sensitive.Catalogue) airlock.Classification {
	script, ok := firstString(args, scriptKeys)
	if !ok {
		// Codex's shell and exec_command may send an argument list.
		argv, isList := firstList(args, scriptKeys)
		if !isList || len(argv) == 0 {
			return opaque(c, "the call has no command string (args.command)")
		}
		if patch, ok := patchArgv(argv); ok {
			return classifyPatch(patchSpec(), patch, cwd, cat)
		}
		if sh == nil {
			return opaque(c, errNoShellAnalyser)
		}
		cmds, err := sh.AnalyseArgv(argv, cwd, cat)
		if err != nil {
			return opaque(c, err.Error())
		}
		c.Source, c.Commands = "shell", cmds
		Aggregate(&c)
		return c
	}
	if sh == nil {
		return opaque(c, errNoShellAnalyser)
	}
	cmds, err := sh.AnalyseScript(script, cwd, cat)
	if err != nil {
		return opaque(c, err.Error())
	}
	c.Source, c.Commands = "shell", cmds
	Aggregate(&c)
	return c
}

// patchSpec is the classification a patch starts from when it arrives
// through a shell tool (["apply_patch", PATCH]): Codex applies it itself.
func patchSpec() airlock.Classification {
	s := catalog["apply_patch"]
	return airlock.Classification{Class: s.class, Capability: s.capability, Tier: s.tier, Source: "catalog", Reason: s.reason}
}

// patchArgv returns the patch of an apply_patch command line, the form in
// which Codex's shell tools hand a patch to apply_patch.
func patchArgv(argv []string) (string, bool) {
	if len(argv) == 2 && (argv[0] == "apply_patch" || argv[0] == "applypatch") {
		return argv[1], true
	}
	return "", false
}

// errNoShellAnalyser is why a gate built without a ShellAnalyser denies
// every shell command.
const errNoShellAnalyser = "the gate has no shell analyser (see catalog.ShellAnalyser and package shell)"

func unknownTool(name string) airlock.Classification {
	return airlock.Classification{
		Class: airlock.ClassUnknown, Capability: airlock.CapUnknown, Tier: airlock.TierPrivileged, Source: "unknown tool",
		Reason:  "no classifier knows tool " + strconv.Quote(name),
		Generic: true,
	}
}

// opaque marks a script that could not be analysed: the decision will be
// the strictest one.
func opaque(c airlock.Classification, why string) airlock.Classification {
	c.Class, c.Capability, c.Tier = airlock.ClassUnknown, airlock.CapUnknown, airlock.TierPrivileged
	c.Source, c.Reason, c.Opaque = "shell", "the command could not be analysed", why
	return c
}

// Aggregate sets a script's class, capability and tier to those of its most
// dangerous command (the first one on ties). A script of inert commands only
// is a read.
func Aggregate(c *airlock.Classification) {
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
		c.Class, c.Capability, c.Tier = airlock.ClassShellBuiltin, airlock.CapShellState, airlock.TierRead
		c.Reason = "runs only shell built-ins"
		return
	}
	cmd := c.Commands[best]
	c.Class, c.Capability, c.Tier = cmd.Class, cmd.Capability, cmd.Tier
	c.Reason = fmt.Sprintf("%s: %s", cmd.Text, cmd.Reason)
}

// raiseForSystemPaths raises a write by the paths it writes (creates,
// edits, deletes, moves onto or from): one that configures the gate is
// class gate.configure, one that changes the system or runs code later is
// privileged. cat holds the paths the policies add (nil: the built-in
// catalogue).
func raiseForSystemPaths(c *airlock.Classification, paths []string, cwd string, cat *sensitive.Catalogue) {
	var first [4]string
	abs := first[:0]
	for _, p := range paths {
		abs = append(abs, sensitive.Clean(p, cwd))
	}
	for _, p := range abs {
		if what, ok := cat.GateConfig(p, false); ok {
			c.Class, c.Capability, c.Tier = airlock.ClassGateConfigure, airlock.CapGateConfigure, airlock.TierPrivileged
			c.Reason = fmt.Sprintf("%s that configures the gate (%s): %s", c.Reason, what, p)
			return
		}
	}
	for _, p := range abs {
		if _, ok := cat.SystemPlace(p, false); ok {
			c.Tier = airlock.TierPrivileged
			c.Capability = airlock.CapHostAdmin
			c.Reason = fmt.Sprintf("%s under a system path: %s", c.Reason, p)
			return
		}
	}
}

func raiseForCredentials(c *airlock.Classification, paths []string, cwd string, cat *sensitive.Catalogue) {
	for _, p := range paths {
		if what, ok := cat.Secret(sensitive.Clean(p, cwd), false); ok {
			c.Class, c.Capability, c.Tier = airlock.ClassCredentialsRead, airlock.CapCredentialsRead, airlock.TierPrivileged
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

// firstList returns the first of keys that holds a list of strings.
func firstList(args map[string]any, keys []string) ([]string, bool) {
	for _, k := range keys {
		if list, ok := stringList(args[k]); ok {
			return list, true
		}
	}
	return nil, false
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
	Class      airlock.Class
	Capability airlock.Capability
	Tier       airlock.RiskTier
	Reason     string
}

// Catalog lists the built-in catalog, sorted by tool name. MCP tools
// (mcp__<server>__<tool>) are class mcp.call, tier write, unless the action
// names a server of the MCP server catalogue that lists the tool
// (Action.MCPServer, package mcpcatalog) or a policy classifier says
// otherwise; the MCP gateway's resource reads
// (mcp__<server>__resources/read) are class mcp.resource.read, judged by
// their URI, and its prompts (mcp__<server>__prompts/get) class
// mcp.prompt.get, tier write; unknown tools are class unknown.
func Catalog() []CatalogEntry {
	out := make([]CatalogEntry, 0, len(catalog))
	for name, s := range catalog {
		out = append(out, CatalogEntry{Tool: name, Class: s.class, Capability: s.capability, Tier: s.tier, Reason: s.reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// ShellTools lists the built-in tools that run a shell script (their
// args.command), sorted.
func ShellTools() []string {
	var names []string
	for name, spec := range catalog {
		if spec.kind == kindShell {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Paths returns every path a file tool's call reads or writes, made
// absolute against its directory and cleaned, and whether the catalog
// knows them all: false for a tool that is not a file tool, a call with a
// path argument that is not a string (or a list of them), or a path that
// is not absolute once cleaned (no directory to resolve it, or "~"). A
// grant over a directory covers a call only when this says where all of
// it goes. decoded is the arguments when a condition decoded them
// already, else nil.
func Paths(a *airlock.Action, decoded map[string]any) ([]string, bool) {
	spec, ok := catalog[a.Tool]
	if !ok {
		return nil, false
	}
	var keys []string
	switch spec.kind {
	case kindRead:
		keys = readPathKeys
	case kindWrite:
		keys = writePathKeys
	case kindCopyMove:
		keys = slices.Concat(sourceKeys, destKeys)
	default:
		return nil, false
	}
	args := decoded
	if args == nil {
		args = airlock.PickArgs(a.Args, catalogKeys)
	}
	cwd := a.Cwd
	var out []string
	if dir, hasDir := firstString(args, dirKeys); hasDir {
		cwd = sensitive.Clean(dir, a.Cwd)
		if spec.kind == kindRead { // a read tool's directory is what it reads
			out = append(out, cwd)
		}
	} else if _, present := firstAny(args, dirKeys); present {
		return nil, false // a directory that is not a string
	}
	for _, k := range keys {
		switch v := args[k].(type) {
		case nil:
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return nil, false
				}
				out = append(out, s)
			}
		default:
			return nil, false
		}
	}
	for i, p := range out {
		out[i] = sensitive.Clean(p, cwd)
		if !strings.HasPrefix(out[i], "/") {
			return nil, false
		}
	}
	slices.Sort(out)
	return slices.Compact(out), len(out) > 0
}

// firstAny returns the first of keys present in args, whatever its type.
func firstAny(args map[string]any, keys []string) (any, bool) {
	for _, k := range keys {
		if v, ok := args[k]; ok {
			return v, true
		}
	}
	return nil, false
}
