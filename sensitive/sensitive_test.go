package sensitive

import "testing"

func TestSecret(t *testing.T) {
	tests := []struct {
		p    string
		glob bool
		want string // "" when not a secret
	}{
		{"~/.ssh/id_rsa", false, "credentials"},
		{"/home/u/.aws/credentials", false, "credentials"},
		{"~/.ssh/id_rsa.pub", false, ""},
		{"~/.ssh/known_hosts", false, ""},
		{"/etc/shadow", false, "credentials"},
		{"/etc/passwd", false, ""},
		{"~/.npmrc", false, "credentials"},
		{"~/.bash_history", false, "credentials"},
		{"~/.cargo/credentials.toml", false, "credentials"},
		{"/proc/1/environ", false, "a process's environment"},
		{"/proc/self/environ", false, "a process's environment"},
		{"/proc/1/task/7/environ", false, "a process's environment"},
		{"/proc/self/mem", false, "memory"},
		{"/proc/kcore", false, "memory"},
		{"/dev/mem", false, "memory"},
		{"/dev/sda", false, "a disk device"},
		{"/dev/sda1", false, "a disk device"},
		{"/dev/nvme0n1p2", false, "a disk device"},
		{"/dev/mapper/root", false, "a disk device"},
		{"/dev/disk/by-uuid/1234", false, "a disk device"},
		{"/dev/input/event3", false, "an input or capture device"},
		{"/dev/video0", false, "an input or capture device"},
		{"/dev/null", false, ""},
		{"/dev/stdin", false, ""},
		{"/dev/tty", false, ""},
		{"/dev/shm/x", false, ""},
		{"/dev/sd", false, ""},
		{"/proc/1/root/etc/shadow", false, "credentials"},
		{"/proc/self/root/home/u/.ssh/id_ed25519", false, "credentials"},
		{"/proc/cpuinfo", false, ""},
		{"/proc/1/status", false, ""},
		{"/dev/sd?", true, "a disk device"},
		{"/proc/*/environ", true, "a process's environment"},
		{"~/.ssh/id_*", true, "credentials"},
		{"/tmp/*", true, ""},
		{"README.md", false, ""},
		{"/home/u/project/.env", false, "credentials"},
		{".env.production", false, "credentials"},
		{".env.example", false, ""},
		{".envrc", false, "credentials"}, // its own entry, not .env.*
		{".environment", false, ""},
		{"/home/u/project/.env*", true, "credentials"},
	}
	for _, tc := range tests {
		got, ok := Secret(tc.p, tc.glob)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("Secret(%q, %v) = %q, %v; want %q", tc.p, tc.glob, got, ok, tc.want)
		}
	}
}

func TestSystemPlace(t *testing.T) {
	tests := []struct {
		p    string
		glob bool
		want string // "" when writing p does not change the system
	}{
		{"/", false, "to /"},
		{"/etc/hosts", false, "under /etc"},
		{"/usr/local/bin/x", false, "under /usr"},
		{"~/.bashrc", false, "~/.bashrc"},
		{"/home/u/.ssh/authorized_keys", false, "/home/u/.ssh/authorized_keys"},
		{"/var/tmp/x", false, ""},
		{"/tmp/x", false, ""},
		{"/dev/null", false, ""},
		{"~/project/main.go", false, ""},
		{"/e*/passwd", true, "/e*/passwd"},
		{"~/.b*rc", true, "~/.b*rc"},
		{"/var/tmp/*", true, ""},
		{"~/.gitconfig", false, "~/.gitconfig"},
		{"~/.vimrc", false, "~/.vimrc"},
		{"/home/u/.local/bin/git", false, "/home/u/.local/bin/git"},
		{"~/.config/nvim/init.lua", false, "~/.config/nvim/init.lua"},
		{".git/hooks/pre-commit", false, ".git/hooks/pre-commit"},
		{"/home/u/project/.git/hooks/post-checkout", false, "/home/u/project/.git/hooks/post-checkout"},
		{"/home/u/project/.git/config", false, "/home/u/project/.git/config"},
		{"/home/u/project/.envrc", false, "/home/u/project/.envrc"},
		{"/home/u/project/.gitignore", false, ""},
		{"/home/u/project/bin/build", false, ""},
		{"~/.v*rc", true, "~/.v*rc"},
	}
	for _, tc := range tests {
		got, ok := SystemPlace(tc.p, tc.glob)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("SystemPlace(%q, %v) = %q, %v; want %q", tc.p, tc.glob, got, ok, tc.want)
		}
	}
}

func TestHoldsSecrets(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want bool
	}{
		{"/", true}, {"~", true}, {"/home/u", true}, {"/home", true}, {"/root", true}, {"/etc", true},
		{"~/.config", true}, {"~/.ssh", true}, {"~/.ssh/id_rsa", true}, {"~/.local", true},
		{"~/project", false}, {"/home/u/project/src", false}, {"/tmp", false}, {"/usr/share", false}, {".", false},
	} {
		if got := HoldsSecrets(tc.dir); got != tc.want {
			t.Errorf("HoldsSecrets(%q) = %v, want %v", tc.dir, got, tc.want)
		}
	}
}

func TestSecretVar(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true, "PGPASSWORD": true, "OPENAI_API_KEY": true,
		"DB_PASS": true, "npm_token": true, "STRIPE_KEY": true,
		"PATH": false, "HOME": false, "PWD": false, "OLDPWD": false, "KEYBOARD": false, "NODE_ENV": false,
	} {
		if got := SecretVar(name); got != want {
			t.Errorf("SecretVar(%q) = %v, want %v", name, got, want)
		}
	}
}
