package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/checkpoint"
	airlockhttp "github.com/airlock-dev/airlock/http"
)

// TestCheckpointKeyFile: the key is made with mode 0600 at first start,
// printed as its verifier key, and the same after a restart.
func TestCheckpointKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.key")
	m, out, err := runMain(t, dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	vkey := m.Checkpoints.VerifierKey()
	m.Close()
	if !strings.Contains(out, "Airlock made a key to sign audit checkpoints: "+path+" (mode 0600).") || !strings.Contains(out, "    "+vkey+"\n") {
		t.Errorf("first start printed:\n%s\nwant the new key's file and verifier key %s", out, vkey)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("key file mode %04o, want %04o", got, want)
	}
	b, _ := os.ReadFile(path)
	if _, got, err := checkpoint.ParseSignerKey(strings.TrimSpace(string(b))); err != nil || got != vkey {
		t.Errorf("the key file holds %q (%v), want the signer of %s", got, err, vkey)
	}

	m, out, err = runMain(t, dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Checkpoints.VerifierKey(); got != vkey {
		t.Errorf("after a restart the verifier key is %s, want %s", got, vkey)
	}
	if !strings.Contains(out, "Audit checkpoints are signed with "+path+".") || !strings.Contains(out, vkey) {
		t.Errorf("restart printed:\n%s\nwant the same key, not created", out)
	}
}

// TestCheckpointKeyRefused: a key other users may read or write, or one
// that is not a key, stops the server, and is never replaced.
func TestCheckpointKeyRefused(t *testing.T) {
	skey, _ := airlocktest.CheckpointKey(t, 1)
	for _, tt := range []struct {
		name    string
		content string
		mode    os.FileMode
		says    string
	}{
		{"group readable", skey, 0o640, "may be read or written by other users (mode 0640): whoever reads it can sign checkpoints. Run: chmod 600"},
		{"world readable", skey, 0o604, "(mode 0604)"},
		{"group writable", skey, 0o620, "(mode 0620)"},
		{"malformed", "PRIVATE+KEY+airlock+00000000+AAAA\n", 0o600, "is malformed"},
		{"empty", "", 0o600, "is malformed"},
		{"a verifier key", "airlock+12345678+AQID\n", 0o600, "is malformed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "checkpoint.key")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, _, err := runMain(t, dir, "127.0.0.1:0")
			if err == nil || !strings.Contains(err.Error(), "checkpoint key "+path) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("start: %v, want a refusal saying %q", err, tt.says)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("the key file was changed to %q", b)
			}
		})
	}
	t.Run("a directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "checkpoint.key"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := runMain(t, dir, "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("start: %v", err)
		}
	})
}

