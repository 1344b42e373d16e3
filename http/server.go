// Package http is Airlock's HTTP surface: the JSON API under /v1 (OpenAPI
// 3.1 at /openapi.json), the reviewers' web inbox, and the Go client.
//
// The server also answers agent hosts' hook calls (POST /v1/hooks/{host}),
// chat providers' callbacks and Prometheus (/metrics).
package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/inbox"
	"github.com/airlock-dev/airlock/metrics"
	"github.com/airlock-dev/airlock/passkey"
	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
)

// Defaults for the server's limits.
const (
	DefaultCheckWait = 60 * time.Second // longest a check long-polls
	maxBodyBytes     = 64 << 10         // every body but a check's
	maxCheckBytes    = airlock.MaxArgsBytes + 64<<10
	maxHeaderBytes   = 16 << 10
)

// Server is Airlock's HTTP API: checks, approvals, the audit log, trust
// records, the policy and tokens. Set the fields, then call Handler or
// Open.
type Server struct {
	// Enforcer decides and records; its Store keeps everything.
	Enforcer *gate.Enforcer
	// Tokens are provisioned by configuration, beside those in the store.
	Tokens []ConfigToken
	// CheckWait caps how long one request long-polls (0: DefaultCheckWait);
	// callers come back with the approval ID for longer waits.
	CheckWait time.Duration
	// Addr is the address Open listens on.
	Addr string
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// Logger receives request errors; nil discards them.
	Logger *slog.Logger
	// Version is reported in the OpenAPI document.
	Version string
	// Metrics, when set, are those the store was instrumented with
	// (Metrics.Instrument); nil: the server makes its own.
	Metrics *metrics.Metrics
	// Checkpoints signs the audit log's head; nil: the server signs none.
	Checkpoints *checkpoint.Checkpointer
	// Channels are the names of the notification channels configured,
	// for test messages.
	Channels []string
	// Callbacks are the chat channels' callback handlers by channel name,
	// served at POST /callbacks/{channel}. They authenticate each request
	// themselves (the provider signs it) and resolve as the mapped person.
	Callbacks map[string]http.Handler
	// PolicyFiles, when set, tells what the policy watcher knows of the
	// files behind the stack in force: their hashes, and whether those on
	// disk were refused (GET /v1/policy and /readyz say so). Nil: the
	// server knows only the gate's layers.
	PolicyFiles func() PolicyFiles

	once    sync.Once
	handler http.Handler
	metrics *metrics.Metrics
	tokens  tokenCache
	// unauthAudit limits the audit records of callers without a token.
	unauthAudit auditLimiter
	// noQuickCheck sends every check through huma (quickChecks), for the
	// tests that compare the two.
	noQuickCheck bool

	ln    net.Listener
	srv   *http.Server
	drain chan struct{} // closed when the server starts shutting down
	dmu   sync.Once
	// ProposalRules are what the record must show before a grant is
	// proposed (GET /v1/grants/proposals); the zero value is the defaults.
	ProposalRules gate.ProposalRules
	// Passkeys is the relying party of reviewers' passkeys (the inbox's
	// URL); nil: passkeys cannot be registered, and a request whose review
	// needs one cannot be approved.
	Passkeys *passkey.RP
	// SSO signs people in to the inbox with an OpenID Connect provider;
	// nil: tokens only.
	SSO *inbox.SSO
}

// ConfigToken is a token given in the configuration: its identity and the
// hash of its secret.
type ConfigToken struct {
	Token  airlock.Token
	Secret airlock.Hash
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	s.once.Do(s.build)
	return s.handler
}

// Open listens on Addr and serves in the background.
func (s *Server) Open() error {
	h := s.Handler()
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.logger().Handler(), slog.LevelWarn),
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger().Error("serve", "err", err)
		}
	}()
	return nil
}

