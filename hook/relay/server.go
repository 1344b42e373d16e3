package relay

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
)

// Where a hook process (and the airlock CLI) finds the server, and the
// variable that holds its token.
const (
	EnvServer     = "AIRLOCK_SERVER"
	EnvToken      = "AIRLOCK_TOKEN"
	DefaultServer = "http://127.0.0.1:8080"
)

// maxTokenFile bounds what a token file may hold: a secret is 51 bytes.
const maxTokenFile = 4 << 10

// ServerURL checks the server's URL s as from (--server, $AIRLOCK_SERVER)
// gave it, and returns it without a trailing slash. warning is set when a
// token would go to it unencrypted beyond this machine.
func ServerURL(s, from string) (u, warning string, err error) {
	p, err := url.Parse(s)
	switch {
	case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "":
		return "", "", fmt.Errorf("%s %q: want the server's URL, such as %s or https://airlock.example.com", from, s, DefaultServer)
	case p.User != nil:
		return "", "", fmt.Errorf("%s: put no credentials in the URL; the token goes in $%s or --token-file", from, EnvToken)
	}
	if p.Scheme == "http" && !loopback(p.Hostname()) {
		warning = fmt.Sprintf("the token goes unencrypted to %s; use https:// beyond this machine", p.Host)
	}
	return strings.TrimRight(s, "/"), warning, nil
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadTokenFile reads the bearer token in file (--token-file). warning is
// set when other users may read the file.
func ReadTokenFile(file string) (token, warning string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", "", fmt.Errorf("--token-file: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		warning = fmt.Sprintf("%s is readable by other users (mode %04o): chmod 600 %s", file, fi.Mode().Perm(), file)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	switch {
	case err != nil:
		return "", warning, fmt.Errorf("--token-file: %v", err)
	case len(b) > maxTokenFile:
		return "", warning, fmt.Errorf("--token-file %s is too long to hold a token", file)
	}
	token = strings.TrimSpace(string(b))
	if token == "" {
		return "", warning, fmt.Errorf("--token-file %s is empty", file)
	}
	return token, warning, nil
}
