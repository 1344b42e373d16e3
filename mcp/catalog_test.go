package mcp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcp"
	"github.com/airlock-dev/airlock/mcp/mcptest"
	"github.com/airlock-dev/airlock/mcpcatalog"
)

// TestCatalogueMatchesServers: the tools the MCP server catalogue maps for
// the reference servers pinned in testdata/servers are exactly the tools
// those servers list (to a client that can sample, elicit and list roots,
// so that the everything server lists all of them), and the servers are
// known by the programs npm installed.
func TestCatalogueMatchesServers(t *testing.T) {
	for _, tc := range []struct {
		bin, name string
		args      []string
	}{
		{"mcp-server-filesystem", "filesystem", []string{t.TempDir()}},
		{"mcp-server-everything", "everything", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := mcptest.Bin(t, tc.bin)
			if got := (mcp.Server{Name: "x", Command: bin, Args: tc.args}).Known(); got != tc.name {
				t.Fatalf("%s is known as %q, want %s", bin, got, tc.name)
			}
			var progress, logs atomic.Int32
			cs := direct(t, bin, tc.args, clientOptions(&progress, &logs))
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed, catalogued []string
			for _, tool := range list.Tools {
				listed = append(listed, tool.Name)
			}
			for _, s := range mcpcatalog.Servers() {
				if s.Name == tc.name {
					for _, tool := range s.Tools {
						catalogued = append(catalogued, tool.Name)
					}
				}
			}
			for _, name := range listed {
				if !slices.Contains(catalogued, name) {
					t.Errorf("%s lists %s, which the catalogue does not map", tc.bin, name)
				}
			}
			// A tool the server lists only to clients with capabilities the
			// SDK's client lacks (tasks, URL elicitation) must be one its
			// package defines.
			src := packageSource(t, bin)
			for _, name := range catalogued {
				if !slices.Contains(listed, name) && !strings.Contains(src, `const name = "`+name+`"`) {
					t.Errorf("the catalogue maps %s, which %s neither lists nor defines", name, tc.bin)
				}
			}
		})
	}
}

// TestKnownServerStarter: under the starter policy, in front of the real
// filesystem server, known by its program: a read of README.md runs at
// once, a read of a private key needs a person and never reaches the
// server, and a write asks — held until a person decides. The same server
// declared not to be the catalogue's (catalog none) is an unknown server,
// as before: its read asks, and its write, which its annotations call
// destructive, needs a person.
func TestKnownServerStarter(t *testing.T) {
	bin := mcptest.Bin(t, "mcp-server-filesystem")
	root := t.TempDir()
	readme := filepath.Join(root, "README.md")
	if err := os.WriteFile(readme, []byte("airlock-readme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, db := newStarterEnforcer(t)
	cs := connect(t, newGateway(t, e, mcp.Server{Name: "fs", Command: bin, Args: []string{root}}), nil)
	ctx := t.Context()

	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": readme}})
	if err != nil || r.IsError || !strings.Contains(text(r), "airlock-readme") {
		t.Fatalf("read_text_file README.md: %v %v, want it to run", asJSON(t, r), err)
	}
	evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventDecision, Agent: "laptop", Newest: true, Limit: 1})
	if err != nil || len(evs) != 1 || evs[0].Outcome != "auto" || !strings.Contains(string(evs[0].Payload), `"class":"fs.read"`) ||
		!strings.Contains(string(evs[0].Payload), `"mcp_server":"filesystem"`) {
		t.Errorf("the read's decision: %v %v, want auto, fs.read, mcp_server filesystem", evs, err)
	}

	r, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": "~/.ssh/id_rsa"}})
	if err != nil || !r.IsError || !strings.Contains(text(r), airlock.CodeNeedsHuman) || !strings.Contains(text(r), "credentials.read") {
		t.Fatalf("read_text_file ~/.ssh/id_rsa: %v %v, want AIRLOCK-NEEDS-HUMAN", asJSON(t, r), err)
	}
	if evs, err := db.Events(ctx, airlock.EventFilter{Kind: airlock.EventActionExecuted, Agent: "laptop", Limit: 10}); err != nil || len(evs) != 1 {
		t.Errorf("executions: %d %v, want the README's read alone", len(evs), err)
	}

	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(root, "notes.txt"), "content": "hi"}})
		if err != nil {
			t.Errorf("write_file: %v", err)
		}
		done <- r
	}()
	ap := pending(t, db, "mcp__fs__write_file")
	if ap.Outcome != airlock.Ask || ap.Class != string(airlock.ClassFSWrite) || ap.Tier != airlock.TierWrite || ap.NeedsHuman {
		t.Errorf("the write's request: %s %s (%s), needs-human %t; want ask, fs.write (write)", ap.Outcome, ap.Class, ap.Tier, ap.NeedsHuman)
	}
	select {
	case r := <-done:
		t.Fatalf("the write was answered before anyone decided: %v", asJSON(t, r))
	case <-time.After(200 * time.Millisecond):
	}
	resolve(t, db, ap, airlock.StatusApproved)
	if r := <-done; r == nil || r.IsError {
		t.Fatalf("the approved write: %v", asJSON(t, r))
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); string(b) != "hi" {
		t.Errorf("notes.txt holds %q", b)
	}

	// Not the catalogue's: as an unknown server.
	e2, db2 := newStarterEnforcer(t)
	cs2 := connect(t, newGateway(t, e2, mcp.Server{Name: "fs", Command: bin, Args: []string{root}, Catalog: mcp.CatalogNone}), nil)
	r, err = cs2.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(root, "other.txt"), "content": "x"}})
	if err != nil || !r.IsError || !strings.Contains(text(r), airlock.CodeNeedsHuman) || !strings.Contains(text(r), "mcp.call") {
		t.Fatalf("write_file of a server not the catalogue's: %v %v, want AIRLOCK-NEEDS-HUMAN (mcp.call, destructive)", asJSON(t, r), err)
	}
	go func() {
		r, _ := cs2.CallTool(ctx, &sdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": readme}})
		done <- r
	}()
	if ap := pending(t, db2, "mcp__fs__read_text_file"); ap.Class != string(airlock.ClassMCPCall) || ap.Outcome != airlock.Ask {
		t.Errorf("the unknown server's read: %s %s, want ask, mcp.call", ap.Outcome, ap.Class)
	}
}

// TestServerCatalog: a server named for the catalogue must be one it has.
func TestServerCatalog(t *testing.T) {
	s := mcp.Server{Name: "fs", Command: "my-fs", Catalog: "filesytem"}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "filesystem") {
		t.Errorf("Validate: %v, want the known names", err)
	}
	s.Catalog = "filesystem"
	if err := s.Validate(); err != nil || s.Known() != "filesystem" {
		t.Errorf("Validate: %v, known as %q", err, s.Known())
	}
	s = mcp.Server{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/w"}}
	if s.Known() != "filesystem" {
		t.Errorf("known as %q", s.Known())
	}
	s.Catalog = mcp.CatalogNone
	if err := s.Validate(); err != nil || s.Known() != "" {
		t.Errorf("Validate: %v, known as %q", err, s.Known())
	}
}

// packageSource is the JavaScript of the npm package whose program bin is.
func packageSource(t *testing.T, bin string) string {
	t.Helper()
	target, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(filepath.Dir(target), "tools", "*.js"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range append(files, target) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
	}
	return b.String()
}
