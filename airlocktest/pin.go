package airlocktest

import (
	"encoding/json"
	"testing"

	"github.com/airlock-dev/airlock"
)

// testToolPins: pins are kept per agent and server, oldest first, with
// their definition and release; pinning one again changes nothing; the
// record goes into the audit log with them; a malformed pin writes nothing.
func testToolPins(t *testing.T, s airlock.Store, clock *Clock) {
	pin := func(agent, server, tool, def, approval string) airlock.ToolPin {
		d := airlock.ToolDefinition{Name: tool, Definition: json.RawMessage(def)}
		h, err := d.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return airlock.ToolPin{Agent: agent, Server: server, Tool: tool, Hash: h, Definition: d.Definition, ApprovalID: approval}
	}
	got, err := s.ToolPins(ctx(t), "agent-1", "fs")
	if err != nil || len(got) != 0 {
		t.Fatalf("pins of a new store: %v %v", got, err)
	}
	first := []airlock.ToolPin{
		pin("agent-1", "fs", "read", `{"name":"read","description":"Reads a file."}`, ""),
		pin("agent-1", "fs", "write", `{"name":"write","description":"Writes a file."}`, ""),
	}
	if err := s.PinTools(ctx(t), first, airlock.Record{Events: []airlock.Event{Event(airlock.EventToolsPinned, "agent-1")}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1)
	changed := pin("agent-1", "fs", "write", `{"name":"write","description":"Writes a file, and mails it."}`, "01-release")
	if err := s.PinTools(ctx(t), []airlock.ToolPin{changed, first[0]}, airlock.Record{Events: []airlock.Event{Event(airlock.EventToolReleased, "agent-1")}}); err != nil {
		t.Fatal(err)
	}
	// Another agent's pins, and another server's, are theirs.
	if err := s.PinTools(ctx(t), []airlock.ToolPin{pin("agent-2", "fs", "read", `{"name":"read"}`, ""), pin("agent-1", "git", "log", `{"name":"log"}`, "")}, airlock.Record{}); err != nil {
		t.Fatal(err)
	}
	got, err = s.ToolPins(ctx(t), "agent-1", "fs")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("agent-1's pins of fs: %d, want 3 (read, write, write changed): %+v", len(got), got)
	}
	last := got[2]
	if last.Tool != "write" || last.Hash != changed.Hash || last.ApprovalID != "01-release" || string(last.Definition) != string(changed.Definition) ||
		last.Created.Before(got[0].Created) || last.Created.Equal(got[0].Created) {
		t.Errorf("the latest pin: %+v, want the released write, after the first listing", last)
	}
	if got[0].Created.IsZero() || got[0].Agent != "agent-1" || got[0].Server != "fs" {
		t.Errorf("a pin as read back: %+v", got[0])
	}
	kinds := kinds(events(t, s, airlock.EventFilter{}))
	if len(kinds) != 2 || kinds[0] != airlock.EventToolsPinned || kinds[1] != airlock.EventToolReleased {
		t.Errorf("events %v, want the pinning and the release", kinds)
	}
	bad := pin("agent-1", "fs", "bad", `{"name":"bad"}`, "")
	bad.Hash = airlock.Hash{}
	if err := s.PinTools(ctx(t), []airlock.ToolPin{pin("agent-1", "fs", "ok", `{}`, ""), bad}, airlock.Record{}); airlock.ErrorCode(err) != airlock.EINVALID {
		t.Errorf("a pin without a hash: %v, want invalid", err)
	}
	if got, _ := s.ToolPins(ctx(t), "agent-1", "fs"); len(got) != 3 {
		t.Errorf("a refused batch wrote %d pins", len(got)-3)
	}
}
