package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/inbox"
	"github.com/airlock-dev/airlock/policywatch"
)

// Config is the configuration of `airlock serve`, read from a YAML file
// (`airlock serve --config airlock.yaml`). Every field is optional: an
// empty file, or none, serves on 127.0.0.1:8080 with SQLite in
// ./airlock-data and the built-in starter policy. docs/CONFIG.md renders
// these comments; keep the two in step.
//
// Loading is strict: an unknown field, a value of the wrong type or a bad
// value is an error located at its file:line:col, and every problem is
// reported at once. Relative paths in the file are relative to the file's
// directory, not to the working directory.
//
// Before decoding, ${NAME} in any value is replaced by the environment
// variable NAME (an unset one is an error unless written ${NAME:-default},
// which also applies when NAME is empty); $$ is a literal $, and a $
// followed by anything else stays as it is. Expansion happens inside
// scalar values only, after the YAML is parsed, so a variable's value is
// always one string: it can never add keys, entries or structure. Keys
// and comments are not expanded. Inside a flow collection ({...} or
// [...]), quote a value holding ${...}: its braces are YAML syntax there.
type Config struct {
	// Listen is the TCP address the HTTP API and the web inbox listen on.
	// Default "127.0.0.1:8080". Put a TLS-terminating proxy in front of
	// Airlock before listening beyond localhost.
	Listen string `yaml:"listen"`

	// DataDir is the directory Airlock keeps its state in (the SQLite
	// database by default). Default: the environment variable
	// AIRLOCK_DATA if set, else "./airlock-data" (both relative to the
	// working directory); a data_dir in the file overrides both.
	DataDir string `yaml:"data_dir"`

	// Store is where approval requests, the audit log, trust records and
	// tokens are kept.
	Store StoreConfig `yaml:"store"`

	// Policies are the policy files of the stack, from the top layer down
	// (organisation, project, agent; see docs/POLICY.md). Empty: the
	// built-in starter policy (`airlock policy show`), which is never
	// reloaded.
	Policies []string `yaml:"policies"`

	// PolicyPoll is how often the policy files are checked for changes
	// (SIGHUP reloads at once). A changed stack is swapped in only if
	// every file loads and every test passes. Default 1s.
	PolicyPoll Duration `yaml:"policy_poll"`

	// Timeouts bound how long the server waits for things.
	Timeouts TimeoutsConfig `yaml:"timeouts"`

	// GrantTTL is how long an approved proposal (a suggest or needs-human
	// request) may be used, once, by the action it approved. Default 1h.
	GrantTTL Duration `yaml:"grant_ttl"`

	// Proposals sets what the record must show before a standing grant is
	// proposed (airlock grants proposals; docs/POLICY.md, "Proposals from
	// the record").
	Proposals ProposalsConfig `yaml:"proposals"`

	// Asks bounds how often one agent may put a new ask to people
	// (docs/POLICY.md, "Fatigue guards").
	Asks AsksConfig `yaml:"asks"`

	// Checkpoint sets the signed checkpoints of the audit log (see
	// docs/SERVER.md, "Signed checkpoints").
	Checkpoint CheckpointConfig `yaml:"checkpoint"`

	// Tokens are bearer tokens the configuration provisions at start-up,
	// in addition to those created with the API. Default none.
	Tokens []TokenConfig `yaml:"tokens"`

	// Log sets the server's log output (to standard error).
	Log LogConfig `yaml:"log"`

	// Notifications sets the channels that tell people of requests and
	// let them answer from where they are (docs/NOTIFICATIONS.md).
	Notifications NotificationsConfig `yaml:"notifications"`

	// SSO signs people in to the inbox with an OpenID Connect provider
	// (docs/INBOX.md, "Single sign-on"); tokens still sign in.
	SSO SSOConfig `yaml:"sso"`

	src *configSource // where the config was read from; nil for DefaultConfig
}

