package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	slackgo "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

// Bounds of a click's handling: Slack wants its answer within 3 seconds.
const (
	// MaxBody bounds an interactivity request's body.
	MaxBody = 64 << 10
	// resolveTimeout bounds the resolution, before the answer.
	resolveTimeout = 2 * time.Second
	// answerWithin bounds how long a click's HTTP answer waits for the
	// click to be handled: Slack gives up after 3 s.
	answerWithin = 2500 * time.Millisecond
	// followUpTimeout bounds the message update or ephemeral answer that
	// follows, after the answer.
	followUpTimeout = 10 * time.Second
)

// Handler returns the app's interactivity endpoint (its Request URL; the
// server mounts it at POST /callbacks/<channel name>). It verifies each
// request's signature (X-Slack-Signature, X-Slack-Request-Timestamp within
// five minutes) before it reads anything from it, resolves the request a
// click on Approve or Reject names through clicks, and answers within
// Slack's 3 seconds. Then, in the background, it updates the message in
// place with the outcome, or tells the person who clicked, in a message
// only they see, why the click was refused.
//
// Answers: 401 for a missing, forged or stale signature; 405, 413, 415,
// 400 for a request that is not a well-formed click on one of its
// buttons; 200 otherwise, refusals included (Slack shows its users
// nothing of a status). Nothing is recorded before a request is verified
// and understood.
func (c *Channel) Handler(clicks *notify.Clicks) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read the request body", http.StatusBadRequest)
			return
		}
		if err := c.verify(r.Header, body); err != nil {
			http.Error(w, "invalid Slack signature", http.StatusUnauthorized)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
			http.Error(w, "expected application/x-www-form-urlencoded", http.StatusUnsupportedMediaType)
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "malformed form body", http.StatusBadRequest)
			return
		}
		payload := form.Get("payload")
		if payload == "" {
			http.Error(w, "no payload", http.StatusBadRequest)
			return
		}
		var cb slackgo.InteractionCallback
		if err := json.Unmarshal([]byte(payload), &cb); err != nil {
			http.Error(w, "payload is not an interaction", http.StatusBadRequest)
			return
		}
		k, err := parseClick(&cb)
		switch {
		case errors.Is(err, errLinkClick):
			w.WriteHeader(http.StatusOK)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// Slack wants its answer within 3 s; what the click did is told
		// by the follow-ups (the message updated, an ephemeral answer).
		// A store that stalls must not hold the answer past it.
		answered := make(chan struct{})
		c.followUps.Go(func() {
			defer close(answered)
			c.answer(context.WithoutCancel(r.Context()), clicks, k)
		})
		t := time.NewTimer(answerWithin)
		select {
		case <-answered:
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
		w.WriteHeader(http.StatusOK)
	})
}

// verify checks Slack's v0 signature of body, within five minutes.
func (c *Channel) verify(h http.Header, body []byte) error {
	v, err := slackgo.NewSecretsVerifier(h, c.signingSecret)
	if err != nil {
		return err
	}
	if _, err := v.Write(body); err != nil {
		return err
	}
	return v.Ensure()
}

// RunSocketMode receives clicks over Slack's Socket Mode until ctx ends,
// for a server Slack cannot reach: it opens a websocket with the app-level
// token (Config.AppToken), acknowledges each interactive envelope once it
// is handled, and handles it as Handler does. It returns ctx's error when
// ctx ends, or why the connection could not be kept (a revoked token).
func (c *Channel) RunSocketMode(ctx context.Context, clicks *notify.Clicks) error {
	if c.appToken == "" {
		return errors.New("slack socket mode: no app-level token (app_token, xapp-…) is configured")
	}
	sm := socketmode.New(c.newAPI(slackgo.OptionAppLevelToken(c.appToken)),
		socketmode.OptionLog(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("slack socket mode: %w", err)
		case evt := <-sm.Events:
			switch evt.Type {
			case socketmode.EventTypeInteractive:
				cb, _ := evt.Data.(slackgo.InteractionCallback)
				req := evt.Request
				if req == nil {
					continue
				}
				inFlight.Go(func() {
					// Acknowledged first, within Slack's 3 s whatever the
					// store does; the follow-ups tell what the click did.
					c.ack(ctx, sm, req.EnvelopeID)
					if k, err := parseClick(&cb); err == nil {
						c.answer(ctx, clicks, k)
					} else if !errors.Is(err, errLinkClick) {
						c.logger.Warn("slack: socket mode: not a click on Airlock's buttons", "err", err)
					}
				})
			case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand:
				// Not Airlock's: acknowledged so that Slack does not resend it.
				if evt.Request != nil {
					c.ack(ctx, sm, evt.Request.EnvelopeID)
				}
			case socketmode.EventTypeErrorBadMessage:
				if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
					var env struct {
						EnvelopeID string `json:"envelope_id"`
					}
					if json.Unmarshal(bad.Message, &env) == nil && env.EnvelopeID != "" {
						c.ack(ctx, sm, env.EnvelopeID)
					}
					c.logger.Warn("slack: socket mode: malformed message", "err", bad.Cause)
				}
			case socketmode.EventTypeConnected:
				c.logger.Info("slack: socket mode connected")
			case socketmode.EventTypeConnectionError:
				c.logger.Warn("slack: socket mode: cannot connect; retrying", "err", evt.Data)
			case socketmode.EventTypeInvalidAuth:
				c.logger.Error("slack: socket mode: the app-level token was refused")
			}
		}
	}
}

// ack acknowledges a Socket Mode envelope.
func (c *Channel) ack(ctx context.Context, sm *socketmode.Client, envelope string) {
	if envelope == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	if err := sm.AckCtx(ctx, envelope, nil); err != nil && ctx.Err() == nil {
		c.logger.Warn("slack: socket mode: cannot acknowledge", "envelope", envelope, "err", err)
	}
}

