package sqlite

import (
	"context"
	"encoding/json"

	"github.com/airlock-dev/airlock"
)

var _ airlock.ToolPinStore = (*DB)(nil)

// ToolPins returns the definitions released to agent for server, oldest
// first.
func (db *DB) ToolPins(ctx context.Context, agent, server string) ([]airlock.ToolPin, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT tool, hash, definition, approval_id, created FROM tool_pins
		WHERE agent = ? AND server = ? ORDER BY created, tool, hash`, agent, server)
	if err != nil {
		return nil, unavailable("read tool pins", err)
	}
	defer rows.Close()
	out := []airlock.ToolPin{}
	for rows.Next() {
		p := airlock.ToolPin{Agent: agent, Server: server}
		var hash []byte
		var def string
		var created int64
		if err := rows.Scan(&p.Tool, &hash, &def, &p.ApprovalID, &created); err != nil {
			return nil, unavailable("read tool pins", err)
		}
		copy(p.Hash[:], hash)
		p.Definition, p.Created = json.RawMessage(def), fromNanos(created)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable("read tool pins", err)
	}
	return out, nil
}

// PinTools records pins and appends rec, in one transaction. A pin already
// recorded stays as it was.
func (db *DB) PinTools(ctx context.Context, pins []airlock.ToolPin, rec airlock.Record) error {
	for _, p := range pins {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	if err := rec.Prepare(); err != nil {
		return err
	}
	return db.exec(ctx, func(w *wtx) error {
		now := nanos(w.now())
		for _, p := range pins {
			if _, err := w.exec(`INSERT INTO tool_pins (agent, server, tool, hash, definition, approval_id, created)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				p.Agent, p.Server, p.Tool, p.Hash[:], string(p.Definition), p.ApprovalID, now); err != nil {
				return err
			}
		}
		w.append(rec, "")
		return nil
	})
}
