package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Well-formed token secrets for tests.
const (
	testSecret1 = "airlock_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	testSecret2 = "airlock_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

// writeConfig writes src as config.yaml in a new temporary directory and
// returns its path.
func writeConfig(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoadConfig(t *testing.T, path string) Config {
	t.Helper()
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return c
}

func TestConfigDefaults(t *testing.T) {
	t.Setenv(envDataDir, "")
	want := Config{
		Listen:     "127.0.0.1:8080",
		DataDir:    "./airlock-data",
		Store:      StoreConfig{Driver: "sqlite", Path: filepath.Join("airlock-data", "airlock.db")},
		PolicyPoll: Duration(time.Second),
		Timeouts: TimeoutsConfig{
			CheckWait:  Duration(60 * time.Second),
			Shutdown:   Duration(30 * time.Second),
			ReadHeader: Duration(10 * time.Second),
			Sweep:      Duration(30 * time.Second),
		},
		GrantTTL: Duration(time.Hour),
		Proposals: ProposalsConfig{MinApprovals: 5, MinReviewers: 2, MinMedianWait: Duration(10 * time.Second), Window: Duration(720 * time.Hour),
			DigestEvery: new(Duration(168 * time.Hour))},
		Asks:       AsksConfig{Limit: new(30), Per: Duration(10 * time.Minute)},
		Checkpoint: CheckpointConfig{Interval: Duration(5 * time.Minute)},
		Log:        LogConfig{Level: "info", Format: "text"},
		Notifications: NotificationsConfig{RemindBefore: new(Duration(10 * time.Minute)), Attempts: 8,
			FirstRetry: Duration(5 * time.Second), MaxRetry: Duration(30 * time.Minute), Timeout: Duration(20 * time.Second)},
	}
	for _, tc := range []struct {
		name string
		path string
	}{
		{"no file", ""},
		{"an empty file", writeConfig(t, "")},
		{"a file of comments", writeConfig(t, "# nothing yet\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustLoadConfig(t, tc.path)
			got.src = nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
	if got := DefaultConfig(); got.File() != "" || got.Listen != want.Listen {
		t.Errorf("DefaultConfig: got %+v", got)
	}
}

func TestConfigDataDir(t *testing.T) {
	t.Setenv(envDataDir, "/var/lib/airlock")
	if got, want := DefaultConfig().DataDir, "/var/lib/airlock"; got != want {
		t.Errorf("from the environment: got %q, want %q", got, want)
	}
	if got, want := DefaultConfig().Store.Path, "/var/lib/airlock/airlock.db"; got != want {
		t.Errorf("store path from the environment: got %q, want %q", got, want)
	}
	if got, want := DefaultConfig().keyFile(), "/var/lib/airlock/checkpoint.key"; got != want {
		t.Errorf("checkpoint key from the environment: got %q, want %q", got, want)
	}
	path := writeConfig(t, "data_dir: state\n")
	c := mustLoadConfig(t, path)
	if got, want := c.DataDir, filepath.Join(filepath.Dir(path), "state"); got != want {
		t.Errorf("the file overrides the environment: got %q, want %q", got, want)
	}
	if got, want := c.Store.Path, filepath.Join(filepath.Dir(path), "state", "airlock.db"); got != want {
		t.Errorf("store path: got %q, want %q", got, want)
	}
	if got, want := c.keyFile(), filepath.Join(filepath.Dir(path), "state", "checkpoint.key"); got != want {
		t.Errorf("checkpoint key: got %q, want %q", got, want)
	}
}

func TestConfigFull(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "reviewer.secret"), []byte(testSecret2+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_ADMIN_SECRET", testSecret1)
	src := `# the whole thing
listen: ":9443"
data_dir: /srv/airlock
store:
  driver: sqlite
  path: db/airlock.db
policies:
  - /etc/airlock/org.yaml
  - project.yaml
policy_poll: 2s
timeouts:
  check_wait: 90s
  shutdown: 1m
  read_header: 5s
  sweep: 10s
grant_ttl: 2h
asks: {limit: 12, per: 5m}
checkpoint:
  key_file: keys/checkpoint.key
  interval: 1m
tokens:
  - role: admin
    name: ops
    secret: ${TEST_ADMIN_SECRET}
  - role: reviewer
    name: bob
    secret_file: reviewer.secret
  - {role: agent, name: coder, agent: coder-1, secret: "${TEST_AGENT_SECRET:-airlock_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC}"}
log:
  level: debug
  format: json
notifications:
  inbox_url: https://airlock.example.com
  remind_before: 0s
  attempts: 3
  first_retry: 1s
  max_retry: 1m
  timeout: 5s
  channels:
    - name: ops
      type: webhook
      url: https://hooks.example/airlock
      secret_file: ops.whsec
      events: [approval.requested, approval.resolved]
`
	if err := os.WriteFile(filepath.Join(dir, "ops.whsec"), []byte(testWhsec+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "airlock.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := mustLoadConfig(t, path)
	want := Config{
		Listen:     ":9443",
		DataDir:    "/srv/airlock",
		Store:      StoreConfig{Driver: "sqlite", Path: filepath.Join(dir, "db/airlock.db")},
		Policies:   []string{"/etc/airlock/org.yaml", filepath.Join(dir, "project.yaml")},
		PolicyPoll: Duration(2 * time.Second),
		Timeouts: TimeoutsConfig{
			CheckWait:  Duration(90 * time.Second),
			Shutdown:   Duration(time.Minute),
			ReadHeader: Duration(5 * time.Second),
			Sweep:      Duration(10 * time.Second),
		},
		GrantTTL: Duration(2 * time.Hour),
		Proposals: ProposalsConfig{MinApprovals: 5, MinReviewers: 2, MinMedianWait: Duration(10 * time.Second), Window: Duration(720 * time.Hour),
			DigestEvery: new(Duration(168 * time.Hour))},
		Asks:       AsksConfig{Limit: new(12), Per: Duration(5 * time.Minute)},
		Checkpoint: CheckpointConfig{KeyFile: filepath.Join(dir, "keys/checkpoint.key"), Interval: Duration(time.Minute)},
		Tokens: []TokenConfig{
			{Role: "admin", Name: "ops", Secret: testSecret1},
			{Role: "reviewer", Name: "bob", SecretFile: filepath.Join(dir, "reviewer.secret"), Secret: testSecret2},
			{Role: "agent", Name: "coder", Agent: "coder-1", Secret: "airlock_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"},
		},
		Log: LogConfig{Level: "debug", Format: "json"},
		Notifications: NotificationsConfig{
			InboxURL: "https://airlock.example.com", RemindBefore: new(Duration), Attempts: 3,
			FirstRetry: Duration(time.Second), MaxRetry: Duration(time.Minute), Timeout: Duration(5 * time.Second),
			Channels: []ChannelConfig{{Name: "ops", Type: "webhook", URL: "https://hooks.example/airlock",
				SecretFile: filepath.Join(dir, "ops.whsec"), Secret: testWhsec,
				Events: []string{"approval.requested", "approval.resolved"}}},
		},
	}
	if got.File() != path {
		t.Errorf("File: got %q, want %q", got.File(), path)
	}
	got.src = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestConfigErrors checks that every kind of mistake is reported at its
// file:line:col, with what is wrong.
// testWhsec is a Standard Webhooks secret for config tests.
const testWhsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestConfigErrors(t *testing.T) {
	t.Setenv("TEST_UNSET_VAR", "") // restored after the test
	os.Unsetenv("TEST_UNSET_VAR")
	for _, tc := range []struct {
		name string
		src  string
		want []string // each line of the error, after "<file>:"
	}{
		{"unknown field", "listen: :8080\nlisten_addr: :9090\n", []string{`2:1: unknown field "listen_addr" (valid: asks, checkpoint, data_dir, grant_ttl, listen, `}},
		{"misspelt field", "lisen: :8080\n", []string{`1:1: unknown field "lisen" (did you mean "listen"? valid: asks, checkpoint, `}},
		{"unknown nested field", "store:\n  driver: sqlite\n  dns: x\n", []string{`3:3: unknown field "dns" (did you mean "dsn"? valid: driver, dsn, dsn_file, path, schema)`}},
		{"unknown field in a flow mapping", "store: {driver: sqlite, dns: x}\n", []string{`1:25: unknown field "dns" (did you mean "dsn"?`}},
		{"unknown token field", "tokens:\n  - role: admin\n    secrt: x\n", []string{`3:5: unknown field "secrt" (did you mean "secret"? valid: agent, name, role, secret, secret_file)`}},
		{"unknown channel field", "notifications:\n  channels:\n    - {name: a, type: webhook, ulr: x}\n", []string{`3:32: unknown field "ulr" (did you mean "url"?`}},
		{"unknown field far from any", "timeouts:\n  zzzzzzzz: 1s\n", []string{`2:3: unknown field "zzzzzzzz" (valid: check_wait, read_header, shutdown, sweep)`}},
		{"wrong type", "listen: [a, b]\n", []string{"1:9: wrong type: expected a string, found a sequence"}},
		{"a mapping for a list", "policies: {a: b}\n", []string{"1:11: mapping was used where sequence is expected"}},
		{"a scalar for a mapping", "timeouts: 5s\n", []string{"1:11: string was used where mapping is expected"}},
		{"bad duration", "timeouts:\n  check_wait: ten seconds\n", []string{`2:15: "ten seconds" is not a duration`}},
		{"duration without a unit", "grant_ttl: 90\n", []string{`1:12: 90 has no unit`}},
		{"negative duration", "policy_poll: -1s\n", []string{"1:14: policy_poll: must be positive, not -1s"}},
		{"negative proposal thresholds", "proposals:\n  min_approvals: -1\n  window: -1h\n", []string{"3:11: proposals.window: must be positive, not -1h0m0s",
			"2:18: proposals.min_approvals: must be at least 1, not -1"}},
		{"syntax error", "listen: \"127.0.0.1\n", []string{"1:9: could not find end character of double-quoted text"}},
		{"two documents", "listen: :1\n---\nlisten: :2\n", []string{"3:1: a config file holds one YAML document"}},
		{"bad listen", "listen: localhost\n", []string{`1:9: listen: "localhost" is not a host:port address`}},
		{"bad driver", "store:\n  driver: mysql\n", []string{`2:11: store.driver: unknown driver "mysql" (valid: sqlite, postgres)`}},
		{"postgres without dsn", "store:\n  driver: postgres\n", []string{"2:3: store: the postgres driver needs dsn (or dsn_file)"}},
		{"postgres with a path", "store: {driver: postgres, dsn: postgres://db/airlock, path: a.db}\n", []string{"1:61: store.path: path is a setting of the sqlite driver"}},
		{"sqlite with a dsn", "store: {driver: sqlite, dsn: postgres://db/airlock}\n", []string{"1:8: store: dsn, dsn_file and schema are settings of the postgres driver"}},
		{"bad log", "log: {level: loud, format: xml}\n", []string{
			`1:14: log.level: unknown level "loud" (valid: debug, info, warn, error)`,
			`1:28: log.format: unknown format "xml" (valid: text, json)`,
		}},
		{"duplicate policy", "policies: [a.yaml, a.yaml]\n", []string{"1:20: policies[1]: "}},
		{"bad role", "tokens:\n  - {role: root, name: x, secret: " + testSecret1 + "}\n", []string{`2:12: tokens[0].role: unknown role "root"`}},
		{"agent token without agent", "tokens:\n  - role: agent\n    name: x\n    secret: " + testSecret1 + "\n",
			[]string{"2:5: tokens[0]: an agent token needs the agent it acts as"}},
		{"no secret", "tokens:\n  - role: admin\n    name: ops\n", []string{"2:5: tokens[0]: needs secret_file (a file holding the secret) or secret"}},
		{"same secret twice", "tokens:\n  - {role: admin, name: a, secret: " + testSecret1 + "}\n  - {role: admin, name: b, secret: " + testSecret1 + "}\n",
			[]string{"3:5: tokens[1]: has the same secret as tokens[0]"}},
		{"unset variable", "listen: ${TEST_UNSET_VAR}\n", []string{"1:9: environment variable TEST_UNSET_VAR is not set (write ${TEST_UNSET_VAR:-default} for a default)"}},
		{"two unset variables", "listen: ${TEST_UNSET_VAR}\nlog:\n  level: \"${TEST_UNSET_VAR}\"\n", []string{
			"1:9: environment variable TEST_UNSET_VAR is not set",
			"3:10: environment variable TEST_UNSET_VAR is not set",
		}},
		{"unknown channel type", "notifications:\n  channels:\n    - {name: x, type: sms}\n",
			[]string{`3:23: notifications.channels[0].type: unknown type "sms" (valid: webhook, slack, feishu, email)`}},
		{"setting of another type", "notifications:\n  channels:\n    - name: ops\n      type: webhook\n      url: https://hooks.example/a\n      secret: " + testWhsec + "\n      token: xoxb-1\n",
			[]string{"7:14: notifications.channels[0].token: token is not a setting of a webhook channel (its settings: url, secret, headers)"}},
		{"webhook without secret", "notifications:\n  channels:\n    - {name: ops, type: webhook, url: https://hooks.example/a}\n",
			[]string{"3:7: notifications.channels[0]: secret: a webhook channel needs a signing secret"}},
		{"webhook secret not whsec", "notifications:\n  channels:\n    - {name: ops, type: webhook, url: https://hooks.example/a, secret: hunter2}\n",
			[]string{`3:7: notifications.channels[0]: secret 1: a signing secret starts with "whsec_"`}},
		{"duplicate channel", "notifications:\n  channels:\n    - {name: ops, type: webhook, url: https://a.example, secret: " + testWhsec + "}\n    - {name: ops, type: webhook, url: https://b.example, secret: " + testWhsec + "}\n",
			[]string{`4:14: notifications.channels[1].name: name "ops" is already channels[0]`}},
		{"bad event", "notifications:\n  channels:\n    - {name: ops, type: webhook, url: https://a.example, secret: " + testWhsec + ", events: [approval.approved]}\n",
			[]string{`3:115: notifications.channels[0].events[0]: unknown event "approval.approved" (valid: decision, approval.requested,`}},
		{"webhook users", "notifications:\n  channels:\n    - {name: ops, type: webhook, url: https://a.example, secret: " + testWhsec + ", users: {U1: bob}}\n",
			[]string{`3:113: notifications.channels[0].users: a webhook receives every notice of its events: it maps no users`}},
		{"bad slack user", "notifications:\n  channels:\n    - {name: s, type: slack, token: xoxb-1, signing_secret: x, channel: \"#a\", users: {bob: bob}}\n",
			[]string{`3:92: notifications.channels[0].users.bob: "bob" is not a Slack user ID`}},
		{"feishu without encrypt key", "notifications:\n  channels:\n    - {name: f, type: feishu, app_id: cli_a1, app_secret: s, verification_token: v, chat_id: oc_1}\n",
			[]string{"3:7: notifications.channels[0]: a Feishu channel needs encrypt_key"}},
		{"dm channel mapping nobody", "notifications:\n  channels:\n    - {name: s, type: slack, token: xoxb-1, signing_secret: x}\n",
			[]string{"3:7: notifications.channels[0]: a slack channel without a room writes to the people it maps, and users maps nobody"}},
		{"email without sender", "notifications:\n  channels:\n    - {name: mail, type: email, host: smtp.example.com, users: {bob@example.com: bob}}\n",
			[]string{"3:7: notifications.channels[0]: from: an email channel needs a sender address"}},
		{"email in the clear to another host", "notifications:\n  channels:\n    - {name: mail, type: email, host: smtp.example.com, from: a@example.com, tls: none, users: {bob@example.com: bob}}\n",
			[]string{`3:7: notifications.channels[0]: tls: "none" sends mail (and any password) in the clear`}},
		{"bad inbox url", "notifications:\n  inbox_url: airlock.example.com\n",
			[]string{`2:14: notifications.inbox_url: "airlock.example.com" is not an absolute http(s) URL`}},
		{"no attempts", "notifications:\n  attempts: -1\n", []string{"2:13: notifications.attempts: must be at least 1, not -1"}},
		{"bad variable name", "listen: ${1X}\n", []string{`1:9: ${1X}: "1X" is not an environment variable name`}},
		{"unclosed reference", "listen: ${X\n", []string{`1:9: "${X" has no closing brace`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.src)
			_, err := LoadConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, path+":"+w)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(want) {
				t.Fatalf("got %d problem(s), want %d:\n%v", len(got), len(want), err)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], want[i]) {
					t.Errorf("problem %d:\ngot  %s\nwant %s…", i, got[i], want[i])
				}
			}
		})
	}
}

func TestConfigEnv(t *testing.T) {
	t.Setenv("TEST_HOST", "10.0.0.1")
	t.Setenv("TEST_EMPTY", "")
	t.Setenv("TEST_YAML", "x\nlog: {level: debug}\n- [")
	t.Setenv("TEST_NOT_SET_AT_ALL", "") // restored after the test
	os.Unsetenv("TEST_NOT_SET_AT_ALL")
	for _, tc := range []struct {
		name, value, want string
	}{
		{"set", "${TEST_HOST}:8080", "10.0.0.1:8080"},
		{"quoted", `"${TEST_HOST}:8080"`, "10.0.0.1:8080"},
		{"default unused", "${TEST_HOST:-127.0.0.1}:8080", "10.0.0.1:8080"},
		{"default for unset", "${TEST_NOT_SET_AT_ALL:-127.0.0.1}:8080", "127.0.0.1:8080"},
		{"default for empty", "${TEST_EMPTY:-127.0.0.1}:8080", "127.0.0.1:8080"},
		{"empty default", "${TEST_NOT_SET_AT_ALL:-}:8080", ":8080"},
		{"dollar escape", "$${TEST_HOST}:80", "${TEST_HOST}:80"},
		{"lone dollar", "a$b:80", "a$b:80"},
		{"trailing dollar", "a:80$", "a:80$"},
		{"no injection", "'${TEST_YAML}:1'", "x\nlog: {level: debug}\n- [:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// store.path accepts any string, so every expansion shows as
			// it is (made relative to the config's directory).
			path := writeConfig(t, "store:\n  path: "+tc.value+"\n")
			c := mustLoadConfig(t, path)
			if got, want := c.Store.Path, filepath.Join(filepath.Dir(path), tc.want); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if got, want := c.Log.Level, "info"; got != want {
				t.Errorf("log level: got %q, want %q (expansion changed the structure)", got, want)
			}
		})
	}
}

func TestConfigEnvNotInKeysOrComments(t *testing.T) {
	t.Setenv("TEST_NOT_SET_AT_ALL", "") // restored after the test
	os.Unsetenv("TEST_NOT_SET_AT_ALL")
	path := writeConfig(t, "# ${TEST_NOT_SET_AT_ALL}\nlisten: :1 # ${TEST_NOT_SET_AT_ALL}\n")
	if got, want := mustLoadConfig(t, path).Listen, ":1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err := LoadConfig(writeConfig(t, "${TEST_NOT_SET_AT_ALL}: x\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "${TEST_NOT_SET_AT_ALL}"`) {
		t.Errorf("a key is not expanded: got %v", err)
	}
}

func TestConfigSecretFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.secret", "  "+testSecret1+"\r\n\n")
	write("empty.secret", "\n")
	write("short.secret", "airlock_tooshort-but-secret\n")
	config := func(src string) string {
		t.Helper()
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	c := mustLoadConfig(t, config("tokens:\n  - {role: admin, name: ops, secret_file: ok.secret}\n"))
	if got, want := c.Tokens[0].Secret.Reveal(), testSecret1; got != want {
		t.Errorf("secret: got %q, want %q", got, want)
	}

	for _, tc := range []struct {
		name, src, want string
	}{
		{"missing file", "tokens:\n  - {role: admin, name: ops, secret_file: nope.secret}\n",
			"2:43: tokens[0].secret_file: cannot read the secret: open " + filepath.Join(dir, "nope.secret") + ": no such file or directory"},
		{"empty file", "tokens:\n  - role: admin\n    name: ops\n    secret_file: empty.secret\n",
			"4:18: tokens[0].secret_file: the file is empty"},
		{"both", "tokens:\n  - role: admin\n    name: ops\n    secret: " + testSecret2 + "\n    secret_file: ok.secret\n",
			"5:18: tokens[0].secret_file: give secret_file or secret, not both"},
		{"short secret in a file", "tokens:\n  - role: admin\n    name: ops\n    secret_file: short.secret\n",
			`2:5: tokens[0]: the secret (27 characters, not shown) must start with "airlock_" and be at least 40 characters long`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := config(tc.src)
			_, err := LoadConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			if got, want := err.Error(), path+":"+tc.want; !strings.HasPrefix(got, want) {
				t.Errorf("got  %s\nwant %s…", got, want)
			}
			if strings.Contains(err.Error(), "tooshort") || strings.Contains(err.Error(), testSecret2) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestConfigSecretNeverShown checks that a refused secret is not echoed,
// whether it comes from the file or from the environment.
func TestConfigSecretNeverShown(t *testing.T) {
	const short = "airlock_hunter2"
	t.Setenv("TEST_SHORT_SECRET", short)
	for _, src := range []string{
		"tokens:\n  - {role: admin, name: ops, secret: " + short + "}\n",
		"tokens:\n  - {role: admin, name: ops, secret: \"${TEST_SHORT_SECRET}\"}\n",
		"tokens:\n  - {role: admin, name: ops, secret: notairlock_" + strings.Repeat("x", 40) + "}\n",
	} {
		_, err := LoadConfig(writeConfig(t, src))
		if err == nil {
			t.Fatalf("no error for %q", src)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "xxxx") {
			t.Errorf("the error shows the secret: %v", err)
		}
		if !strings.Contains(err.Error(), "not shown") {
			t.Errorf("got %v, want the secret's problem", err)
		}
	}
}

func TestSecretRedacted(t *testing.T) {
	tok := TokenConfig{Role: "admin", Name: "ops", Secret: testSecret1}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("token", "secret", tok.Secret, "token", tok)
	for _, s := range []string{
		fmt.Sprint(tok), fmt.Sprintf("%v", tok), fmt.Sprintf("%+v", tok), fmt.Sprintf("%#v", tok),
		fmt.Sprint(tok.Secret), fmt.Sprintf("%s", tok.Secret), fmt.Sprintf("%q", tok.Secret), logs.String(),
	} {
		if strings.Contains(s, testSecret1) {
			t.Errorf("the secret shows in %s", s)
		}
	}
	if got, want := tok.Secret.Reveal(), testSecret1; got != want {
		t.Errorf("Reveal: got %q, want %q", got, want)
	}
}

func TestConfigRelativePaths(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "etc")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "airlock.yaml")
	src := "data_dir: ../var\npolicies: [org.yaml, ./team/project.yaml, /abs/agent.yaml]\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustLoadConfig(t, path)
	if got, want := c.Policies, []string{
		filepath.Join(sub, "org.yaml"), filepath.Join(sub, "team", "project.yaml"), "/abs/agent.yaml",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("policies: got %q, want %q", got, want)
	}
	if got, want := c.DataDir, filepath.Join(dir, "var"); got != want {
		t.Errorf("data_dir: got %q, want %q", got, want)
	}
	if got, want := c.Store.Path, filepath.Join(dir, "var", "airlock.db"); got != want {
		t.Errorf("store.path: got %q, want %q", got, want)
	}
}

func TestConfigValidateWithoutFile(t *testing.T) {
	c := DefaultConfig()
	c.Store.Driver = "mysql"
	c.Log.Level = "trace"
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	got, want := err.Error(), "store.driver: unknown driver \"mysql\" (valid: sqlite, postgres)\nlog.level: unknown level \"trace\" (valid: debug, info, warn, error)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "EMPTY": "", "B_2": "two"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "1"},
		{in: "x${A}y${B_2}z", want: "x1ytwoz"},
		{in: "${EMPTY}", want: ""},
		{in: "${EMPTY:-d}", want: "d"},
		{in: "${NOPE:-a:-b}", want: "a:-b"},
		{in: "$$", want: "$"},
		{in: "$$$$", want: "$$"},
		{in: "$${A}", want: "${A}"},
		{in: "$$${A}", want: "$1"},
		{in: "$A", want: "$A"},
		{in: "$", want: "$"},
		{in: "${NOPE}", err: "environment variable NOPE is not set"},
		{in: "${}", err: `"" is not an environment variable name`},
		{in: "${A B}", err: `"A B" is not an environment variable name`},
		{in: "${A", err: "has no closing brace"},
	} {
		got, err := expand(tc.in, lookup)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("expand(%q): got error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("expand(%q): %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("expand(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLogConfigLogger(t *testing.T) {
	var buf bytes.Buffer
	LogConfig{Level: "warn", Format: "json"}.Logger(&buf).Info("hidden")
	LogConfig{Level: "warn", Format: "json"}.Logger(&buf).Warn("shown")
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, `"msg":"shown"`) {
		t.Errorf("got %s", got)
	}
}

// TestConfigDocumented checks that docs/CONFIG.md names every field and
// that its example loads.
func TestConfigDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "CONFIG.md"))
	if err != nil {
		t.Fatal(err)
	}
	var keys func(reflect.Type)
	keys = func(typ reflect.Type) {
		for f := range typ.Fields() {
			tag := f.Tag.Get("yaml")
			if tag == "" {
				continue
			}
			if !bytes.Contains(doc, []byte("`"+tag+"`")) {
				t.Errorf("docs/CONFIG.md does not document `%s` (%s.%s)", tag, typ.Name(), f.Name)
			}
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct:
				keys(ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				keys(ft.Elem())
			}
		}
	}
	keys(reflect.TypeFor[Config]())

	_, example, ok := strings.Cut(string(doc), "```yaml\n")
	if !ok {
		t.Fatal("docs/CONFIG.md has no yaml example")
	}
	example, _, _ = strings.Cut(example, "```")
	dir := t.TempDir()
	path := filepath.Join(dir, "airlock.yaml")
	// The example's absolute paths, moved under dir.
	example = strings.NewReplacer("/etc/airlock/", dir+"/", "/var/lib/airlock", dir+"/data").Replace(example)
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte(testSecret1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIRLOCK_BOB_TOKEN", testSecret2)
	t.Setenv("AIRLOCK_CODER_TOKEN", "airlock_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC")
	t.Setenv("AIRLOCK_LISTEN", "")
	c := mustLoadConfig(t, path)
	got, want := c, DefaultConfig()
	got.src, got.DataDir, got.Store.Path, got.Policies, got.Tokens = nil, "", "", nil, nil
	if got.Checkpoint.KeyFile != filepath.Join(dir, "data", "checkpoint.key") {
		t.Errorf("checkpoint.key_file %q", got.Checkpoint.KeyFile)
	}
	got.Checkpoint.KeyFile = ""
	want.DataDir, want.Store.Path = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the example's values are not the defaults:\ngot  %+v\nwant %+v", got, want)
	}
	if got, want := len(c.Tokens), 3; got != want {
		t.Errorf("tokens: got %d, want %d", got, want)
	}
}
