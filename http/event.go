package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/danielgtaylor/huma/v2"
)

type listEventsInput struct {
	After    int64  `query:"after" minimum:"0" doc:"Only events after this sequence number (the previous page's next_after)."`
	Since    string `query:"since" doc:"Only events at or after this RFC 3339 time."`
	Kind     string `query:"kind" doc:"Only this kind: decision, approval.resolved, ..." example:"decision"`
	Agent    string `query:"agent" doc:"Only this agent's events (an agent token sees only its own)."`
	Trace    string `query:"trace" doc:"Only this trace."`
	Approval string `query:"approval" doc:"Only the events of this approval request."`
	Before   int64  `query:"before" minimum:"0" doc:"Only events before this sequence number (with newest, the previous page's next_before)."`
	Newest   bool   `query:"newest" doc:"Newest first; the default is oldest first."`
	Limit    int    `query:"limit" minimum:"0" maximum:"1000" doc:"Page size, 100 by default."`
}

type eventPageOutput struct {
	Body airlock.EventPage
}

func (s *Server) listEvents(ctx context.Context, in *listEventsInput) (*eventPageOutput, error) {
	t, err := s.allow(ctx, "read the audit log", airlock.RoleAgent, airlock.RoleReviewer, airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	f := airlock.EventFilter{AfterSeq: in.After, BeforeSeq: in.Before, Kind: in.Kind, TraceID: in.Trace,
		ApprovalID: in.Approval, Newest: in.Newest, Limit: in.Limit}
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
	page := airlock.EventPage{Events: evs, Head: head}
	if page.Events == nil {
		page.Events = []airlock.Event{}
	}
	if len(evs) == airlock.PageSize(in.Limit) {
		if in.Newest {
			page.NextBefore = evs[len(evs)-1].Seq
		} else {
			page.NextAfter = evs[len(evs)-1].Seq
		}
	}
	return &eventPageOutput{Body: page}, nil
}

type streamInput struct {
	LastEventID string `header:"Last-Event-ID" pattern:"^[0-9]{1,19}$" doc:"Resume after this sequence number (sent by EventSource on reconnect)."`
	After       int64  `query:"after" minimum:"0" doc:"Start after this sequence number; 0 with no Last-Event-ID: only new events."`
	Kind        string `query:"kind" doc:"Only events whose kind starts with this (\"approval.\" for every change to a request)."`
	Agent       string `query:"agent" doc:"Only this agent's events (an agent token gets only its own)."`
}

// heartbeat is how often a quiet stream sends a comment, so that proxies
// and clients see it alive.
const heartbeat = 15 * time.Second

// registerEventStream serves the live audit log as Server-Sent Events: each
// event's id is its sequence number, so a reconnecting client resumes
// exactly where it stopped.
func registerEventStream(api huma.API, s *Server) {
	op := huma.Operation{
		OperationID: "stream-events", Method: "GET", Path: "/v1/events/stream",
		Summary: "Stream new audit events (Server-Sent Events)",
		Description: "New events and approval changes as they are recorded, as `event: event`, `id: <seq>`, " +
			"`data: <Event JSON>` messages, with a comment every 15s when quiet. Resume with Last-Event-ID.",
		Security: []map[string][]string{{"bearer": {}}},
		Errors:   []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity},
		Responses: map[string]*huma.Response{"200": {
			Description: "An event stream",
			Content: map[string]*huma.MediaType{"text/event-stream": {
				Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[airlock.Event](), true, "Event"),
			}},
		}},
	}
	huma.Register(api, op, func(ctx context.Context, in *streamInput) (*huma.StreamResponse, error) {
		t := principalFrom(ctx)
		agent, err := s.scopeAgent(ctx, t, in.Agent, "the event stream")
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		after := in.After
		if in.LastEventID != "" {
			if after, err = strconv.ParseInt(in.LastEventID, 10, 64); err != nil {
				return nil, newProblem(http.StatusBadRequest, airlock.EINVALID, "Last-Event-ID is not a sequence number")
			}
		} else if after == 0 {
			if after, err = s.store().Head(ctx); err != nil { // only new events
				return nil, s.problem(ctx, err)
			}
		}
		return &huma.StreamResponse{Body: func(hctx huma.Context) {
			hctx.SetHeader("Content-Type", "text/event-stream")
			hctx.SetHeader("Cache-Control", "no-store")
			hctx.SetHeader("X-Accel-Buffering", "no")
			hctx.SetStatus(http.StatusOK)
			s.stream(ctx, t, after, agent, in.Kind, hctx.BodyWriter())
		}}, nil
	})
}

// stream writes events after after to w until the client leaves, the
// server drains, or the token is revoked.
func (s *Server) stream(ctx context.Context, t *airlock.Token, after int64, agent, kind string, w io.Writer) {
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	// Headers and a first comment at once: the client knows it is open.
	if _, err := io.WriteString(w, ": airlock event stream\n\n"); err != nil {
		return
	}
	flush()
	ctx, cancel := s.waitContext(ctx, 1<<62)
	defer cancel()
	defer s.metrics.Streaming()()
	secret, _ := ctx.Value(secretKey).(airlock.Hash)
	var buf bytes.Buffer
	for ctx.Err() == nil {
		if !s.stillLive(ctx, t, secret) {
			return
		}
		// The store filters (so that other events' payloads are not read),
		// up to the head read first, so that the stream moves past the
		// events that do not match.
		head, err := s.store().Head(ctx)
		var evs []airlock.Event
		if err == nil {
			evs, err = s.store().Events(ctx, airlock.EventFilter{AfterSeq: after, BeforeSeq: head + 1, Agent: agent,
				KindPrefix: kind, Limit: airlock.MaxPageSize})
		}
		if err != nil {
			if ctx.Err() == nil {
				s.logger().Warn("event stream", "err", err)
			}
			return
		}
		buf.Reset()
		for _, e := range evs {
			after = e.Seq
			data, err := json.Marshal(e)
			if err != nil {
				s.logger().Error("event stream: encode event", "seq", e.Seq, "err", err)
				return
			}
			fmt.Fprintf(&buf, "event: event\nid: %d\ndata: %s\n\n", e.Seq, data)
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			flush()
		}
		if len(evs) == airlock.MaxPageSize {
			continue
		}
		after = max(after, head)
		wctx, wcancel := context.WithTimeout(ctx, heartbeat)
		err = s.store().WaitEvents(wctx, after)
		wcancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flush()
		} else if err != nil {
			return
		}
	}
}

// stillLive re-checks, while a stream is open, that its token has not been
// revoked or expired since it was opened.
func (s *Server) stillLive(ctx context.Context, t *airlock.Token, secret airlock.Hash) bool {
	if t == nil {
		return false
	}
	for _, c := range s.tokens.configured {
		if c.Secret == secret {
			return true
		}
	}
	got, err := s.store().TokenBySecret(ctx, secret)
	return err == nil && got.Live(time.Now())
}

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
