package hook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/hook"
)

// TestInstallGolden installs Airlock's hook into settings files that hold
// other hooks and keys (testdata/hooks/install/<host>-<case>.json) and
// compares with the .golden file; installing again changes nothing, and
// uninstalling gives back the file as it was (other hooks, keys, order).
func TestInstallGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "hooks", "install", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no install fixtures: %v", err)
	}
	for _, file := range files {
		base := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(base, func(t *testing.T) {
			var host hook.Host
			for _, name := range hook.HostNames() {
				if strings.HasPrefix(base, name+"-") {
					host, _ = hook.Lookup(name)
				}
			}
			if host == nil {
				t.Fatalf("%s names no host", file)
			}
			before, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			e := hook.Entry{Command: "/usr/local/bin/airlock hook " + host.Name(), Timeout: hook.SettingsOf(host).DefaultTimeout}
			after, changed, err := hook.Install(host, before, e)
			got := string(after)
			if err != nil {
				got = "error: " + airlock.ErrorMessage(err) + "\n"
			}
			golden := strings.TrimSuffix(file, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(golden); err != nil || got != string(want) {
				t.Errorf("install into %s:\ngot:\n%s\nwant (%s):\n%s", file, got, golden, want)
			}
			if err != nil {
				return
			}
			if !changed {
				t.Error("install reported no change")
			}
			again, changed, err := hook.Install(host, after, e)
			if err != nil || changed || !bytes.Equal(again, after) {
				t.Errorf("installing twice changed the file (changed=%t, err=%v):\n%s", changed, err, again)
			}
			removed, changed, err := hook.Uninstall(host, after)
			if err != nil || !changed {
				t.Fatalf("uninstall: changed=%t err=%v", changed, err)
			}
			if want := compact(t, before); compact(t, removed) != want && !(want == "" && compact(t, removed) == "{}") {
				if !strings.HasSuffix(base, "-reinstall") {
					t.Errorf("uninstall did not give back the file:\ngot:  %s\nwant: %s", compact(t, removed), want)
				} else if strings.Contains(string(removed), "airlock hook") {
					t.Errorf("uninstall left an Airlock hook:\n%s", removed)
				}
			}
			found, err := hook.Installed(host, removed)
			if err != nil || len(found) != 0 {
				t.Errorf("after uninstall, Installed finds %v (err %v)", found, err)
			}
		})
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	if len(bytes.TrimSpace(b)) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	return buf.String()
}

// TestInstallHTTP writes Claude Code's "type": "http" hook: the token is a
// variable the host fills in from its environment, never written out.
func TestInstallHTTP(t *testing.T) {
	e := hook.Entry{URL: "https://airlock.example.com/v1/hooks/claude-code?hold=9m50s", Timeout: 10 * time.Minute,
		Headers: map[string]string{"Authorization": "Bearer $AIRLOCK_TOKEN"}, AllowedEnvVars: []string{"AIRLOCK_TOKEN"}}
	out, _, err := hook.Install(hook.Claude{}, nil, e)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []map[string]any
		}
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	for _, ev := range hook.SettingsOf(hook.Claude{}).Events {
		g := s.Hooks[ev]
		if len(g) != 1 || g[0].Matcher != "*" || len(g[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", ev, g)
		}
		h := g[0].Hooks[0]
		got := fmt.Sprint(h["type"], " ", h["url"], " ", h["timeout"], " ", h["headers"], " ", h["allowedEnvVars"])
		want := "http https://airlock.example.com/v1/hooks/claude-code?hold=9m50s 600 map[Authorization:Bearer $AIRLOCK_TOKEN] [AIRLOCK_TOKEN]"
		if got != want {
			t.Errorf("%s: got %s, want %s", ev, got, want)
		}
	}
	if removed, _, err := hook.Uninstall(hook.Claude{}, out); err != nil || compact(t, removed) != "{}" {
		t.Errorf("uninstall: %s %v", removed, err)
	}
}
