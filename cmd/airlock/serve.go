package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/inbox"
	"github.com/airlock-dev/airlock/metrics"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/passkey"
	"github.com/airlock-dev/airlock/policywatch"
	"github.com/airlock-dev/airlock/sqlite"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	var configPath, listen, dataDir string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Airlock server: JSON API, approvals, audit log",
		Long: `Run the Airlock server. With no configuration it keeps its data in
./airlock-data (SQLite), decides by the built-in starter policy (reads run,
writes ask, destructive and privileged actions need a person) and listens on
127.0.0.1:8080. At first start it prints a one-time admin token.

Policy files named in the configuration are reloaded when they change or on
SIGHUP; a broken policy is reported and the previous one stays in force.
SIGINT or SIGTERM shut down gracefully: waiting checks are answered as still
pending (clients resume them by approval ID), nothing is lost.`,
		Example: `  airlock serve
  airlock serve --config airlock.yaml
  AIRLOCK_DATA=/var/lib/airlock airlock serve --listen 127.0.0.1:9000`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := LoadConfig(configPath)
			if err != nil {
				return checkFailed(err)
			}
			if listen != "" {
				cfg.Listen = listen
			}
			cfg.overrideDataDir(dataDir)
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			m := &Main{Config: cfg, Stdout: cmd.OutOrStdout(), Logger: cfg.Log.Logger(cmd.ErrOrStderr()), HUP: hup}
			if err := m.Run(cmd.Context()); err != nil {
				m.Close()
				return checkFailed(err)
			}
			<-cmd.Context().Done()
			m.Logger.Info("shutting down", "grace", time.Duration(cfg.Timeouts.Shutdown))
			return m.Close()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", os.Getenv("AIRLOCK_CONFIG"), "configuration file (YAML; env AIRLOCK_CONFIG)")
	f.StringVar(&listen, "listen", os.Getenv("AIRLOCK_LISTEN"), "address to listen on, overriding the configuration (default 127.0.0.1:8080, env AIRLOCK_LISTEN)")
	f.StringVar(&dataDir, "data", "", "data directory, overriding the configuration (default ./airlock-data, env AIRLOCK_DATA)")
	return cmd
}

// Main is the airlock server process: the store, the policy and its
// watcher, the enforcer and its sweeper, and the HTTP API. The end-to-end
// tests run it on port 0 with a temporary data directory.
type Main struct {
	Config Config
	// Stdout receives the one-time admin token at first start.
	Stdout io.Writer
	Logger *slog.Logger
	// HUP, when set, delivers SIGHUP: reload the policy now.
	HUP <-chan os.Signal

	DB       *sqlite.DB // the store, when it is SQLite
	Enforcer *gate.Enforcer
	Server   *airlockhttp.Server

	Checkpoints *checkpoint.Checkpointer // signs the audit log's head
	Notifier    *notify.Notifier         // delivers notices through the channels

	watcher *policywatch.Watcher
	bgCtx   context.Context // the background work's, cancelled by Close
	stop    context.CancelFunc
	bg      sync.WaitGroup
	closers []func() error // after the server and background work stop

	closeStore func() error
	unlock     func() error // releases the SQLite store's lock, after it closes
	clicks     clickSide    // what chat channels' clicks act on
}

// rememberFromChat makes the standing grant of a request a person just
// approved and remembered from a chat channel: the narrowest shape that
// covers its action, for 7 days, granted by them.
func (m *Main) rememberFromChat(ctx context.Context, ap airlock.Approval, by string) (airlock.Grant, error) {
	return m.Enforcer.RememberApproved(ctx, ap, nil, nil, by, "approved and remembered from chat", 0)
}