// URL is the base URL the server listens on, once open.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Drain tells long polls and event streams to end now: a waiting check
// answers with its request still pending, for the caller to resume
// elsewhere or after a restart.
func (s *Server) Drain() {
	s.once.Do(s.build)
	s.dmu.Do(func() { close(s.drain) })
}

// Shutdown drains, then stops accepting requests and waits, until ctx
// ends, for those in flight to finish.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Drain()
	if s.srv == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		// The grace is over: close what is left (a stream whose client
		// stopped reading, a slow body).
		s.srv.Close()
	}
	return err
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Server) store() airlock.Store { return s.Enforcer.Store }

func (s *Server) checkWait() time.Duration {
	if s.CheckWait <= 0 {
		return DefaultCheckWait
	}
	return s.CheckWait
}

// build assembles the routes. Every API route is on this screen.
func (s *Server) build() {
	s.drain = make(chan struct{})
	if s.metrics = s.Metrics; s.metrics == nil {
		s.metrics = metrics.New(s.Enforcer.Store)
	}
	s.tokens.configured = s.Tokens

	mux := http.NewServeMux()
	api := humago.New(mux, apiConfig(s.Version))

	// Checks: the agent's side.
	register(api, s, "POST /v1/check", "check", "Check an action", s.check, maxCheckBytes)
	register(api, s, "GET /v1/check/{id}", "resume-check", "Resume waiting on a check that asked", s.resumeCheck, 0)
	register(api, s, "POST /v1/executions", "record-execution", "Record that an allowed action ran", s.recordExecution, maxCheckBytes)
	register(api, s, "POST /v1/mcp/tools", "release-mcp-tools", "Check an MCP server's tool listing against the pinned definitions", s.releaseTools, 4*maxCheckBytes)

	// Approvals: the reviewers' side.
	register(api, s, "GET /v1/approvals", "list-approvals", "List approval requests", s.listApprovals, 0)
	register(api, s, "GET /v1/approvals/groups", "group-approvals", "Pending requests grouped by agent, tool and shape, for batch review", s.approvalGroups, 0)
	register(api, s, "GET /v1/approvals/{id}", "get-approval", "Get an approval request", s.getApproval, 0)
	register(api, s, "POST /v1/approvals/{id}/resolution", "resolve-approval", "Approve or reject a request", s.resolveApproval, maxBodyBytes)
	register(api, s, "POST /v1/approvals/{id}/cancel", "cancel-approval", "Cancel a pending request", s.cancelApproval, maxBodyBytes)
	register(api, s, "GET /v1/approvals/{id}/wait", "wait-approval", "Wait until a request is settled", s.waitApproval, 0)
	register(api, s, "POST /v1/approvals/{id}/remember", "remember-approval", "Grant an approved request's shape for a while (approve and remember)", s.remember, maxBodyBytes)
	register(api, s, "GET /v1/grants", "list-grants", "List standing grants", s.listGrants, 0)
	register(api, s, "GET /v1/grants/proposals", "list-grant-proposals", "Grants proposed from the record, with their evidence", s.listProposals, 0)
	register(api, s, "POST /v1/grants/proposals/ratify", "ratify-grant-proposal", "Make the grant a current proposal describes", s.ratifyProposal, maxBodyBytes)
	register(api, s, "POST /v1/grants/proposals/dismiss", "dismiss-grant-proposal", "Dismiss a current proposal until its evidence changes", s.dismissProposal, maxBodyBytes)
	register(api, s, "GET /v1/grants/{id}", "get-grant", "Get a standing grant", s.getGrant, 0)
	register(api, s, "POST /v1/grants/{id}/revoke", "revoke-grant", "Revoke a standing grant", s.revokeGrant, maxBodyBytes)

	// The audit log and trust records.
	register(api, s, "GET /v1/events", "list-events", "Page through the audit log", s.listEvents, 0)
	registerEventStream(api, s)
	register(api, s, "GET /v1/audit/verify", "verify-audit", "Verify the audit log's hash chain", s.verifyAudit, 0)
	register(api, s, "GET /v1/audit/checkpoint", "get-checkpoint", "The verifier key and the latest signed checkpoint", s.getCheckpoint, 0)
	register(api, s, "POST /v1/audit/checkpoint", "sign-checkpoint", "Sign a checkpoint of the audit log's head now", s.signCheckpoint, maxBodyBytes)
	register(api, s, "GET /v1/trust", "list-trust", "Trust aggregates per agent and class", s.listTrust, 0)
	register(api, s, "GET /v1/trust/reviews", "review-signals", "Rubber-stamp signals by reviewer and agent", s.reviewSignals, 0)

	// The policy.
	register(api, s, "GET /v1/policy", "get-policy", "The policy stack in force", s.getPolicy, 0)
	register(api, s, "GET /v1/policy/effective", "get-effective-policy", "What the policy in force can apply to one agent", s.effectivePolicy, 0)
	register(api, s, "POST /v1/policy/explain", "explain-action", "Explain how the policy decides an action", s.explain, maxCheckBytes)
	register(api, s, "POST /v1/policy/backtest", "backtest-policy", "Replay the recorded decisions through other policy files", s.backtest, 4*gate.MaxPolicyBytes)

	// Tokens.
	register(api, s, "POST /v1/tokens", "create-token", "Create a bearer token", s.createToken, maxBodyBytes)
	register(api, s, "POST /v1/reviewers/{name}/passkey-enrolments", "enrol-passkey", "Let a person register a passkey, once", s.enrolPasskey, maxBodyBytes)
	register(api, s, "GET /v1/tokens", "list-tokens", "List bearer tokens", s.listTokens, 0)
	register(api, s, "DELETE /v1/tokens/{id}", "revoke-token", "Revoke a bearer token", s.revokeToken, 0)
	register(api, s, "GET /v1/whoami", "whoami", "The token's identity", s.whoami, 0)

	// Notifications: where notices went, the dead letters.
	register(api, s, "GET /v1/notifications", "list-notifications", "List notification deliveries", s.listNotifications, 0)
	register(api, s, "GET /v1/notifications/{id}", "get-notification", "Get a notification delivery", s.getNotification, 0)
	register(api, s, "POST /v1/notifications/{id}/retry", "retry-notification", "Send a failed or dead delivery again", s.retryNotification, maxBodyBytes)
	register(api, s, "POST /v1/notifications/test", "test-notification", "Send a test message through a channel", s.testNotification, maxBodyBytes)

	mux.Handle("/", routeMissing(mux))

	root := http.NewServeMux()
	root.Handle("/v1/", s.authenticate(s.quickChecks(mux)))
	root.Handle("POST /v1/hooks/{host}", http.HandlerFunc(s.hookCall))     // authenticates itself: see hookCall
	root.Handle("POST /callbacks/{channel}", http.HandlerFunc(s.callback)) // signed by the chat provider
	root.Handle("GET /openapi.json", mux)
	root.Handle("GET /openapi.yaml", mux)
	root.Handle("GET /healthz", http.HandlerFunc(s.healthz))
	root.Handle("GET /readyz", http.HandlerFunc(s.readyz))
	root.Handle("GET /metrics", s.metrics.Handler())
	inbox.Mount(root, inboxHost{s})
	root.Handle("/", http.HandlerFunc(notFound))
	s.handler = s.metrics.Middleware(s.logRequests(root))
}