// SSOConfig is the inbox's OpenID Connect provider. Its callback is the
// inbox's URL (notifications.inbox_url) and /inbox/sso/callback.
type SSOConfig struct {
	// Issuer is the provider's issuer URL; none turns single sign-on off.
	Issuer string `yaml:"issuer"`
	// Name is the provider's name on the sign-in page.
	Name     string `yaml:"name"`
	ClientID string `yaml:"client_id"`
	// ClientSecret (or ClientSecretFile) authenticates Airlock to the
	// provider; a public client (PKCE alone) has none.
	ClientSecret     Secret `yaml:"client_secret"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// Scopes asked for besides openid; default profile, email, groups.
	Scopes []string `yaml:"scopes"`
	// NameClaim and GroupsClaim name the claims of a person's name
	// (default preferred_username, else email) and groups (default
	// groups).
	NameClaim   string `yaml:"name_claim"`
	GroupsClaim string `yaml:"groups_claim"`
	// AdminGroups sign in as admins; ReviewerGroups as reviewers (none:
	// everyone the provider signs in who is not an admin).
	AdminGroups    []string `yaml:"admin_groups"`
	ReviewerGroups []string `yaml:"reviewer_groups"`
}

// inbox is the single sign-on as the inbox takes it.
func (s *SSOConfig) inbox(inboxURL string) inbox.SSOConfig {
	return inbox.SSOConfig{
		Name: s.Name, Issuer: s.Issuer, ClientID: s.ClientID, ClientSecret: s.ClientSecret.Reveal(),
		RedirectURL: strings.TrimRight(inboxURL, "/") + "/inbox/sso/callback", Scopes: s.Scopes,
		NameClaim: s.NameClaim, GroupsClaim: s.GroupsClaim, AdminGroups: s.AdminGroups, ReviewerGroups: s.ReviewerGroups,
	}
}

// ProposalsConfig is what the record must show before Airlock proposes a
// standing grant.
type ProposalsConfig struct {
	// MinApprovals of the same shape of action. Default 5.
	MinApprovals int `yaml:"min_approvals"`
	// MinReviewers, distinct people who approved them. Default 2.
	MinReviewers int `yaml:"min_reviewers"`
	// MinMedianWait is the least median time from request to approval, a
	// sign the requests were read. Default 10s.
	MinMedianWait Duration `yaml:"min_median_wait"`
	// Window is how far back the record is read. Default 720h (30 days).
	Window Duration `yaml:"window"`
	// DigestEvery is how often each agent's owner is told of the grants
	// proposed for the agent. Default 168h (weekly); 0 never.
	DigestEvery *Duration `yaml:"digest_every"`
}

// AsksConfig is the ask limit: past Limit new ask requests of one agent
// within Per, its asks are parked as proposals (AIRLOCK-ASK-LIMITED).
type AsksConfig struct {
	// Limit is the most new asks per agent in a window. Default 30; 0
	// turns the limit off.
	Limit *int `yaml:"limit"`
	// Per is the rolling window, from 1m to 24h. Default 10m.
	Per Duration `yaml:"per"`
}

// budget is the ask limit as the enforcer takes it; nil when off.
func (a *AsksConfig) budget() *airlock.Budget {
	if *a.Limit == 0 {
		return nil
	}
	return &airlock.Budget{Uses: int64(*a.Limit), Per: time.Duration(a.Per).String()}
}

// rules are the proposals' thresholds as the gate takes them.
func (p *ProposalsConfig) rules() gate.ProposalRules {
	return gate.ProposalRules{MinApprovals: p.MinApprovals, MinReviewers: p.MinReviewers,
		MinMedianWait: time.Duration(p.MinMedianWait), Window: time.Duration(p.Window)}
}

// StoreConfig chooses the store.
type StoreConfig struct {
	// Driver is the store's kind: "sqlite" (embedded, one process) or
	// "postgres" (one PostgreSQL database; several replicas may serve
	// it). Default "sqlite".
	Driver string `yaml:"driver"`
	// Path is the SQLite database file. Default <data_dir>/airlock.db.
	Path string `yaml:"path"`
	// DSN is the PostgreSQL connection string
	// (postgres://airlock@db.example/airlock?sslmode=verify-full, or
	// key=value pairs; pool settings like pool_max_conns too). It may hold
	// a password: give it with ${ENV} or in dsn_file, never written here.
	DSN Secret `yaml:"dsn"`
	// DSNFile is a file holding the DSN (surrounding whitespace trimmed).
	DSNFile string `yaml:"dsn_file"`
	// Schema is the PostgreSQL schema of Airlock's tables, created if
	// missing. Default "public".
	Schema string `yaml:"schema"`
}

// TimeoutsConfig bounds how long the server waits. Each is a Go duration
// ("90s", "1m30s"); zero or unset takes the default.
type TimeoutsConfig struct {
	// CheckWait is the longest a check that asks a person long-polls
	// before it answers "still pending" (the agent then polls again).
	// Default 60s.
	CheckWait Duration `yaml:"check_wait"`
	// Shutdown is how long a graceful shutdown waits for requests in
	// flight before closing them. Default 30s.
	Shutdown Duration `yaml:"shutdown"`
	// ReadHeader is how long a client may take to send a request's
	// headers (slow-loris protection). Default 10s.
	ReadHeader Duration `yaml:"read_header"`
	// Sweep is how often requests whose deadline passed are expired.
	// Default 30s.
	Sweep Duration `yaml:"sweep"`
}

// CheckpointConfig sets how the audit log's head is signed.
type CheckpointConfig struct {
	// KeyFile is the Ed25519 key that signs checkpoints, one line in the
	// C2SP signed-note signer key format. Created (mode 0600) at first
	// start when missing, never overwritten; the server refuses to start
	// if other users may read or write it, or if it is malformed. Default
	// <data_dir>/checkpoint.key.
	KeyFile string `yaml:"key_file"`
	// Interval is how often the log's head is signed, when it moved since
	// the last checkpoint; a last one is signed at shutdown. Default 5m.
	Interval Duration `yaml:"interval"`
}

// keyFile returns the checkpoint key's file: key_file, else the default
// in the data directory.
func (c Config) keyFile() string {
	return cmp.Or(c.Checkpoint.KeyFile, filepath.Join(c.DataDir, defaultKeyFile))
}

// TokenConfig is one bearer token provisioned by the configuration. Its
// secret is read from secret_file (preferred) or given in secret (meant
// for ${ENV}: `secret: ${AIRLOCK_ADMIN_TOKEN}`); exactly one of the two.
// A secret starts with "airlock_" and is at least 40 characters long.
// Airlock keeps only its hash.
type TokenConfig struct {
	// Role is what the token may do: agent (checks actions as one agent),
	// reviewer (reads and resolves requests as a person) or admin.
	Role airlock.Role `yaml:"role"`
	// Name is the person a reviewer or admin token authenticates (their
	// identity as a reviewer), or a label for an agent token.
	Name string `yaml:"name"`
	// Agent is the one agent an agent token acts as.
	Agent string `yaml:"agent"`
	// SecretFile is a file holding the secret; surrounding whitespace
	// (a trailing newline) is trimmed.
	SecretFile string `yaml:"secret_file"`
	// Secret is the secret itself. Prefer secret_file, or write
	// ${ENV_VAR} here: a secret in a config file is a secret in backups,
	// diffs and screenshots.
	Secret Secret `yaml:"secret"`
}

// LogConfig sets the log output.
type LogConfig struct {
	// Level is the least severe level logged: debug, info, warn or error.
	// Default info.
	Level string `yaml:"level"`
	// Format is text (logfmt-like key=value) or json. Default text.
	Format string `yaml:"format"`
}

// Defaults.
const (
	defaultListen     = "127.0.0.1:8080"
	defaultDataDir    = "./airlock-data"
	defaultDBFile     = "airlock.db"
	defaultPolicyPoll = Duration(policywatch.DefaultInterval)
	defaultCheckWait  = Duration(60 * time.Second)
	defaultShutdown   = Duration(30 * time.Second)
	defaultReadHeader = Duration(10 * time.Second)
	defaultSweep      = Duration(30 * time.Second)
	defaultGrantTTL   = Duration(time.Hour)
	defaultKeyFile    = "checkpoint.key"
	defaultCheckpoint = Duration(checkpoint.DefaultCheckpointInterval)

	// envDataDir, when set, is the data directory unless the file says
	// otherwise.
	envDataDir = "AIRLOCK_DATA"

	maxConfigBytes = 1 << 20
	minSecretLen   = 40
)

// Valid values of the enumerated fields.
var (
	storeDrivers = []string{"sqlite", "postgres"}
	logLevels    = []string{"debug", "info", "warn", "error"}
	logFormats   = []string{"text", "json"}
)

// DefaultConfig returns the configuration used without a file: every
// default applied (AIRLOCK_DATA read from the environment).
func DefaultConfig() Config {
	var c Config
	c.setDefaults()
	return c
}

// overrideDataDir applies a --data flag: the data directory, and the
// database in it unless the configuration put the database elsewhere.
func (c *Config) overrideDataDir(dir string) {
	if dir == "" {
		return
	}
	if c.Store.Path == filepath.Join(c.DataDir, defaultDBFile) {
		c.Store.Path = filepath.Join(dir, defaultDBFile)
	}
	c.DataDir = dir
}

// setDefaults fills every unset field with its default.
func (c *Config) setDefaults() {
	c.Listen = cmp.Or(c.Listen, defaultListen)
	c.DataDir = cmp.Or(c.DataDir, os.Getenv(envDataDir), defaultDataDir)
	c.Store.Driver = cmp.Or(c.Store.Driver, storeDrivers[0])
	if c.Store.Path == "" && c.Store.Driver == "sqlite" {
		c.Store.Path = filepath.Join(c.DataDir, defaultDBFile)
	}
	c.Checkpoint.Interval = cmp.Or(c.Checkpoint.Interval, defaultCheckpoint)
	c.PolicyPoll = cmp.Or(c.PolicyPoll, defaultPolicyPoll)
	c.Timeouts.CheckWait = cmp.Or(c.Timeouts.CheckWait, defaultCheckWait)
	c.Timeouts.Shutdown = cmp.Or(c.Timeouts.Shutdown, defaultShutdown)
	c.Timeouts.ReadHeader = cmp.Or(c.Timeouts.ReadHeader, defaultReadHeader)
	c.Timeouts.Sweep = cmp.Or(c.Timeouts.Sweep, defaultSweep)
	c.GrantTTL = cmp.Or(c.GrantTTL, defaultGrantTTL)
	c.Proposals.MinApprovals = cmp.Or(c.Proposals.MinApprovals, 5)
	c.Proposals.MinReviewers = cmp.Or(c.Proposals.MinReviewers, 2)
	c.Proposals.MinMedianWait = cmp.Or(c.Proposals.MinMedianWait, Duration(10*time.Second))
	c.Proposals.Window = cmp.Or(c.Proposals.Window, Duration(30*24*time.Hour))
	if c.Proposals.DigestEvery == nil {
		c.Proposals.DigestEvery = new(Duration(7 * 24 * time.Hour))
	}
	if c.Asks.Limit == nil {
		c.Asks.Limit = new(30)
	}
	c.Asks.Per = cmp.Or(c.Asks.Per, Duration(10*time.Minute))
	c.Log.Level = cmp.Or(c.Log.Level, "info")
	c.Log.Format = cmp.Or(c.Log.Format, "text")
	c.Notifications.setDefaults()
}

// LoadConfig reads the configuration file at path, expands ${ENV}
// references, decodes it strictly, resolves relative paths against the
// file's directory, reads token secret files, applies the defaults and
// validates the result. path "" returns DefaultConfig (validated). Every
// problem is reported, each as "file:line:col: message"; no message ever
// holds a secret.
func LoadConfig(path string) (Config, error) {
	if path == "" {
		c := DefaultConfig()
		return c, c.Validate()
	}
	c := Config{}
	s, err := decodeConfigFile(path, &c)
	if err != nil {
		return Config{}, err
	}
	c.src = s
	c.resolvePaths(filepath.Dir(path))
	if err := c.readSecretFiles(); err != nil {
		return Config{}, err
	}
	c.setDefaults()
	return c, c.Validate()
}

// decodeConfigFile reads the YAML file at path (one document), expands its
// ${ENV} references and decodes it strictly into v; every problem is
// located as file:line:col.
func decodeConfigFile(path string, v any) (*configSource, error) {
	src, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	s := &configSource{file: path}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, s.yamlError(err)
	}
	for _, doc := range f.Docs {
		switch {
		case doc.Body == nil:
		case s.root != nil:
			return nil, s.errorf(doc.Body, "a config file holds one YAML document")
		default:
			s.root = doc.Body
		}
	}
	if s.root != nil {
		if err := errors.Join(expandEnv(s, s.root)...); err != nil {
			return nil, err
		}
		if err := yaml.NodeToValue(s.root, v, yaml.Strict()); err != nil {
			return nil, s.yamlError(suggestField(err, s.root, reflect.TypeOf(v)))
		}
	}
	return s, nil
}

func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(src) > maxConfigBytes {
		return nil, fmt.Errorf("%s: a config file is at most %d bytes", path, maxConfigBytes)
	}
	return src, nil
}

// resolvePaths makes the file's relative paths relative to its directory.
func (c *Config) resolvePaths(dir string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	abs(&c.DataDir)
	abs(&c.Store.Path)
	abs(&c.Store.DSNFile)
	abs(&c.Checkpoint.KeyFile)
	abs(&c.SSO.ClientSecretFile)
	for i := range c.Policies {
		abs(&c.Policies[i])
	}
	for i := range c.Tokens {
		abs(&c.Tokens[i].SecretFile)
	}
	for i := range c.Notifications.Channels {
		for _, s := range c.Notifications.Channels[i].secrets() {
			abs(s.file)
		}
	}
}

// readSecretFiles sets each token's secret from its secret_file.
func (c *Config) readSecretFiles() error {
	var errs []error
	for i := range c.Tokens {
		t := &c.Tokens[i]
		if t.SecretFile == "" {
			continue
		}
		where := fmt.Sprintf("tokens[%d].secret_file", i)
		if t.Secret != "" {
			errs = append(errs, c.src.errorAt(where, "give secret_file or secret, not both", "tokens", i, "secret_file"))
			continue
		}
		b, err := os.ReadFile(t.SecretFile)
		if err != nil {
			// The *PathError names the file and the cause, never the contents.
			errs = append(errs, c.src.errorAt(where, fmt.Sprintf("cannot read the secret: %v", err), "tokens", i, "secret_file"))
			continue
		}
		t.Secret = Secret(strings.TrimSpace(string(b)))
	}
	if f := c.Store.DSNFile; f != "" {
		switch b, err := os.ReadFile(f); {
		case c.Store.DSN != "":
			errs = append(errs, c.src.errorAt("store.dsn_file", "give dsn_file or dsn, not both", "store", "dsn_file"))
		case err != nil:
			errs = append(errs, c.src.errorAt("store.dsn_file", fmt.Sprintf("cannot read the DSN: %v", err), "store", "dsn_file"))
		default:
			c.Store.DSN = Secret(strings.TrimSpace(string(b)))
		}
	}
	if f := c.SSO.ClientSecretFile; f != "" {
		switch b, err := os.ReadFile(f); {
		case c.SSO.ClientSecret != "":
			errs = append(errs, c.src.errorAt("sso.client_secret_file", "give client_secret_file or client_secret, not both", "sso", "client_secret_file"))
		case err != nil:
			errs = append(errs, c.src.errorAt("sso.client_secret_file", fmt.Sprintf("cannot read the secret: %v", err), "sso", "client_secret_file"))
		default:
			c.SSO.ClientSecret = Secret(strings.TrimSpace(string(b)))
		}
	}
	errs = append(errs, c.readChannelSecrets())
	return errors.Join(errs...)
}

// Validate reports every problem of a configuration whose defaults are
// applied, each located in the file it came from (when it came from one).
func (c Config) Validate() error {
	var errs []error
	bad := func(where, msg string, path ...any) { errs = append(errs, c.src.errorAt(where, msg, path...)) }

	switch sso := &c.SSO; {
	case sso.Issuer == "" && (sso.ClientID != "" || sso.ClientSecret != "" || len(sso.AdminGroups)+len(sso.ReviewerGroups) > 0):
		bad("sso.issuer", "single sign-on needs the provider's issuer URL", "sso")
	case sso.Issuer != "" && sso.ClientID == "":
		bad("sso.client_id", "single sign-on needs the client ID the provider gave Airlock", "sso")
	case sso.Issuer != "" && c.Notifications.InboxURL == "":
		bad("sso", "single sign-on needs notifications.inbox_url: the provider sends people back to <inbox_url>/inbox/sso/callback", "sso")
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", fmt.Sprintf("%q is not a host:port address (like 127.0.0.1:8080 or :8080)", c.Listen), "listen")
	}
	if c.DataDir == "" {
		bad("data_dir", "must not be empty", "data_dir")
	}
	switch st := &c.Store; {
	case !slices.Contains(storeDrivers, st.Driver):
		bad("store.driver", fmt.Sprintf("unknown driver %q (valid: %s)", st.Driver, strings.Join(storeDrivers, ", ")), "store", "driver")
	case st.Driver == "sqlite" && st.Path == "":
		bad("store.path", "must not be empty", "store", "path")
	case st.Driver == "sqlite" && (st.DSN != "" || st.DSNFile != "" || st.Schema != ""):
		bad("store", "dsn, dsn_file and schema are settings of the postgres driver", "store")
	case st.Driver == "postgres" && st.DSN == "":
		bad("store", "the postgres driver needs dsn (or dsn_file): the database's connection string", "store")
	case st.Driver == "postgres" && st.Path != "":
		bad("store.path", "path is a setting of the sqlite driver; the postgres driver takes dsn", "store", "path")
	}
	seen := map[string]int{}
	for i, p := range c.Policies {
		where := fmt.Sprintf("policies[%d]", i)
		if p == "" {
			bad(where, "empty policy path", "policies", i)
		} else if j, dup := seen[p]; dup {
			bad(where, fmt.Sprintf("%s is already policies[%d]", p, j), "policies", i)
		} else {
			seen[p] = i
		}
	}
	for _, d := range []struct {
		where string
		path  []any
		v     Duration
	}{
		{"policy_poll", []any{"policy_poll"}, c.PolicyPoll},
		{"timeouts.check_wait", []any{"timeouts", "check_wait"}, c.Timeouts.CheckWait},
		{"timeouts.shutdown", []any{"timeouts", "shutdown"}, c.Timeouts.Shutdown},
		{"timeouts.read_header", []any{"timeouts", "read_header"}, c.Timeouts.ReadHeader},
		{"timeouts.sweep", []any{"timeouts", "sweep"}, c.Timeouts.Sweep},
		{"grant_ttl", []any{"grant_ttl"}, c.GrantTTL},
		{"checkpoint.interval", []any{"checkpoint", "interval"}, c.Checkpoint.Interval},
		{"proposals.min_median_wait", []any{"proposals", "min_median_wait"}, c.Proposals.MinMedianWait},
		{"proposals.window", []any{"proposals", "window"}, c.Proposals.Window},
	} {
		if d.v <= 0 {
			bad(d.where, fmt.Sprintf("must be positive, not %s", d.v), d.path...)
		}
	}
	if c.Proposals.MinApprovals < 1 {
		bad("proposals.min_approvals", fmt.Sprintf("must be at least 1, not %d", c.Proposals.MinApprovals), "proposals", "min_approvals")
	}
	if d := *c.Proposals.DigestEvery; d != 0 && d < Duration(time.Hour) {
		bad("proposals.digest_every", fmt.Sprintf("must be 0 (never) or at least 1h, not %s", d), "proposals", "digest_every")
	}
	if *c.Asks.Limit < 0 {
		bad("asks.limit", fmt.Sprintf("must be 0 (no limit) or more, not %d", *c.Asks.Limit), "asks", "limit")
	}
	if p := time.Duration(c.Asks.Per); p < time.Minute || p > airlock.MaxBudgetWindow {
		bad("asks.per", fmt.Sprintf("must be from 1m to 24h, not %s", c.Asks.Per), "asks", "per")
	}
	if c.Proposals.MinReviewers < 1 {
		bad("proposals.min_reviewers", fmt.Sprintf("must be at least 1, not %d", c.Proposals.MinReviewers), "proposals", "min_reviewers")
	}
	secrets := map[Secret]int{}
	for i, t := range c.Tokens {
		where := fmt.Sprintf("tokens[%d]", i)
		if _, err := airlock.ParseRole(string(t.Role)); err != nil {
			bad(where+".role", airlock.ErrorMessage(err), "tokens", i, "role")
		} else {
			tok := airlock.Token{Role: t.Role, Name: t.Name, Agent: t.Agent}
			if err := tok.Validate(); err != nil {
				bad(where, airlock.ErrorMessage(err), "tokens", i)
			}
		}
		switch {
		case t.Secret == "" && t.SecretFile == "":
			bad(where, "needs secret_file (a file holding the secret) or secret", "tokens", i)
		case t.Secret == "":
			bad(where+".secret_file", "the file is empty", "tokens", i, "secret_file")
		default:
			if msg := t.Secret.problem(); msg != "" {
				bad(where, msg, "tokens", i)
			} else if j, dup := secrets[t.Secret]; dup {
				bad(where, fmt.Sprintf("has the same secret as tokens[%d]; every token needs its own", j), "tokens", i)
			} else {
				secrets[t.Secret] = i
			}
		}
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		bad("log.level", fmt.Sprintf("unknown level %q (valid: %s)", c.Log.Level, strings.Join(logLevels, ", ")), "log", "level")
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		bad("log.format", fmt.Sprintf("unknown format %q (valid: %s)", c.Log.Format, strings.Join(logFormats, ", ")), "log", "format")
	}
	errs = append(errs, c.Notifications.validate(c.src)...)
	return errors.Join(errs...)
}

// File returns the configuration file the config was loaded from, "" for
// the defaults.
func (c Config) File() string {
	if c.src == nil {
		return ""
	}
	return c.src.file
}

// Logger returns a logger writing to w as the config says. The config
// must be valid.
func (c LogConfig) Logger(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // validated: debug, info, warn or error
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Secret is a token secret. It prints as "[redacted]" whatever the verb
// (fmt, slog), so that logging a config, or an error about one, cannot
// leak it; Reveal returns the value.
type Secret string

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer without revealing the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString implements fmt.GoStringer without revealing the secret.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// LogValue implements slog.LogValuer without revealing the secret.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// problem says what is wrong with the secret's shape, without quoting it.
func (s Secret) problem() string {
	if !strings.HasPrefix(string(s), airlock.TokenPrefix) || len(s) < minSecretLen {
		return fmt.Sprintf("the secret (%d characters, not shown) must start with %q and be at least %d characters long; "+
			"use %s followed by 43 or more random base64url characters", len(s), airlock.TokenPrefix, minSecretLen, airlock.TokenPrefix)
	}
	return ""
}

// Duration is a time.Duration written as a Go duration string ("90s",
// "1m30s", "1h").
type Duration time.Duration

// String returns the duration as Go writes it ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML reads a duration string, reporting a bad one at its
// position. It takes the syntax node rather than bytes so that it sees the
// value after ${ENV} expansion.
func (d *Duration) UnmarshalYAML(n ast.Node) error {
	n = unwrap(n)
	switch v := n.(type) {
	case *ast.NullNode:
		*d = 0
		return nil
	case *ast.StringNode:
		t, err := time.ParseDuration(v.Value)
		if err != nil {
			return nodeError(n, fmt.Sprintf("%q is not a duration: write a number with a unit, like \"90s\", \"5m\" or \"1h30m\"", v.Value))
		}
		*d = Duration(t)
		return nil
	case *ast.IntegerNode, *ast.FloatNode:
		return nodeError(n, fmt.Sprintf("%s has no unit: write a duration like \"%ss\" or \"5m\"", v, v))
	}
	return nodeError(n, fmt.Sprintf("a duration is a string like \"90s\", not a %s", n.Type().YAMLName()))
}

// unwrap returns the value under any anchors and tags on n.
func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

// configSource is the file a config was read from and its syntax tree,
// for locating problems found after decoding.
type configSource struct {
	file string
	root ast.Node // nil for an empty file
}

// posError is a problem at a position of the file, raised while decoding;
// configSource.yamlError adds the file name.
type posError struct {
	line, col int
	msg       string
}

func (e *posError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

func nodeError(n ast.Node, msg string) error {
	// A block mapping's token is that of its first value, and a pair's is
	// its colon: point at the first key instead, where the entry begins.
	switch v := n.(type) {
	case *ast.MappingNode:
		if len(v.Values) > 0 && !v.IsFlowStyle {
			n = v.Values[0]
		}
	}
	if v, ok := n.(*ast.MappingValueNode); ok && v.Key != nil {
		n = v.Key
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return &posError{msg: msg}
	}
	return &posError{line: tk.Position.Line, col: tk.Position.Column, msg: msg}
}

// yamlError locates an error from the YAML parser or decoder. It uses the
// error's message and position only, never goccy's source excerpt, which
// could quote a secret.
func (s *configSource) yamlError(err error) error {
	var pe *posError
	if errors.As(err, &pe) {
		return s.located(pe.line, pe.col, pe.msg)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && te.Token != nil && te.Token.Position != nil {
		return s.located(te.Token.Position.Line, te.Token.Position.Column,
			fmt.Sprintf("wrong type: expected %s, found %s", yamlTypeName(te.DstType), yamlTypeName(te.SrcType)))
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return s.located(tk.Position.Line, tk.Position.Column, ye.GetMessage())
		}
		return s.located(0, 0, ye.GetMessage())
	}
	return s.located(0, 0, err.Error())
}

// yamlTypeName names a Go type decoded from YAML as a person writing YAML
// knows it.
func yamlTypeName(t reflect.Type) string {
	if t == nil {
		return "null"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a sequence"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

func (s *configSource) errorf(n ast.Node, format string, args ...any) error {
	return s.yamlError(nodeError(n, fmt.Sprintf(format, args...)))
}

func (s *configSource) located(line, col int, msg string) error {
	if line == 0 {
		return fmt.Errorf("%s: %s", s.file, msg)
	}
	return fmt.Errorf("%s:%d:%d: %s", s.file, line, col, msg)
}

// errorAt reports a problem with the field at path (keys and sequence
// indexes), located at the deepest part of the path the file has: a
// defaulted field has no position of its own, but its parent does. A
// config not read from a file names only the field.
func (s *configSource) errorAt(where, msg string, path ...any) error {
	if s == nil {
		return fmt.Errorf("%s: %s", where, msg)
	}
	n := s.root
	at := n
	for _, p := range path {
		n = child(n, p)
		if n == nil {
			break
		}
		at = n
	}
	if at == nil {
		return fmt.Errorf("%s: %s: %s", s.file, where, msg)
	}
	return s.yamlError(nodeError(at, where+": "+msg))
}

// child returns the value under a mapping key (string) or at a sequence
// index (int), or nil.
func child(n ast.Node, p any) ast.Node {
	switch v := unwrap(n).(type) {
	case *ast.MappingNode:
		if key, ok := p.(string); ok {
			for _, kv := range v.Values {
				if kv.Key != nil && kv.Key.GetToken() != nil && kv.Key.GetToken().Value == key {
					return kv.Value
				}
			}
		}
	case *ast.MappingValueNode: // a mapping of one pair
		if key, ok := p.(string); ok && v.Key != nil && v.Key.GetToken() != nil && v.Key.GetToken().Value == key {
			return v.Value
		}
	case *ast.SequenceNode:
		if i, ok := p.(int); ok && i >= 0 && i < len(v.Values) {
			return v.Values[i]
		}
	}
	return nil
}

// expandEnv replaces ${NAME} references in every scalar value under n
// (not in keys), in place, and returns every unset variable as an error.
func expandEnv(s *configSource, n ast.Node) []error {
	var errs []error
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		switch v := n.(type) {
		case *ast.DocumentNode:
			walk(v.Body)
		case *ast.MappingNode:
			for _, kv := range v.Values {
				walk(kv)
			}
		case *ast.MappingValueNode:
			walk(v.Value)
		case *ast.SequenceNode:
			for _, e := range v.Values {
				walk(e)
			}
		case *ast.AnchorNode:
			walk(v.Value)
		case *ast.TagNode:
			walk(v.Value)
		case *ast.LiteralNode:
			walk(v.Value)
		case *ast.StringNode:
			out, err := expand(v.Value, os.LookupEnv)
			if err != nil {
				errs = append(errs, s.errorf(v, "%s", err))
				return
			}
			v.Value = out
		}
	}
	walk(n)
	return errs
}

// expand replaces ${NAME} and ${NAME:-default} in s with lookup's values
// and $$ with $. A $ followed by anything else is kept.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			s = s[i+2:]
			continue
		case '{':
		default:
			b.WriteByte('$')
			s = s[i+1:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q has no closing brace (write $$ for a literal $)", s[i:])
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("${%s}: %q is not an environment variable name (letters, digits, _; write $$ for a literal $)", ref, name)
		}
		val, ok := lookup(name)
		switch {
		case hasDef && val == "":
			val = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} for a default)", name, name)
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// suggestField adds to a strict decoder's "unknown field" error the fields
// valid where it stands, the closest first, as policy errors do; any other
// error is returned as it is.
func suggestField(err error, root ast.Node, t reflect.Type) error {
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return err
	}
	msg, tk := ye.GetMessage(), ye.GetToken()
	key, ok := strings.CutPrefix(msg, "unknown field ")
	if !ok || tk == nil || tk.Position == nil {
		return err
	}
	if k, err := strconv.Unquote(key); err == nil {
		key = k
	}
	names, ok := fieldsAt(root, t, tk.Position.Line, tk.Position.Column)
	if !ok {
		return err
	}
	return &posError{line: tk.Position.Line, col: tk.Position.Column, msg: msg + airlock.DidYouMean(key, names)}
}

// fieldsAt returns the YAML names of the fields of the struct that the
// mapping holding the key at line:col decodes into, walking the syntax
// tree and the Go type t together.
func fieldsAt(n ast.Node, t reflect.Type, line, col int) ([]string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var pairs []*ast.MappingValueNode
	switch v := unwrap(n).(type) {
	case *ast.MappingNode:
		pairs = v.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{v}
	case *ast.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil, false
		}
		for _, e := range v.Values {
			if names, ok := fieldsAt(e, t.Elem(), line, col); ok {
				return names, true
			}
		}
		return nil, false
	default:
		return nil, false
	}
	for _, kv := range pairs {
		key := kv.Key.GetToken()
		var vt reflect.Type
		switch t.Kind() {
		case reflect.Struct:
			if key != nil && key.Position != nil && key.Position.Line == line && key.Position.Column == col {
				return yamlFields(t), true
			}
			vt = yamlField(t, key.Value)
		case reflect.Map:
			vt = t.Elem()
		}
		if vt != nil {
			if names, ok := fieldsAt(kv.Value, vt, line, col); ok {
				return names, true
			}
		}
	}
	return nil, false
}

// yamlFields returns the YAML names of struct type t's fields, those of
// inlined structs included.
func yamlFields(t reflect.Type) []string {
	var names []string
	for f := range yamlStructFields(t) {
		names = append(names, f.name)
	}
	return names
}

// yamlField returns the type of struct type t's field named key in YAML,
// nil when there is none.
func yamlField(t reflect.Type, key string) reflect.Type {
	for f := range yamlStructFields(t) {
		if f.name == key {
			return f.typ
		}
	}
	return nil
}

type namedField struct {
	name string
	typ  reflect.Type
}

// yamlStructFields yields the fields of struct type t as the YAML decoder
// names them: by their yaml tag, else their lowercased Go name.
func yamlStructFields(t reflect.Type) func(func(namedField) bool) {
	return func(yield func(namedField) bool) {
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			if strings.Contains(opts, "inline") || (f.Anonymous && name == "") {
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					for g := range yamlStructFields(ft) {
						if !yield(g) {
							return
						}
					}
					continue
				}
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if !yield(namedField{name, f.Type}) {
				return
			}
		}
	}
}
