package sensitive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogueEntries checks every entry of the built-in catalogue: it
// compiles, says what it is, cites a source, and a path made from its
// pattern matches it in every spelling a file system may give it.
func TestCatalogueEntries(t *testing.T) {
	entries := Entries()
	if len(entries) < 400 {
		t.Fatalf("the catalogue has %d entries; it was never this small", len(entries))
	}
	for _, e := range entries {
		if e.What == "" {
			t.Errorf("%s %s: no what", e.Kind, e.Pattern)
		}
		switch {
		case strings.HasPrefix(e.Source, "https://"):
		case strings.HasPrefix(e.Source, "docs/"):
			if _, err := os.Stat(filepath.Join("..", e.Source)); err != nil {
				t.Errorf("%s %s: source %s: %v", e.Kind, e.Pattern, e.Source, err)
			}
		default:
			t.Errorf("%s %s: source %q is neither a URL nor a file of docs/", e.Kind, e.Pattern, e.Source)
		}
		if _, err := compile(e); err != nil {
			t.Errorf("%s %s: %v", e.Kind, e.Pattern, err)
		}
		if strings.HasPrefix(e.Pattern, "!") {
			continue
		}
		for _, p := range spellings(e) {
			if got := has(e.Kind, p); !got && !negated(e.Kind, p) {
				t.Errorf("%s %s: %q does not match", e.Kind, e.Pattern, p)
			}
		}
	}
}

// has reports whether the package says p is of kind.
func has(k Kind, p string) bool {
	switch k {
	case KindSecret:
		_, ok := Secret(p, false)
		return ok
	case KindGateConfig:
		_, ok := GateConfig(p, false)
		return ok
	case KindRunsLater:
		return Persists(p, false)
	case KindSystem:
		_, ok := SystemPlace(p, false)
		return ok
	case KindSecretVar:
		return SecretVar(p)
	}
	return false
}

// negated reports whether a negation of kind takes p out (a sample that
// falls in one says nothing about its entry).
func negated(k Kind, p string) bool {
	var buf [maxNames]string
	n := split(Clean(p, ""), buf[:0])
	return Builtin().tables[0].neg[k].match(&n, false, true) != nil
}

// sample makes a path from a pattern's text: a name for each pattern
// character, one name for **.
func sample(pattern string) string {
	r := strings.NewReplacer("**", "x", "*", "x", "?", "x")
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == '[' {
			if end := strings.IndexByte(pattern[i+1:], ']'); end > 0 {
				b.WriteByte(pattern[i+1])
				i += end + 1
				continue
			}
		}
		b.WriteByte(pattern[i])
	}
	return r.Replace(b.String())
}

