// Package catalog is Airlock's knowledge of the agent hosts' built-in tools
// (Claude Code, Codex, Gemini CLI and common coding agents' file, process,
// git and MCP tools): the class, capability and tier of a call from its
// tool and arguments, every command of a shell call seen through a
// ShellAnalyser (package shell), Codex patches, and the known MCP servers'
// tools (package mcpcatalog). The gate classifies with it before it
// applies a policy's classifiers.
package catalog