// TestE2ECheckpoint takes a checkpoint with the CLI, then attacks the
// database as its holder could: plain verify still says ok, verify
// --checkpoint names the truncation or the rewrite.
func TestE2ECheckpoint(t *testing.T) {
	dir := t.TempDir()
	m, admin := startMain(t, dir, "127.0.0.1:0")
	t.Cleanup(func() { m.Close() })
	e := &e2e{main: m, url: m.URL(), admin: admin}
	e.agent = e.token(t, "--role", "agent", "--agent", "coder-1")
	e.bob = e.token(t, "--role", "reviewer", "--name", "bob")
	for i := range 5 {
		e.client(e.agent).Enforce(t.Context(), action("read_file", fmt.Sprint("f", i)))
	}

	if out := e.cli(t, e.bob, exitCheck, "audit", "checkpoint"); !strings.Contains(out, "no checkpoint yet") {
		t.Errorf("before any checkpoint: %s", out)
	}
	if out := e.cli(t, e.agent, exitCheck, "audit", "checkpoint"); !strings.Contains(out, "unauthorized: agent:coder-1 may not read the audit checkpoint") {
		t.Errorf("an agent reading the checkpoint: %s", out)
	}
	if out := e.cli(t, e.bob, exitCheck, "audit", "checkpoint", "--new"); !strings.Contains(out, "may not sign an audit checkpoint") {
		t.Errorf("a reviewer signing: %s", out)
	}
	note := e.cli(t, e.admin, exitOK, "audit", "checkpoint", "--new")
	if got := e.cli(t, e.bob, exitOK, "audit", "checkpoint"); got != note {
		t.Errorf("the latest checkpoint %q, want the one just signed %q", got, note)
	}
	var ci airlockhttp.CheckpointInfo
	if err := json.Unmarshal([]byte(e.cli(t, e.bob, exitOK, "audit", "checkpoint", "--json")), &ci); err != nil {
		t.Fatal(err)
	}
	if ci.Key != m.Checkpoints.VerifierKey() || ci.Checkpoint == nil || ci.Checkpoint.Note != note {
		t.Fatalf("checkpoint --json: %+v", ci)
	}
	cp := ci.Checkpoint.Checkpoint
	files := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cpFile := write("checkpoint.note", note)
	keyFile := write("airlock.vkey", "# the production server\n"+ci.Key+"\n")
	holds := fmt.Sprintf("checkpoint %s: ok: the log holds seq %d sha256:%s\n", cpFile, cp.Seq, cp.Hash)

	// Against the server, with its own key or with the one kept.
	out := e.cli(t, e.bob, exitOK, "audit", "verify", "--checkpoint", cpFile)
	if !strings.Contains(out, holds) || !strings.Contains(out, "with the server's verifier key "+ci.Key) {
		t.Errorf("verify --checkpoint:\n%s\nwant %q", out, holds)
	}
	if out := e.cli(t, e.bob, exitOK, "audit", "verify", "--checkpoint", cpFile, "--key-file", keyFile); !strings.Contains(out, holds) {
		t.Errorf("verify --checkpoint --key-file:\n%s", out)
	}
	_, other := airlocktest.CheckpointKey(t, 9)
	if out := e.cli(t, e.bob, exitCheck, "audit", "verify", "--checkpoint", cpFile, "--key", other); !strings.Contains(out,
		"checkpoint "+cpFile+": wrong key: the checkpoint is signed by airlock (key hash") {
		t.Errorf("another key:\n%s", out)
	}
	forged := write("forged.note", strings.Replace(note, fmt.Sprintf("\n%d\n", cp.Seq), fmt.Sprintf("\n%d\n", cp.Seq-1), 1))
	if out := e.cli(t, e.bob, exitCheck, "audit", "verify", "--checkpoint", forged); !strings.Contains(out,
		"checkpoint "+forged+": bad signature: the checkpoint was changed after airlock") {
		t.Errorf("a changed checkpoint:\n%s", out)
	}
	e.cli(t, e.bob, exitUsage, "audit", "verify", "--checkpoint", filepath.Join(files, "missing.note"))
	e.cli(t, e.bob, exitUsage, "audit", "verify", "--key", other)
	e.cli(t, e.bob, exitUsage, "audit", "verify", "--checkpoint", cpFile, "--key", "not-a-key")

	// The log moves on; stopping signs a last checkpoint. The database file
	// then stands alone.
	e.client(e.agent).Enforce(t.Context(), action("read_file", "after"))
	db := m.Config.Store.Path
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	wantRun(t, []string{"audit", "verify", "--db", db, "--checkpoint", cpFile}, exitUsage, "needs the verifier key")
	_, last, _ := runCLI(t, "audit", "checkpoint", "--db", db)
	keys, _ := checkpoint.ParseVerifierKeys([]string{ci.Key})
	if got, err := checkpoint.Open([]byte(last), keys); err != nil || got.Seq <= cp.Seq {
		t.Errorf("the checkpoint signed at shutdown %+v (%v), want one after seq %d", got, err, cp.Seq)
	}

	for _, tt := range []struct {
		name    string
		sql     string
		rechain int64
		want    string
	}{
		{"untouched", "", 0, holds},
		{"truncated", fmt.Sprintf("DELETE FROM events WHERE seq > %d", cp.Seq-2), 0,
			fmt.Sprintf("checkpoint %s: log truncated: head seq %d < checkpoint seq %d\n", cpFile, cp.Seq-2, cp.Seq)},
		{"rewritten and re-chained", fmt.Sprintf("UPDATE events SET agent = 'someone-else' WHERE seq = %d", cp.Seq-3), cp.Seq - 3,
			fmt.Sprintf("checkpoint %s: log rewritten: seq %d hash sha256:", cpFile, cp.Seq)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := copyDB(t, db)
			if tt.sql != "" {
				airlocktest.TamperSQLite(t, path, tt.sql)
			}
			if tt.rechain > 0 {
				airlocktest.RechainSQLite(t, path, tt.rechain)
			}
			code, stdout, _ := runCLI(t, "audit", "verify", "--db", path)
			if code != exitOK || !strings.HasPrefix(stdout, "ok: ") {
				t.Fatalf("plain verify: exit %d: %s, want ok: the chain alone looks intact", code, stdout)
			}
			code, stdout, stderr := runCLI(t, "audit", "verify", "--db", path, "--checkpoint", cpFile, "--key-file", keyFile)
			if want := map[bool]int{true: exitOK, false: exitCheck}[tt.want == holds]; code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			if !strings.HasPrefix(stdout, "ok: ") || !strings.Contains(stdout, tt.want) {
				t.Errorf("verify --checkpoint:\n%s%s\nwant %q", stdout, stderr, tt.want)
			}
			if tt.rechain > 0 && !strings.Contains(stdout, fmt.Sprintf(" differs from the checkpoint's sha256:%s\n", cp.Hash)) {
				t.Errorf("the rewrite does not name the checkpoint's hash:\n%s", stdout)
			}
		})
	}

	// --json: the chain report with a result per checkpoint.
	path := copyDB(t, db)
	airlocktest.TamperSQLite(t, path, fmt.Sprintf("DELETE FROM events WHERE seq > %d", cp.Seq-1))
	code, stdout, _ := runCLI(t, "audit", "verify", "--db", path, "--checkpoint", cpFile, "--key", ci.Key, "--json")
	var rep struct {
		airlock.ChainReport
		Checkpoints []checkpointResult `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitCheck {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	if len(rep.Checkpoints) != 1 || rep.HeadSeq != cp.Seq-1 || rep.Checkpoints[0].OK || rep.Checkpoints[0].Kind != checkpoint.Truncated ||
		rep.Checkpoints[0].Seq != cp.Seq || *rep.Checkpoints[0].Hash != cp.Hash {
		t.Errorf("verify --json: %s", stdout)
	}
}

// copyDB copies a closed database file (and any WAL beside it).
func copyDB(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		in, err := os.Open(path + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(dst + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
	return dst
}