// spellings returns ways of writing a path the entry matches: as it is, in
// other cases, through macOS's /private, in every form of a home
// directory, under a Windows drive, at any depth.
func spellings(e Entry) []string {
	s := sample(e.Pattern)
	if e.Kind == KindSecretVar {
		return []string{s, strings.ToLower(s)}
	}
	var out []string
	switch {
	case strings.HasPrefix(s, "/"):
		out = append(out, s, strings.ToUpper(s), "C:"+s)
		for _, d := range []string{"/etc", "/var", "/tmp"} {
			if rest, ok := strings.CutPrefix(s, d); ok {
				out = append(out, "/private"+d+rest)
			}
		}
	case strings.HasPrefix(s, "~/"):
		rest := s[2:]
		out = append(out, s, "~alice/"+rest, "/home/u/"+rest, "/Users/u/"+rest, "/USERS/U/"+strings.ToUpper(rest),
			"/root/"+rest, "/var/root/"+rest, "C:/Users/u/"+rest, `C:\Users\u\`+strings.ReplaceAll(rest, "/", `\`),
			"/mnt/c/Users/u/"+rest)
	default:
		rest := strings.TrimPrefix(s, "x/")
		out = append(out, rest, "/w/p/"+rest, "/w/p/"+strings.ToUpper(rest), "~/p/"+rest)
	}
	return out
}

func TestSecretFamilies(t *testing.T) {
	for _, tc := range []struct {
		p    string
		glob bool
		want string // "" when not a secret
	}{
		// Agent hosts' own logins.
		{"~/.claude/.credentials.json", false, "an agent host's login"},
		{"/home/u/.claude.json", false, "an agent host's login"},
		{"~/.codex/auth.json", false, "an agent host's login"},
		{"/Users/u/.gemini/oauth_creds.json", false, "an agent host's login"},
		{"~/.gemini/google_accounts.json", false, "an agent host's login"},
		{"~/.config/gh/hosts.yml", false, "credentials"},
		// Kubernetes and Docker secrets.
		{"/var/run/secrets/kubernetes.io/serviceaccount/token", false, "credentials"},
		{"/run/secrets/kubernetes.io/serviceaccount/namespace", false, "credentials"},
		{"/run/secrets/db_password", false, "credentials"},
		{"/var/run/secrets/eks.amazonaws.com/serviceaccount/token", false, "credentials"},
		{"/etc/kubernetes/admin.conf", false, "credentials"},
		// Build tools and registries.
		{"~/.m2/settings-security.xml", false, "credentials"},
		{"~/.m2/settings.xml", false, "credentials"},
		{"~/.gradle/gradle.properties", false, "credentials"},
		{"~/.cargo/credentials.toml", false, "credentials"},
		{"~/.gem/credentials", false, "credentials"},
		{"~/.nuget/NuGet/NuGet.Config", false, "credentials"},
		{"~/.config/composer/auth.json", false, "credentials"},
		{"~/.terraform.d/credentials.tfrc.json", false, "credentials"},
		{"/w/infra/terraform.tfstate", false, "credentials"},
		{"~/.pypirc", false, "credentials"},
		{"~/.docker/config.json", false, "credentials"},
		// Cloud command-line tools, their caches included.
		{"~/.aws/sso/cache/abc.json", false, "credentials"},
		{"~/.aws/cli/cache/x.json", false, "credentials"},
		{"~/.config/gcloud/application_default_credentials.json", false, "credentials"},
		{"~/.azure/msal_token_cache.json", false, "credentials"},
		{"~/.oci/config", false, "credentials"},
		{"~/.config/doctl/config.yaml", false, "credentials"},
		// Password managers and browsers.
		{"~/.password-store/github.gpg", false, "credentials"},
		{"/w/vault.kdbx", false, "credentials"},
		{"~/.config/google-chrome/Default/Login Data", false, "credentials"},
		{"~/Library/Application Support/Google/Chrome/Default/Cookies", false, "credentials"},
		{"~/.mozilla/firefox/abc.default/logins.json", false, "credentials"},
		// Process environments, whichever process.
		{"/proc/self/environ", false, "a process's environment"},
		{"/proc/thread-self/environ", false, "a process's environment"},
		{"/proc/123/environ", false, "a process's environment"},
		{"/proc/123/task/124/environ", false, "a process's environment"},
		{"/proc/*/environ", true, "a process's environment"},
		// Airlock's own files.
		{"~/.config/airlock/claude.token", false, "Airlock's own tokens"},
		{"/srv/airlock-data/checkpoint.key", false, "Airlock's checkpoint signing key"},
		{"./airlock-data/airlock.db", false, "Airlock's data (its database and signing key)"},
		{"/etc/airlock/admin.token", false, "Airlock's own tokens"},
		{"/w/agent.token", false, "a token file"},
		// Developer tools' stores in a home directory.
		{"~/.authinfo", false, "credentials"},
		{"~/.bunfig.toml", false, "credentials"},
		{"~/.local/share/uv/credentials/credentials.toml", false, "credentials"},
		{"~/.ivy2/.credentials", false, "credentials"},
		{"~/.sbt/.credentials", false, "credentials"},
		{"~/.pulumi/credentials.json", false, "credentials"},
		{"~/.config/helm/repositories.yaml", false, "credentials"},
		{"~/Library/Preferences/helm/repositories.yaml", false, "credentials"},
		{"~/.vultr-cli.yaml", false, "credentials"},
		{"~/.linode-cli", false, "credentials"},
		{"~/.config/configstore/snyk.json", false, "credentials"},
		{"~/.ngrok2/ngrok.yml", false, "credentials"},
		{"~/.config/ngrok/ngrok.yml", false, "credentials"},
		{"~/.circleci/cli.yml", false, "credentials"},
		{"~/.sentryclirc", false, "credentials"},
		{"~/.snowsql/config", false, "credentials"},
		{"~/.dbt/profiles.yml", false, "credentials"},
		{"~/.mc/config.json", false, "credentials"},
		{"~/.expo/state.json", false, "credentials"},
		{"~/.config/tea/config.yml", false, "credentials"},
		{"~/.huggingface/token", false, "credentials"},
		{"~/.cache/huggingface/token", false, "credentials"},
		{"~/.kaggle/kaggle.json", false, "credentials"},
		{"~/.continue/config.json", false, "an agent host's login"},
		{"~/.config/sops/age/keys.txt", false, "credentials"},
		{"~/.local/share/atuin/key", false, "credentials"},
		{"~/.local/share/atuin/history.db", false, "credentials"},
		{"~/.smbcredentials", false, "credentials"},
		{"~/.davfs2/secrets", false, "credentials"},
		{"~/.msmtprc", false, "credentials"},
		{"~/.fetchmailrc", false, "credentials"},
		{"~/.local/share/remmina/r.remmina", false, "credentials"},
		{"~/.config/remmina/remmina.pref", false, "credentials"},
		{"~/.talos/config", false, "credentials"},
		{"~/.config/argocd/config", false, "credentials"},
		{"~/.cloudflared/cert.pem", false, "credentials"},
		{"~/.config/Cursor/User/globalStorage/state.vscdb", false, "an agent host's login"},
		{"~/.wakatime.cfg", false, "credentials"},
		{"~/.config/jfrog/jfrog-cli.conf.v6", false, "credentials"},
		{"~/.gitlab-runner/config.toml", false, "credentials"},
		{"~/.cf/config.json", false, "credentials"},
		{"~/.config/yandex-cloud/config.yaml", false, "credentials"},
		{"~/.influxdbv2/configs", false, "credentials"},
		// The system's secrets.
		{"/etc/wireguard/wg0.conf", false, "credentials"},
		{"/etc/mysql/debian.cnf", false, "credentials"},
		{"/etc/ppp/chap-secrets", false, "credentials"},
		{"/etc/ppp/pap-secrets", false, "credentials"},
		{"/etc/gitlab-runner/config.toml", false, "credentials"},
		{"/etc/ipsec.secrets", false, "credentials"},
		// A project's secret-bearing files.
		{"/w/p/.envrc", false, "credentials"},
		{"/w/p/.dev.vars", false, "credentials"},
		{"/w/p/.dev.vars.staging", false, "credentials"},
		{"/w/p/terraform.tfvars", false, "credentials"},
		{"/w/p/env/prod.auto.tfvars", false, "credentials"},
		{"/w/p/terraform.tfvars.json", false, "credentials"},
		{"/w/p/chart/secrets.yaml", false, "credentials"},
		{"/w/p/values-secret.yaml", false, "credentials"},
		{"~/values-secret-multicloud-gitops.yaml", false, "credentials"},
		{"/w/p/.secrets", false, "credentials"},
		{"/w/p/credentials.json", false, "credentials"},
		{"/w/p/client_secret_123.apps.googleusercontent.com.json", false, "credentials"},
		{"/w/p/service-account.json", false, "credentials"},
		{"/w/p/keys/serviceAccountKey.json", false, "credentials"},
		{"/w/p/firebase-adminsdk.json", false, "credentials"},
		{"/w/p/app-firebase-adminsdk-x1y2-0123456789.json", false, "credentials"},
		{"/w/p/local.settings.json", false, "credentials"},
		{"/w/p/android/key.properties", false, "credentials"},
		{"/w/p/wp-config.php", false, "credentials"},
		{"/w/p/kubeconfig", false, "credentials"},
		{"/w/p/cluster.kubeconfig", false, "credentials"},
		{"/w/p/server.pem", false, "credentials (the certificate and its key)"},
		{"/w/p/AuthKey_ABC123.p8", false, "credentials"},
		{"/w/p/.dockerconfigjson", false, "credentials"},
		{"/w/p/ci/.docker/config.json", false, "credentials"},
		{"/w/p/deploy_key", false, "credentials"},
		{"/w/p/github_deploy_key", false, "credentials"},
		{"/w/p/.dbeaver/credentials-config.json", false, "credentials"},
		{"~/.local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json", false, "credentials"},
		{"/w/p/.idea/dataSources.xml", false, "credentials"},
		{"/w/p/.idea/dataSources.local.xml", false, "credentials"},
		{"/w/p/config/database.yml", false, "credentials"},
		{"/w/p/config/secrets.yml", false, "credentials"},
		{"/w/p/jenkins/credentials.xml", false, "credentials"},
		{"/w/p/passwords.txt", false, "credentials"},
		{"/w/p/config/*.yml", true, "credentials"}, // it may match database.yml
		// Airlock's configuration and data outside airlock-data.
		{"/w/p/airlock.yaml", false, "Airlock's configuration (it may hold a token's secret)"},
		{"/w/p/airlock.db", false, "Airlock's data (its database and signing key)"},
		{"/w/p/airlock.db-wal", false, "Airlock's data (its database and signing key)"},
		{"/w/p/airlock-2025-01-01.db", false, "Airlock's data (its database and signing key)"},
		{"/var/lib/airlock/airlock.db", false, "Airlock's data (its database and signing key)"},
		// Case-insensitive file systems, /private, Windows.
		{"~/.AWS/credentials", false, "credentials"},
		{"~/.SSH/ID_RSA", false, "credentials"},
		{"/Users/u/.Ssh/Id_Ed25519", false, "credentials"},
		{"/USERS/u/.aws/credentials", false, "credentials"},
		{"/ETC/SHADOW", false, "credentials"},
		{"/private/etc/master.passwd", false, "credentials"},
		{"/PRIVATE/ETC/sudoers", false, "credentials"},
		{`C:\Users\u\.aws\credentials`, false, "credentials"},
		{"C:/Users/u/.ssh/id_rsa", false, "credentials"},
		{"/c/Users/u/.aws/credentials", false, "credentials"},
		{"/mnt/c/Users/u/.aws/credentials", false, "credentials"},
		{"~/.aws/credentials.", false, "credentials"},
		{"~/.aws/credentials::$DATA", false, "credentials"},
		{"~/.\u212Aube/config", false, "credentials"},   // the Kelvin sign is a k
		{"/w/p/.e\u200Cnv", false, "credentials"},       // HFS+ ignores U+200C
		{"~root/.ssh/id_rsa", false, "credentials"},     // bash's ~user
		{"/var/root/.ssh/id_rsa", false, "credentials"}, // macOS's root
		{"/proc/1/root/home/u/.aws/credentials", false, "credentials"},
		// Globs, in any case.
		{"~/.[Aa]ws/*", true, "credentials"},
		{"~/.[Aa][Ww][Ss]/credentials", true, "credentials"},
		{"~/.a?s/credentials", true, "credentials"},
		{"~/.*/credentials", true, "credentials"},
		{"~/.ssh/*", true, "credentials"},
		{"/w/p/*.pem", true, "credentials"}, // it may match server-key.pem
		{"/w/p/*.crt", true, ""},
		{"/w/p/*key.pem", true, "credentials"},
		{"~/.ssh/*.pub", true, ""},
		{"/w/p/*.txt", true, ""}, // a type of file, not passwords.txt
		{"/w/p/*.php", true, ""}, // nor wp-config.php
		{"/w/p/*.p12", true, "credentials"},
		{"/w/p/passw*.txt", true, "credentials"},
		{"/w/p/*", true, ""},             // * skips hidden files
		{"/w/p/.*", true, "credentials"}, // .* asks for them: .env
		{"/w/p/.[!.]*", true, "credentials"},
		{"/w/p/.[a-z]*", true, "credentials"},
		{"/w/p/.git*", true, "credentials"}, // .git-credentials
		// Not secrets.
		{"/w/p/README.md", false, ""},
		{"/w/p/src/settings.json", false, ""},
		{"/w/p/config.toml", false, ""},
		{"/w/p/.claude/settings.json", false, ""},
		{"/w/p/.env.example", false, ""},
		{"/w/p/.ENV.EXAMPLE", false, ""},
		{"~/.ssh/ID_RSA.PUB", false, ""},
		{"~/.ssh/config", false, ""},
		{"/w/p/tokenizer.go", false, ""},
		{"/w/p/keys.go", false, ""},
		{"/run/user/1000/bus", false, ""},
		{"/proc/1/status", false, ""},
		// Not secrets: the everyday files beside those above.
		{"/w/p/ca.pem", false, ""},
		{"/w/p/certs/fullchain.pem", false, ""},
		{"/w/p/config/app.yml", false, ""},
		{"/w/p/config/database.go", false, ""},
		{"/w/p/database.yml.example", false, ""},
		{"/w/p/docs/secrets.md", false, ""},
		{"/w/p/internal/credentials/credentials.go", false, ""},
		{"/w/p/passwords.go", false, ""},
		{"/w/p/terraform.tfvars.example", false, ""},
		{"/w/p/values.yaml", false, ""},
		{"/w/p/values-secret.yaml.template", false, ""},
		{"/w/p/templates/secret.yaml", false, ""},
		{"/w/p/.envrc.example", false, ""},
		{"/w/p/deploy_key.pub", false, ""},
		{"/w/p/.devcontainer/devcontainer.json", false, ""},
		{"/w/p/crush.json", false, ""},
		{"/w/p/.github/workflows/*.yml", true, ""},
		{"/w/p/*.go", true, ""},
		{"/w/p/*.md", true, ""},
		{"/dev/mapper/control", false, ""},
		{"~+/.ssh/x", false, ""},
	} {
		got, ok := Secret(tc.p, tc.glob)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("Secret(%q, %v) = %q, %v; want %q", tc.p, tc.glob, got, ok, tc.want)
		}
	}
}

func TestGateConfig(t *testing.T) {
	for _, tc := range []struct {
		p    string
		glob bool
		want string // "" when writing p does not configure the gate
	}{
		// Every host's settings, in a project and at the user's level.
		{"/w/p/.claude/settings.local.json", false, "Claude Code's settings"},
		{"/w/p/.claude/settings.json", false, "Claude Code's settings"},
		{"~/.claude/settings.json", false, "Claude Code's settings"},
		{"/w/p/.claude/hooks/guard.sh", false, "Claude Code's settings"},
		{"/w/p/.claude/commands/deploy.md", false, "Claude Code's settings"},
		{"/w/p/.claude/skills/x/SKILL.md", false, "Claude Code's settings"},
		{"/w/p/.claude/agents/reviewer.md", false, "Claude Code's settings"},
		{"~/.claude.json", false, "Claude Code's settings"},
		{"/w/p/.mcp.json", false, "an MCP server configuration"},
		{"/etc/claude-code/managed-settings.json", false, "Claude Code's managed settings"},
		{"/w/p/.codex/hooks.json", false, "Codex's settings"},
		{"/w/p/.codex/config.toml", false, "Codex's settings"},
		{"~/.codex/rules/default.rules", false, "Codex's settings"},
		{"/w/p/.gemini/settings.json", false, "Gemini CLI's settings"},
		{"~/.gemini/commands/x.toml", false, "Gemini CLI's settings"},
		{"/w/p/.vscode/tasks.json", false, "VS Code's workspace settings"},
		{"/w/p/.vscode/settings.json", false, "VS Code's workspace settings"},
		{"~/.config/Code/User/settings.json", false, "VS Code's settings"},
		{"/w/p/.cursor/hooks.json", false, "Cursor's settings"},
		{"/w/p/.cursor/mcp.json", false, "Cursor's settings"},
		{"/w/p/.idea/runConfigurations/x.xml", false, "a JetBrains IDE's project settings"},
		{"/w/p/.zed/settings.json", false, "Zed's settings"},
		{"/w/p/.continue/config.yaml", false, "Continue's settings"},
		{"/w/p/.windsurf/hooks.json", false, "Windsurf's settings"},
		{"/w/p/.github/hooks/guard.json", false, "Copilot's hooks"},
		{"/w/p/opencode.json", false, "OpenCode's settings"},
		// Case, /private, relative paths.
		{"/w/p/.CLAUDE/Settings.Local.json", false, "Claude Code's settings"},
		{"/w/p/.Claude/settings.local.json.", false, "Claude Code's settings"},
		{".claude/settings.local.json", false, "Claude Code's settings"},
		{"sub/dir/.vscode/tasks.json", false, "VS Code's workspace settings"},
		{"/w/p/.c*/settings.local.json", true, "Claude Code's settings"},
		{"/w/p/.*/settings.local.json", true, "Claude Code's settings"},
		// Airlock's own files.
		{"~/.config/airlock/claude.token", false, "Airlock's own configuration"},
		{"/srv/airlock/airlock.yaml", false, "Airlock's own configuration"},
		{"/srv/airlock-data/airlock.db", false, "Airlock's own data"},
		{"/srv/keys/checkpoint.key", false, "Airlock's checkpoint signing key"},
		{"/var/lib/airlock/airlock.db", false, "Airlock's own data"},
		{"/srv/airlock/airlock.db", false, "Airlock's own data"},
		// Dev containers and Crush.
		{"/w/p/.devcontainer/devcontainer.json", false, "a dev container's configuration"},
		{"/w/p/.devcontainer/post-create.sh", false, "a dev container's configuration"},
		{"/w/p/.devcontainer.json", false, "a dev container's configuration"},
		{"/w/p/.crush.json", false, "Crush's settings"},
		{"/w/p/crush.json", false, "Crush's settings"},
		{"/w/p/.crushrc", false, "Crush's settings"},
		{"~/.config/crush/crush.json", false, "Crush's settings"},
		{"~/.config/crush/crushrc", false, "Crush's settings"},
		// Not the gate's configuration.
		{"/w/p/CLAUDE.md", false, ""},
		{"/w/p/.claude/CLAUDE.md", false, ""},
		{"~/.claude/projects/-w-p/memory/MEMORY.md", false, ""},
		{"~/.claude/plans/plan.md", false, ""},
		{"/w/p/AGENTS.md", false, ""},
		{"/w/p/GEMINI.md", false, ""},
		{"/w/p/docs/.claude.md", false, ""},
		{"/w/p/src/settings.json", false, ""},
		{"/w/p/config.toml", false, ""},
		{"/w/p/claude/settings.json", false, ""},
		{"/w/p/README.md", false, ""},
		{"/w/p/.cursor/rules/go.mdc", false, ""},
		{"/w/p/.github/workflows/ci.yml", false, ""},
		{"/w/p/devcontainer.json", false, ""},
		{"/w/p/airlock-2025-01-01.db", false, ""},
		{"/w/p/*", true, ""},
		{"/w/p/.*", true, "Claude Code's settings"}, // rm -rf .* removes .claude
		{"/w/p/[.]*", true, ""},                     // (any hidden name, not which)
	} {
		got, ok := GateConfig(tc.p, tc.glob)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("GateConfig(%q, %v) = %q, %v; want %q", tc.p, tc.glob, got, ok, tc.want)
		}
	}
}

func TestPersists(t *testing.T) {
	for _, tc := range []struct {
		p    string
		glob bool
		want bool
	}{
		{"~/.bashrc", false, true},
		{"~/.BASHRC", false, true},
		{"/Users/u/.zshrc", false, true},
		{"/w/p/.git/hooks/pre-commit", false, true},
		{"/w/p/.GIT/hooks/pre-commit", false, true},
		{"/w/p/.GIT/HOOKS/PRE-COMMIT", false, true},
		{".git/hooks/pre-commit", false, true},
		{"/w/p/.git/config", false, true},
		{"/w/p/.git/modules/sub/hooks/post-checkout", false, true},
		{"/w/p/.git", false, true},
		{"/srv/repo.git/hooks/post-receive", false, true},
		{"/w/p/.husky/pre-commit", false, true},
		{"/w/p/.envrc", false, true},
		{"/w/p/.pre-commit-config.yaml", false, true},
		{"~/go/bin/gopls", false, true},
		{"~/.local/lib/python3.12/site-packages/x.pth", false, true},
		{"/w/p/.claude/settings.json", false, true}, // the gate's configuration persists too
		{"~/.b*rc", true, true},
		{"~/*", true, true},
		{"~/.*", true, true},
		{"/w/p/.git/info/exclude", false, false},
		{"/w/p/.gitignore", false, false},
		{"/w/p/main.go", false, false},
		{"/w/p/.*", true, true}, // .envrc, .git/hooks
		{"/w/p/[.]*", true, false},
		{"/w/p/*", true, false},
		{"/w/p/bin/build", false, false},
	} {
		if got := Persists(tc.p, tc.glob); got != tc.want {
			t.Errorf("Persists(%q, %v) = %v, want %v", tc.p, tc.glob, got, tc.want)
		}
	}
}

func TestSystemPlaceCase(t *testing.T) {
	for _, tc := range []struct {
		p    string
		glob bool
		want string
	}{
		{"/ETC/sudoers", false, "under /etc"},
		{"/private/etc/hosts", false, "under /etc"},
		{"/Private/Etc/hosts", false, "under /etc"},
		{"/private/var/folders/x/T/y", false, ""},
		{"/private/tmp/x", false, ""},
		{"/proc/1/root/tmp/x", false, "under /proc"},
		{"C:/Windows/System32/drivers/etc/hosts", false, "under /Windows"},
		{"/etc/*.conf", true, "under /etc"},
		{"/*", true, "/*"},
		{"/w/p/.vscode/tasks.json", false, "/w/p/.vscode/tasks.json"},
		{"/run/user/1000/x.sock", false, ""},
	} {
		got, ok := SystemPlace(tc.p, tc.glob)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("SystemPlace(%q, %v) = %q, %v; want %q", tc.p, tc.glob, got, ok, tc.want)
		}
	}
}

func TestSecretVarCatalogue(t *testing.T) {
	for name, want := range map[string]bool{
		"DATABASE_URL": true, "APP_DATABASE_URL": true, "SENTRY_DSN": true, "MONGODB_URI": true,
		"AZURE_STORAGE_CONNECTION_STRING": true, "NPM_CONFIG__AUTH": true, "database_url": true,
		"DATABASE": false, "URL": false, "HOSTNAME": false, "SSH_AUTH_SOCK": false, "": false,
	} {
		if got := SecretVar(name); got != want {
			t.Errorf("SecretVar(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSplitHome(t *testing.T) {
	for _, tc := range []struct{ p, home, rest string }{
		{"~", "~", ""},
		{"~/x", "~", "x"},
		{"~alice/.ssh/id_rsa", "~alice", ".ssh/id_rsa"},
		{"/home/u/x/y", "/home/u", "x/y"},
		{"/Users/u/x", "/Users/u", "x"},
		{"/USERS/u/x", "/USERS/u", "x"},
		{"/root/x", "/root", "x"},
		{"/root", "/root", ""},
		{"/var/root/.ssh", "/var/root", ".ssh"},
		{"C:/Users/u/.aws", "C:/Users/u", ".aws"},
		{"/c/Users/u/.aws", "/c/Users/u", ".aws"},
		{"/mnt/c/Users/u/.aws", "/mnt/c/Users/u", ".aws"},
		{"~+/x", "", ""},
		{"~-/x", "", ""},
		{"/home", "", ""},
		{"/srv/x", "", ""},
		{"x/y", "", ""},
	} {
		home, rest, ok := SplitHome(tc.p)
		if ok != (tc.home != "") || home != tc.home || rest != tc.rest {
			t.Errorf("SplitHome(%q) = %q, %q, %v; want %q, %q", tc.p, home, rest, ok, tc.home, tc.rest)
		}
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ p, cwd, want string }{
		{"a/../b", "/w", "/w/b"},
		{"~/x/../y", "/w", "~/y"},
		{`C:\Users\u\.aws\credentials`, "", "C:/Users/u/.aws/credentials"},
		{`.claude\settings.json`, `C:\w\p`, "C:/w/p/.claude/settings.json"},
		{`a\b`, "/w", `/w/a\b`}, // a backslash is a name's character on Unix
	} {
		if got := Clean(tc.p, tc.cwd); got != tc.want {
			t.Errorf("Clean(%q, %q) = %q, want %q", tc.p, tc.cwd, got, tc.want)
		}
	}
}

// TestExtend checks what a policy adds: its paths count, only add, and
// a malformed pattern is an error.
func TestExtend(t *testing.T) {
	c, err := Builtin().Extend(
		Entry{Kind: KindSecret, Pattern: "~/work/vault/**", What: "a secret named by policy p", Source: "p.yaml:3"},
		Entry{Kind: KindGateConfig, Pattern: "ops/airlock/**", What: "the gate's configuration, named by policy p", Source: "p.yaml:4"},
		Entry{Kind: KindRunsLater, Pattern: "/opt/hooks/*.sh", What: "a place named by policy p", Source: "p.yaml:5"},
		Entry{Kind: KindSecret, Pattern: "~/.ssh/config", What: "a secret named by policy p", Source: "p.yaml:6"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if what, ok := c.Secret("/home/u/work/vault/db.json", false); !ok || what != "a secret named by policy p" {
		t.Errorf("policy secret: %q, %v", what, ok)
	}
	if _, ok := Secret("/home/u/work/vault/db.json", false); ok {
		t.Error("the built-in catalogue changed")
	}
	if _, ok := c.Secret("~/.ssh/config", false); !ok {
		t.Error("a built-in negation took out a path the policy added")
	}
	if what, ok := c.GateConfig("/w/p/ops/airlock/org.yaml", false); !ok || what != "the gate's configuration, named by policy p" {
		t.Errorf("policy gate config: %q, %v", what, ok)
	}
	if !c.Persists("/opt/hooks/x.sh", false) {
		t.Error("policy runs-later")
	}
	if _, ok := c.SystemPlace("/w/p/ops/airlock/org.yaml", false); !ok {
		t.Error("a policy's gate configuration is not privileged to write")
	}
	if !c.HoldsSecrets("~/work") {
		t.Error("HoldsSecrets ignores the policy's paths")
	}
	if _, ok := c.Secret("~/.aws/credentials", false); !ok {
		t.Error("the extended catalogue lost a built-in entry")
	}
	for _, bad := range []string{"!~/.ssh/id_rsa", "", "~bob/x", "/a/[b", "a/**x/b", "**", `C:\x`} {
		if _, err := Builtin().Extend(Entry{Kind: KindSecret, Pattern: bad}); err == nil {
			t.Errorf("Extend(%q) accepted", bad)
		}
	}
	j := Join(nil, c, nil, c)
	if j != c {
		t.Error("Join of one catalogue is not that catalogue")
	}
	d, _ := Builtin().Extend(Entry{Kind: KindSecret, Pattern: "/opt/d/**", What: "d", Source: "d"})
	j = Join(c, d)
	if _, ok := j.Secret("/opt/d/x", false); !ok {
		t.Error("Join lost d's entry")
	}
	if _, ok := j.Secret("~/work/vault/x", false); !ok {
		t.Error("Join lost c's entry")
	}
}

func TestParse(t *testing.T) {
	entries, err := Parse("# comment\n\nsecret\t~/.x\t\tcredentials\thttps://example.com\n")
	if err != nil || len(entries) != 1 || entries[0].Pattern != "~/.x" || entries[0].Kind != KindSecret {
		t.Fatalf("Parse = %v, %v", entries, err)
	}
	for _, bad := range []string{"secret\t~/.x\tcredentials\n", "secrets\t~/.x\tc\tsrc\n"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestIntersect(t *testing.T) {
	for _, tc := range []struct {
		in, pat string
		want    bool
	}{
		{"*", "id_rsa", true},
		{"*", ".env", false}, // a pattern without a leading dot never names a dotfile
		{".*", ".env", true},
		{"*.md", "*.key", false},
		{"*.KEY", "*.key", true},
		{"[a-c]*", "b?d", true},
		{"[a-c]*", "d*", false},
		{"id_*", "*_rsa", true},
		{"x*y", "*z", false},
		{"?", "ab", false},
		{"*", "*.pem", true},
		{".e*", ".env.*", true},
	} {
		if got := intersect(tc.in, tc.pat); got != tc.want {
			t.Errorf("intersect(%q, %q) = %v, want %v", tc.in, tc.pat, got, tc.want)
		}
	}
}

// FuzzSecret: whatever the path, the checks do not panic.
func FuzzSecret(f *testing.F) {
	for _, s := range []string{"~/.ssh/id_rsa", "/proc/1/root/etc/shadow", "C:\\x", "/[", "~/.*/[a-", "**/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		Secret(p, true)
		Secret(p, false)
		SystemPlace(p, true)
		GateConfig(p, true)
		HoldsSecrets(p)
		SecretName(p, true)
	})
}

// TestMatchNameIndexed: looking a literal name up through the index finds
// what trying every entry finds.
func TestMatchNameIndexed(t *testing.T) {
	c := Builtin()
	brute := func(kind Kind, name string) bool {
		for _, tb := range c.tables {
			for _, e := range tb.pos[kind].all {
				if e.anchor != anchorAny || len(e.segs) != 1 || e.segs[0].kind == segAny ||
					!globMatch(e.segs[0].text, name, false) {
					continue
				}
				var buf [maxNames]string
				n := split(name, buf[:0])
				if tb.neg[kind].match(&n, false, true) == nil {
					return true
				}
			}
		}
		return false
	}
	names := []string{"status", "test", "./...", "-n", "20", "README.md", "main.go", "id_rsa", "ID_RSA", "id_ed25519",
		".env", ".env.local", ".env.example", ".ENV.Production", "key.pem", "server.KEY", "x.tfstate", "a.tfstate.backup",
		".netrc", ".pgpass", "credentials", "credentials.json", "secrets.yaml", "token", ".npmrc", "config", "known_hosts"}
	for _, tb := range c.tables {
		for _, e := range tb.pos[KindSecret].all {
			if len(e.segs) == 1 && e.segs[0].kind == segLit {
				names = append(names, e.segs[0].text, strings.ToUpper(e.segs[0].text))
			}
		}
	}
	for _, kind := range []Kind{KindSecret, KindGateConfig, KindRunsLater} {
		for _, name := range names {
			if got, want := c.matchName(kind, name, false), brute(kind, name); got != want {
				t.Errorf("matchName(%v, %q) = %v, trying every entry gives %v", kind, name, got, want)
			}
		}
	}
}