// Run opens the store, loads the policy, starts the background work and
// the server, and returns once it listens.
func (m *Main) Run(ctx context.Context) error {
	store, err := m.openStore(ctx, true)
	if err != nil {
		return err
	}
	mx := metrics.New(store)
	store = mx.Instrument(store)
	checkpoints, err := m.openCheckpoints(store)
	if err != nil {
		return err
	}
	m.Checkpoints = checkpoints
	if err := m.verifyChain(ctx); err != nil {
		return err
	}
	notes, err := m.startEngine(ctx, store, mx.Registry)
	if err != nil {
		return err
	}
	cfg := &m.Config
	tokens, err := configTokens(cfg.Tokens)
	if err != nil {
		return err
	}
	m.Server = &airlockhttp.Server{
		Enforcer: m.Enforcer, Tokens: tokens, Addr: cfg.Listen, Metrics: mx, Version: readBuildInfo().Version, Checkpoints: m.Checkpoints,
		CheckWait: time.Duration(cfg.Timeouts.CheckWait), ReadHeaderTimeout: time.Duration(cfg.Timeouts.ReadHeader),
		Logger: m.Logger.With("component", "http"), Callbacks: map[string]http.Handler{}, PolicyFiles: m.watcher.State,
		ProposalRules: cfg.Proposals.rules(),
	}
	if u := cfg.Notifications.InboxURL; u != "" {
		// Passkeys are bound to the inbox's origin (docs/INBOX.md).
		if m.Server.Passkeys, err = passkey.New(u); err != nil {
			return err
		}
	}
	if cfg.SSO.Issuer != "" {
		// The provider's discovery document is read now: a provider that
		// cannot be reached stops the start, rather than every sign-in.
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		m.Server.SSO, err = inbox.NewSSO(dctx, cfg.SSO.inbox(cfg.Notifications.InboxURL))
		cancel()
		if err != nil {
			return err
		}
	}
	for _, spec := range notes.specs {
		m.Server.Channels = append(m.Server.Channels, spec.Name)
		if cb := notes.callbacks[spec.Name]; cb != nil {
			m.Server.Callbacks[spec.Name] = cb(m.clicks)
		}
	}
	if err := m.Server.Open(); err != nil {
		return err
	}
	// The first admin token is printed once the server listens, so that
	// whoever copies it can use it at once.
	if err := m.bootstrap(ctx, len(tokens)); err != nil {
		return err
	}
	// Stopped after the server: its last checkpoint covers the last request.
	m.bg.Go(func() { m.Checkpoints.Run(m.bgCtx, time.Duration(cfg.Checkpoint.Interval)) })

	layers := m.Enforcer.Gate.Layers()
	names := make([]string, len(layers))
	for i, p := range layers {
		names[i] = p.File()
	}
	// The inbox always shows requests; the channels tell people elsewhere.
	channels := make([]string, len(notes.specs))
	for i, spec := range notes.specs {
		channels[i] = spec.Name + ":" + spec.Type
	}
	listed := strings.Join(channels, ",")
	if len(channels) == 0 {
		listed = "none (the inbox only)"
	}
	m.Logger.Info("airlock serving", "url", m.Server.URL(), "data", cfg.DataDir, "store", cfg.Store.Driver, "policy", names,
		"channels", listed)
	return nil
}

// RunEmbedded starts what an embedded MCP gateway needs of the server, the
// same way Run does: the policy and its watcher, the store, the enforcer
// and its sweeper, and the notifications, so that the requests it queues
// reach people as the server's do. It takes no lock on the store (a server
// may share it), serves no API, signs no checkpoints and makes no token.
func (m *Main) RunEmbedded(ctx context.Context) error {
	store, err := m.openStore(ctx, false)
	if err != nil {
		return err
	}
	_, err = m.startEngine(ctx, store, nil)
	return err
}

