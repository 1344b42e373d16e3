package http

import (
	"context"
	"strconv"

	"github.com/airlock-dev/airlock"
	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/sse"
)

type listEventsInput struct {
	After int64  `query:"after" minimum:"0" doc:"Only events after this sequence number (the previous page's next_after)."`
	Since string `query:"since" doc:"Only events at or after this RFC 3339 time."`
	Kind  string `query:"kind" doc:"Only this kind: decision, approval.resolved, ..." example:"decision"`
	Agent string `query:"agent" doc:"Only this agent's events (an agent token sees only its own)."`
	Trace string `query:"trace" doc:"Only this trace."`
	Limit int    `query:"limit" minimum:"0" maximum:"1000" doc:"Page size, 100 by default."`
}

// EventPage is one page of the audit log.
type EventPage struct {
	Events []airlock.Event `json:"events"`
	// NextAfter continues the listing (as after); 0 on the last page.
	NextAfter int64 `json:"next_after,omitempty"`
	// Head is the sequence number of the log's last event.
	Head int64 `json:"head"`
}

type eventPageOutput struct {
	Body EventPage
}

func (s *Server) listEvents(ctx context.Context, in *listEventsInput) (*eventPageOutput, error) {
	t, err := s.allow(ctx, "read the audit log", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	f := airlock.EventFilter{AfterSeq: in.After, Kind: in.Kind, TraceID: in.Trace, Limit: in.Limit}
	if f.Agent, err = s.scopeAgent(ctx, t, in.Agent, "audit events"); err != nil {
		return nil, err
	}
	if f.Since, err = parseTime("since", in.Since); err != nil {
		return nil, err
	}
	evs, err := s.store().Events(ctx, f)
	if err != nil {
		return nil, err
	}
	head, err := s.store().Head(ctx)
	if err != nil {
		return nil, err
	}
	page := EventPage{Events: evs, Head: head}
	if page.Events == nil {
		page.Events = []airlock.Event{}
	}
	if len(evs) == airlock.PageSize(in.Limit) {
		page.NextAfter = evs[len(evs)-1].Seq
	}
	return &eventPageOutput{Body: page}, nil
}

type streamInput struct {
	LastEventID string `header:"Last-Event-ID" doc:"Resume after this sequence number (sent by EventSource on reconnect)."`
	After       int64  `query:"after" minimum:"0" doc:"Start after this sequence number; 0 with no Last-Event-ID: only new events."`
	Kind        string `query:"kind" doc:"Only events whose kind starts with this (\"approval.\" for every change to a request)."`
	Agent       string `query:"agent" doc:"Only this agent's events."`
}

// registerEventStream serves the live audit log as Server-Sent Events: each
// event's id is its sequence number, so a reconnecting client resumes
// exactly where it stopped.
func registerEventStream(api huma.API, s *Server) {
	op := huma.Operation{
		OperationID: "stream-events", Method: "GET", Path: "/v1/events/stream",
		Summary:     "Stream new audit events (Server-Sent Events)",
		Description: "New events and approval changes as they are recorded. Resume with Last-Event-ID.",
		Security:    []map[string][]string{{"bearer": {}}},
	}
	sse.Register(api, op, map[string]any{"event": airlock.Event{}}, func(ctx context.Context, in *streamInput, send sse.Sender) {
		s.stream(ctx, in, send)
	})
}

func (s *Server) stream(ctx context.Context, in *streamInput, send sse.Sender) {
	t := principalFrom(ctx)
	if t == nil {
		return
	}
	agent := in.Agent
	if t.Role == airlock.RoleAgent {
		agent = t.Agent // an agent's stream carries its own events only
	}
	after := in.After
	if in.LastEventID != "" {
		if n, err := strconv.ParseInt(in.LastEventID, 10, 64); err == nil && n >= 0 {
			after = n
		}
	} else if after == 0 {
		head, err := s.store().Head(ctx) // only new events
		if err != nil {
			s.logger().Warn("event stream", "err", err)
			return
		}
		after = head
	}
	ctx, cancel := s.waitContext(ctx, 1<<62)
	defer cancel()
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()
	for ctx.Err() == nil {
		evs, err := s.store().Events(ctx, airlock.EventFilter{AfterSeq: after, Limit: airlock.MaxPageSize})
		if err != nil {
			s.logger().Warn("event stream", "err", err)
			return
		}
		for _, e := range evs {
			after = e.Seq
			if (agent != "" && e.Agent != agent) || (in.Kind != "" && !hasPrefix(e.Kind, in.Kind)) {
				continue
			}
			if err := send(sse.Message{ID: int(e.Seq), Data: e}); err != nil {
				return
			}
		}
		if len(evs) == airlock.MaxPageSize {
			continue
		}
		if err := s.store().WaitEvents(ctx, after); err != nil {
			return
		}
	}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

type chainOutput struct {
	Body airlock.ChainReport
}

func (s *Server) verifyAudit(ctx context.Context, _ *struct{}) (*chainOutput, error) {
	if _, err := s.allow(ctx, "verify the audit log", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	r, err := s.store().Verify(ctx)
	if err != nil {
		return nil, err
	}
	return &chainOutput{Body: r}, nil
}
