package mcp

import (
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/catalog"
)

// The gateway is the executor of the MCP calls it refused as proposals
// (suggest, needs-human): when a person approves one and asks that it run
// now, a session of the agent's runs it through its own upstream — exactly
// the approved arguments, once (the approval is a one-shot grant: of
// several sessions, one wins) — and records what it returned with the
// request, for the person to read. Without a session, the call runs when
// one starts, while the grant lasts.

// execute runs the session's agent's calls approved to run now, until the
// session ends; Airlock unreachable, it tries again.
func (s *session) execute() {
	for backoff := time.Second; s.ctx.Err() == nil; backoff = min(2*backoff, time.Minute) {
		err := s.checker.RunNow(s.ctx, s.agent, s.runApproved)
		if s.ctx.Err() != nil {
			return
		}
		s.g.logger().Warn("watch for calls approved to run now", "session", s.id, "err", err, "retry in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-s.ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// runApproved runs one call approved to run now, if it is one of this
// session's servers' and the session has not taken it yet.
func (s *session) runApproved(ap airlock.Approval) {
	if !ap.RunNow || ap.Status != airlock.StatusApproved || !ap.GrantUsed.IsZero() {
		return
	}
	server, tool, ok := strings.Cut(strings.TrimPrefix(ap.Action.Tool, "mcp__"), "__")
	if !ok || !strings.HasPrefix(ap.Action.Tool, "mcp__") {
		return
	}
	var u *upstream
	for _, c := range s.ups {
		if c.srv.Name == server {
			u = c
		}
	}
	if u == nil {
		return
	}
	s.mu.Lock()
	if s.taken == nil {
		s.taken = map[string]bool{}
	}
	if s.taken[ap.ID] {
		s.mu.Unlock()
		return
	}
	s.taken[ap.ID] = true
	s.mu.Unlock()
	go s.runNow(u, tool, ap)
}

func (s *session) runNow(u *upstream, tool string, ap airlock.Approval) {
	log := s.g.logger().With("approval", ap.ID, "tool", ap.Action.Tool, "session", s.id)
	// Exactly what was approved: the arguments in the form the action hash
	// covers, never re-read another way.
	args, err := airlock.CanonicalArgs(ap.Action.Args)
	if err != nil {
		log.Warn("run now: the approved arguments cannot be read", "err", err)
		return
	}
	method, params := tool, args // a resource read or a prompt: the params are the arguments
	if tool != catalog.MCPResourceRead && tool != catalog.MCPPromptGet {
		list, err := u.listing(s.ctx)
		if err != nil {
			log.Warn("run now: list the server's tools", "err", err)
			return
		}
		if t := list.byName[tool]; t == nil || t.refused != "" {
			log.Warn("run now: the server does not offer the tool", "why", func() string {
				if t == nil {
					return "not listed"
				}
				return t.refused
			}())
			return
		}
		method = "tools/call"
		if params, err = toolParams(tool, args, nil); err != nil {
			log.Warn("run now: encode the call", "err", err)
			return
		}
	}
	enf := s.checker.Check(s.ctx, ap.Action)
	switch {
	case enf.Err != nil:
		log.Warn("run now: Airlock could not be asked", "err", enf.Err)
		return
	case !enf.Allowed:
		// Another session ran it, or the grant expired: nothing to do.
		log.Info("run now: not this session's to run", "code", enf.Code, "why", enf.Message)
		return
	}
	start := time.Now()
	_, callErr := s.forwardDecided(s.ctx, u, enf, method, params, true)
	log.Info("ran a call approved to run now", "took", time.Since(start), "err", callErr)
}