// click is a click on Approve or Reject.
type click struct {
	user     string
	status   airlock.ApprovalStatus
	id       string
	hash     airlock.Hash
	remember bool   // approve and remember
	channel  string // where the message is, for its update and the ephemeral answer
	ts       string
	link     string // the message's inbox link, kept when it is updated
}

// errLinkClick is a click on "View in inbox": Slack reports it, there is
// nothing to do.
var errLinkClick = errors.New("a click on the inbox link")

// parseClick reads a click on one of the message's buttons.
func parseClick(cb *slackgo.InteractionCallback) (click, error) {
	if cb.Type != slackgo.InteractionTypeBlockActions {
		return click{}, fmt.Errorf("interaction %q is not a click on a button (block_actions)", cb.Type)
	}
	if cb.User.ID == "" {
		return click{}, errors.New("the click names no user")
	}
	k := click{user: cb.User.ID, channel: cb.Container.ChannelID, ts: cb.Container.MessageTs}
	if k.channel == "" {
		k.channel = cb.Channel.ID
	}
	if k.ts == "" {
		k.ts = cb.Message.Timestamp
	}
	var act *slackgo.BlockAction
	link := false
	for _, a := range cb.ActionCallback.BlockActions {
		switch a.ActionID {
		case ActionApprove, ActionReject, ActionApproveRemember:
			if act == nil {
				act = a
			}
		case ActionInbox, ActionEdit, ActionPasskey:
			link = true
		}
	}
	switch {
	case act == nil && link:
		return click{}, errLinkClick
	case act == nil:
		return click{}, errors.New("the click is on no button of Airlock's")
	case act.ActionID == ActionApprove:
		k.status = airlock.StatusApproved
	case act.ActionID == ActionApproveRemember:
		k.status, k.remember = airlock.StatusApproved, true
	default:
		k.status = airlock.StatusRejected
	}
	var v buttonValue
	dec := json.NewDecoder(bytes.NewReader([]byte(act.Value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.ID == "" || v.Hash.IsZero() {
		return click{}, errors.New("the button's value names no request and action hash")
	}
	k.id, k.hash = v.ID, v.Hash
	k.link = inboxLink(&cb.Message)
	return k, nil
}

// inboxLink returns the URL of the message's "View in inbox" button.
func inboxLink(m *slackgo.Message) string {
	for _, b := range m.Blocks.BlockSet {
		a, ok := b.(*slackgo.ActionBlock)
		if !ok || a.Elements == nil {
			continue
		}
		for _, e := range a.Elements.ElementSet {
			if btn, ok := e.(*slackgo.ButtonBlockElement); ok && btn.ActionID == ActionInbox {
				return btn.URL
			}
		}
	}
	return ""
}

// answer resolves the click's request, within resolveTimeout, then
// updates the message or tells the person who clicked, in the background.
func (c *Channel) answer(ctx context.Context, clicks *notify.Clicks, k click) {
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	ap, err := clicks.Resolve(rctx, k.user, k.id, k.hash, k.status, "")
	cancel()
	var refused *notify.Refusal
	switch {
	case err == nil && k.remember:
		rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		g, gerr := clicks.RememberApproved(rctx, k.user, ap)
		cancel()
		c.followUp(ctx, func(ctx context.Context) {
			c.showSettled(ctx, k, &ap)
			c.tellClicker(ctx, k, clip(notify.RememberedText(g, gerr), 2000))
		})
	case err == nil:
		c.followUp(ctx, func(ctx context.Context) { c.showSettled(ctx, k, &ap) })
	case errors.As(err, &refused):
		c.followUp(ctx, func(ctx context.Context) {
			c.tellClicker(ctx, k, "🚫 Airlock refused this click: "+clip(refused.Message, 2000))
			if ap.ID == k.id && ap.Status != airlock.StatusPending {
				c.showSettled(ctx, k, &ap) // a message that still offers buttons: show how it ended
			}
		})
	default:
		c.logger.Error("slack: cannot record a click", "approval", k.id, "user", k.user, "err", err)
		c.followUp(ctx, func(ctx context.Context) {
			c.tellClicker(ctx, k, "⚠ Airlock could not record your answer, so this click approved and rejected nothing. "+
				"Check the request in the inbox, then try again.")
		})
	}
}

// showSettled updates the clicked message with the request's outcome.
func (c *Channel) showSettled(ctx context.Context, k click, ap *airlock.Approval) {
	if k.channel == "" || k.ts == "" {
		return
	}
	d := &notify.Delivery{Approval: ap, Link: k.link}
	d.Kind, d.ApprovalID = airlock.EventApprovalResolved, ap.ID
	if err := c.update(ctx, ref{k.channel, k.ts}, c.approvalMessage(d, false, "")); err != nil {
		c.logger.Warn("slack: cannot update the clicked message", "approval", ap.ID, "err", err)
	}
}

// tellClicker answers the person who clicked in a message only they see.
func (c *Channel) tellClicker(ctx context.Context, k click, text string) {
	if k.channel == "" {
		return
	}
	if err := c.ephemeral(ctx, k.channel, k.user, text); err != nil {
		c.logger.Warn("slack: cannot answer the person who clicked", "approval", k.id, "user", k.user, "err", err)
	}
}

// followUp runs f in the background, bounded by followUpTimeout, after
// the click's answer; Close waits for it.
func (c *Channel) followUp(ctx context.Context, f func(context.Context)) {
	c.followUps.Go(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), followUpTimeout)
		defer cancel()
		f(ctx)
	})
}