// register adds one operation with its body limit (0: no body expected).
func register[I, O any](api huma.API, s *Server, route, id, summary string, h func(context.Context, *I) (*O, error), maxBody int64) {
	method, path, _ := cutSpace(route)
	op := huma.Operation{
		OperationID: id, Method: method, Path: path, Summary: summary,
		Security: []map[string][]string{{"bearer": {}}},
		Errors:   []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable},
	}
	if maxBody > 0 {
		op.MaxBodyBytes = maxBody
		op.Errors = append(op.Errors, http.StatusRequestEntityTooLarge, http.StatusConflict, http.StatusUnprocessableEntity)
	}
	huma.Register(api, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			return nil, s.problem(ctx, err)
		}
		return out, nil
	})
}

func cutSpace(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}

var newErrorOnce sync.Once

// apiConfig is the huma configuration: OpenAPI 3.1 at /openapi.json,
// strict JSON bodies, problem+json errors carrying Airlock's codes.
func apiConfig(version string) huma.Config {
	// huma builds its own errors (validation, body limits) through this
	// package-level hook; Airlock's Problem adds the stable code. Every
	// Server sets the same function, once.
	newErrorOnce.Do(func() {
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return newProblem(status, airlock.CodeOfStatus(status), msg, errs...)
		}
	})
	if version == "" {
		version = "dev"
	}
	cfg := huma.DefaultConfig("Airlock API", version)
	cfg.Info.Description = "The gate in front of AI agents' side effects: check actions, approve or reject requests, read the audit log."
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.OpenAPIPath = "/openapi"
	cfg.RejectUnknownQueryParameters = true
	cfg.Formats = map[string]huma.Format{
		"application/json": strictJSON,
		"json":             strictJSON,
	}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An Airlock token (airlock token create); agent tokens act as one agent."},
	}
	// Response schemas document the body; they do not add a $schema field.
	cfg.CreateHooks = nil
	documentTypes(cfg.Components.Schemas)
	return cfg
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz reports whether the store can record decisions (it reads and
// writes), and what fails when it cannot. While the policy files on disk
// are not the stack in force (a refused reload), it still answers 200 (the
// previous stack decides, and every replica refusing the same bad file
// would stop them all) but says so, with the hashes of both; the errors
// themselves are for authenticated readers (GET /v1/policy, the audit
// log), since /readyz has none.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.store().Ready(ctx); err != nil {
		s.logger().Warn("not ready", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "store unavailable: "+airlock.ErrorMessage(err))
		return
	}
	select {
	case <-s.drain:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
		return
	default:
	}
	fmt.Fprintln(w, "ready")
	if st := s.policyFiles().Stale; st != nil {
		writeStale(w, st)
	}
}

