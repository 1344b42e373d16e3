// Package mcptest finds the real MCP servers and the MCP client that the
// gateway's tests run, pinned in mcp/testdata/servers (npm ci there).
//
// They are @modelcontextprotocol/server-everything, server-filesystem and
// the MCP Inspector.
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Bin returns the path of the program name of mcp/testdata/servers
// (mcp-server-everything, mcp-server-filesystem, mcp-inspector). Missing,
// or without node on PATH, it skips the test — and fails it under CI=true.
func Bin(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "testdata", "servers", "node_modules", ".bin", name)
	missing := func(what string) {
		t.Helper()
		msg := "mcptest: " + what + "; install the test servers with: cd mcp/testdata/servers && npm ci"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not on PATH")
	}
	if _, err := os.Stat(path); err != nil {
		missing(name + " is not installed")
	}
	return path
}