// openStore checks the configuration and the policy before anything is
// made on disk — a mistake leaves no data directory, database or key
// behind — then makes the data directory, takes the SQLite store's lock
// when lock is set, and opens the store.
func (m *Main) openStore(ctx context.Context, lock bool) (airlock.Store, error) {
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	if m.Stdout == nil {
		m.Stdout = io.Discard
	}
	cfg := &m.Config
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m.watcher = &policywatch.Watcher{
		Files: cfg.Policies, Logger: m.Logger.With("component", "policy"),
		Interval: time.Duration(cfg.PolicyPoll), Check: cfg.Notifications.checkPolicies,
	}
	if err := m.watcher.Load(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if lock && cfg.Store.Driver == "sqlite" {
		unlock, err := lockStore(cfg.Store.Path)
		if err != nil {
			return nil, err
		}
		m.unlock = unlock
	}
	store, db, closeStore, err := openStore(ctx, cfg, m.Logger)
	if err != nil {
		return nil, err
	}
	m.DB, m.closeStore = db, closeStore
	return store, nil
}

// startEngine puts the policy in force over store (its changes audited
// there, counted in registry when there is one), makes the enforcer,
// starts the notifications, and runs the sweeper and the policy watcher in
// the background until Close.
func (m *Main) startEngine(ctx context.Context, store airlock.Store, registry prometheus.Registerer) (*notifications, error) {
	cfg := &m.Config
	m.watcher.Log, m.watcher.Metrics = store, registry
	g, err := m.watcher.Start(ctx)
	if err != nil {
		return nil, err
	}
	m.Enforcer = &gate.Enforcer{
		Gate: g, Store: store, GrantTTL: time.Duration(cfg.GrantTTL), Logger: m.Logger.With("component", "enforcer"),
		AskLimit: cfg.Asks.budget(), DigestEvery: time.Duration(*cfg.Proposals.DigestEvery), ProposalRules: cfg.Proposals.rules(),
	}
	m.bgCtx, m.stop = context.WithCancel(context.WithoutCancel(ctx))
	m.clicks = clickSide{store: store, remember: m.rememberFromChat}
	notes, err := cfg.Notifications.start(m.bgCtx, &m.bg, m.clicks, m.Logger.With("component", "notify"))
	if err != nil {
		return nil, err
	}
	m.Notifier, m.closers = notes.notifier, notes.closers
	m.bg.Go(func() { m.Enforcer.SweepEvery(m.bgCtx, time.Duration(cfg.Timeouts.Sweep)) })
	m.bg.Go(func() { m.watcher.Run(m.bgCtx, m.HUP) })
	m.bg.Go(func() { m.Enforcer.KeepGrants(m.bgCtx) })
	return notes, nil
}

// verifyChain checks the audit log's chain at start, as the checkpointer
// does before it signs: from the last checkpoint on, which keeps a start
// fast however long the log (the checkpoint's own signature vouches for
// what is before it; 'airlock audit verify' walks the whole log). A broken
// chain is a warning, not a refusal to start: the gate keeps recording.
func (m *Main) verifyChain(ctx context.Context) error {
	from, head, err := m.Checkpoints.VerifyTail(ctx)
	switch {
	case airlock.ErrorCode(err) == airlock.ECONFLICT:
		m.Logger.Warn("the audit log's chain does not verify; run 'airlock audit verify' to see where", "err", airlock.ErrorMessage(err))
		fmt.Fprintf(m.Stdout, "\nWARNING: the audit log's chain does not verify: %s\nRun 'airlock audit verify' to see where.\n\n",
			airlock.ErrorMessage(err))
		return nil
	case err != nil:
		return fmt.Errorf("verify the audit log: %w", err)
	case from > 0:
		m.Logger.Info("audit chain verified since the last checkpoint ('airlock audit verify' checks the whole log)",
			"from_seq", from, "head_seq", head)
	case head > 0:
		m.Logger.Info("audit chain verified", "head_seq", head)
	}
	return nil
}

// URL is the server's base URL once it runs.
func (m *Main) URL() string {
	if m.Server == nil {
		return ""
	}
	return m.Server.URL()
}

// Close shuts down gracefully: waiting checks are answered as pending,
// requests in flight finish (within the shutdown grace), background work
// stops, and the store closes.
func (m *Main) Close() error {
	var errs []error
	if m.Server != nil {
		grace := time.Duration(m.Config.Timeouts.Shutdown)
		if grace <= 0 {
			grace = 30 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
	}
	if m.stop != nil {
		m.stop()
		m.bg.Wait()
	}
	for _, c := range m.closers {
		errs = append(errs, c())
	}
	if m.closeStore != nil {
		errs = append(errs, m.closeStore())
	}
	if m.unlock != nil {
		errs = append(errs, m.unlock())
		m.unlock = nil
	}
	return errors.Join(errs...)
}

// bootstrap creates the first admin token when no token exists at all, and
// prints it once: the server never runs open.
func (m *Main) bootstrap(ctx context.Context, configured int) error {
	if configured > 0 {
		return nil
	}
	existing, err := m.Enforcer.Store.Tokens(ctx)
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		m.recoverHint(existing)
		return nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	secret, h := airlock.NewTokenSecret()
	t := airlock.Token{ID: id.String(), Role: airlock.RoleAdmin, Name: "admin", CreatedBy: "airlock serve (first start)"}
	if _, err := m.Enforcer.Store.CreateToken(ctx, t, h); err != nil {
		return fmt.Errorf("create the first admin token: %w", err)
	}
	fmt.Fprintf(m.Stdout, `
Airlock created an admin token. It is shown this once; Airlock keeps only its hash.

    export AIRLOCK_TOKEN=%s

Make tokens for agents and reviewers with:
    airlock token create --role agent --agent NAME
    airlock token create --role reviewer --name NAME

`, secret)
	return nil
}

// recoverHint says, at a start that prints no admin token, where the one
// printed at the first start went and how to get another: a person who
// ran the server once to try it has usually lost it.
func (m *Main) recoverHint(tokens []airlock.Token) {
	now, live := time.Now(), false
	for _, t := range tokens {
		if t.Role == airlock.RoleAdmin && t.Revoked.IsZero() && (t.Expires.IsZero() || now.Before(t.Expires)) {
			live = true
		}
	}
	where := "--data " + m.Config.DataDir
	if f := m.Config.File(); f != "" {
		where = "--config " + f
	}
	if m.Config.Store.Driver != "sqlite" {
		where = "" // recover writes SQLite only: another admin makes one with token create
	}
	what := "The admin token was printed at this data's first start and is not shown again."
	if !live {
		what = "No admin token is left: each was revoked or has expired."
	}
	fmt.Fprintf(m.Stdout, "\n%s\n", what)
	if where != "" {
		fmt.Fprintf(m.Stdout, "Lost it? Make a new one (while this server runs, too) with:\n    airlock token recover %s\n\n", where)
	} else {
		fmt.Fprintf(m.Stdout, "Lost it? Another admin makes one with:\n    airlock token create --role admin --name NAME\n\n")
	}
}

// configTokens turns the configuration's tokens into the server's.
func configTokens(ts []TokenConfig) ([]airlockhttp.ConfigToken, error) {
	var out []airlockhttp.ConfigToken
	for i, c := range ts {
		t := airlock.Token{ID: fmt.Sprintf("config-%d", i+1), Role: c.Role, Name: c.Name, Agent: c.Agent, CreatedBy: "configuration"}
		if t.Role == airlock.RoleAgent && t.Name == "" {
			t.Name = t.Agent
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("tokens[%d]: %s", i, airlock.ErrorMessage(err))
		}
		out = append(out, airlockhttp.ConfigToken{Token: t, Secret: airlock.HashTokenSecret(c.Secret.Reveal())})
	}
	return out, nil
}