// writeStale says, in /readyz's plain text, that the policy files on disk
// are not the stack in force.
func writeStale(w io.Writer, st *StalePolicy) {
	fmt.Fprintf(w, "policy stale: the policy files on disk are not the ones in force; their reload was refused at %s (%s) with %d error(s), and the previous policy still decides\n",
		st.Refused.UTC().Format(time.RFC3339), st.Reason, len(st.Errors))
	for _, f := range st.OnDisk {
		h := f.SHA256
		if h == "" {
			h = "unreadable"
		}
		fmt.Fprintf(w, "on disk:  %s sha256 %s\n", f.File, h)
	}
	for _, f := range st.InForce {
		fmt.Fprintf(w, "in force: %s sha256 %s\n", f.File, f.SHA256)
	}
}

// routeMissing answers a request no route of mux takes: 405 with the
// methods the path has, or 404.
func routeMissing(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
				allow = append(allow, m)
			}
		}
		if len(allow) == 0 {
			notFound(w, r)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, newProblem(http.StatusMethodNotAllowed, airlock.EINVALID,
			fmt.Sprintf("%s %s: the route takes %s", r.Method, r.URL.Path, strings.Join(allow, ", "))))
	})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, newProblem(http.StatusNotFound, airlock.ENOTFOUND, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)))
}

// waitContext ends with ctx, after d, or when the server drains.
func (s *Server) waitContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	go func() {
		select {
		case <-s.drain:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// logRequests writes one debug line per request: method, route, status,
// duration. Request bodies and tokens are never logged.
func (s *Server) logRequests(next http.Handler) http.Handler {
	log := s.logger()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &metrics.StatusWriter{ResponseWriter: w, Status: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.LogAttrs(r.Context(), slog.LevelDebug, "request", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", sw.Status), slog.Duration("took", time.Since(start)),
			slog.String("remote", r.RemoteAddr))
	})
}
