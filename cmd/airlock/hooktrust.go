package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/hook"
)

// codexConfig is the config.toml where Codex reads the user's hook trust:
// $CODEX_HOME/config.toml (~/.codex by default), for the user's hooks and a
// project's alike.
func codexConfig() (string, error) {
	if d := os.Getenv("CODEX_HOME"); d != "" {
		return filepath.Join(d, "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".codex", "config.toml"), nil
}

// trustHooks records, as Codex does when its user trusts a hook, the trust
// of every Airlock hook in the hooks.json text just written: Codex skips an
// untrusted hook silently and runs the call unchecked.
func trustHooks(cmd *cobra.Command, t hookTarget, text []byte) error {
	if t.host.Name() != "codex" {
		return nil
	}
	hooks, err := hook.CodexOwned(t.path, text)
	if err != nil {
		return checkFailed(fmt.Errorf("airlock: %s: %v", t.path, err))
	}
	path, err := codexConfig()
	if err != nil {
		return checkFailed(fmt.Errorf("airlock: find Codex's config.toml: %v", err))
	}
	old, err := readSettings(path)
	if err != nil {
		return err
	}
	config := old
	for _, h := range hooks {
		key, hash, err := hook.CodexTrust(h)
		if err != nil {
			return checkFailed(fmt.Errorf("airlock: %v", err))
		}
		if hook.CodexTrusted(config, key, hash) {
			continue
		}
		if config, err = hook.TrustCodexHook(config, key, hash); err != nil {
			return checkFailed(fmt.Errorf("airlock: %s: %v (trust the hooks in Codex with /hooks instead)", path, err))
		}
	}
	if string(config) == string(old) {
		return nil
	}
	if _, err := writeSettings(path, old, config); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Codex trusts the hooks: recorded in %s\n", path)
	if t.scope != "user" {
		fmt.Fprintf(cmd.OutOrStdout(), "Codex reads a project's hooks only once the project is trusted (trust_level = \"trusted\" for %s in %s)\n", t.dir, path)
	}
	return nil
}

// untrustHooks removes the trust install recorded for the hooks in the
// hooks.json text about to be removed.
func untrustHooks(cmd *cobra.Command, t hookTarget, text []byte) error {
	if t.host.Name() != "codex" || len(text) == 0 {
		return nil
	}
	hooks, err := hook.CodexOwned(t.path, text)
	if err != nil {
		return nil // nothing of ours can be read there, so nothing to untrust
	}
	path, err := codexConfig()
	if err != nil {
		return nil
	}
	old, err := readSettings(path)
	if err != nil || len(old) == 0 {
		return err
	}
	config := old
	for _, h := range hooks {
		key, _, err := hook.CodexTrust(h)
		if err != nil {
			continue
		}
		if config, _, err = hook.UntrustCodexHook(config, key); err != nil {
			return checkFailed(fmt.Errorf("airlock: %s: %v", path, err))
		}
	}
	if string(config) == string(old) {
		return nil
	}
	_, err = writeSettings(path, old, config)
	return err
}

// checkTrust says why Codex would not run an installed hook, if it would not.
func checkTrust(_ *cobra.Command, t hookTarget, text []byte) error {
	if t.host.Name() != "codex" {
		return nil
	}
	hooks, err := hook.CodexOwned(t.path, text)
	if err != nil {
		return err
	}
	path, err := codexConfig()
	if err != nil {
		return err
	}
	config, err := readSettings(path)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		key, hash, err := hook.CodexTrust(h)
		if err != nil {
			return err
		}
		if !hook.CodexTrusted(config, key, hash) {
			return fmt.Errorf("%s does not trust the %s hook (%s): Codex skips it and runs every call unchecked; "+
				"run airlock hook install codex%s again", path, h.Event, key, scopeArgs(t))
		}
	}
	return nil
}
