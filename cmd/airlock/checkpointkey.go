package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
)

// maxKeyFile bounds what a key file may hold: a signer key is 85 bytes.
const maxKeyFile = 4 << 10

// openCheckpoints loads the checkpoint key (making one at first start) and
// returns the checkpointer that signs log's head with it. It prints the
// verifier key: a person keeps it with the checkpoints.
func (m *Main) openCheckpoints(log airlock.AuditLog) (*checkpoint.Checkpointer, error) {
	path := m.Config.keyFile()
	skey, created, err := loadCheckpointKey(path)
	if err != nil {
		return nil, err
	}
	c, err := checkpoint.New(log, skey)
	if err != nil {
		return nil, fmt.Errorf("checkpoint key %s: %w", path, err)
	}
	c.Logger = m.Logger.With("component", "checkpoint")
	what := "Audit checkpoints are signed with " + path + "."
	if created {
		what = "Airlock made a key to sign audit checkpoints: " + path + " (mode 0600)."
	}
	fmt.Fprintf(m.Stdout, `
%s
Keep its verifier key with the checkpoints you store, to verify them later:

    %s

`, what, c.VerifierKey())
	m.Logger.Info("audit checkpoints", "key_file", path, "verifier_key", c.VerifierKey(), "created", created)
	return c, nil
}

// loadCheckpointKey returns the signer key in path, making a new one (mode
// 0600) when there is no file; created reports that it did. It never
// replaces a file, and refuses one that other users may read or write, or
// that does not hold a key.
func loadCheckpointKey(path string) (skey string, created bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		skey, err := createCheckpointKey(path)
		return skey, err == nil, err
	}
	if err != nil {
		return "", false, fmt.Errorf("checkpoint key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return "", false, fmt.Errorf("checkpoint key: %w", err)
	case !fi.Mode().IsRegular():
		return "", false, fmt.Errorf("checkpoint key %s is not a regular file", path)
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0:
		return "", false, fmt.Errorf("checkpoint key %s may be read or written by other users (mode %04o): "+
			"whoever reads it can sign checkpoints. Run: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", false, fmt.Errorf("checkpoint key: %w", err)
	}
	skey = strings.TrimSpace(string(b))
	if len(b) > maxKeyFile {
		err = errors.New("too long")
	} else {
		_, _, err = checkpoint.ParseSignerKey(skey)
	}
	if err != nil {
		return "", false, fmt.Errorf("checkpoint key %s is malformed (%v). Airlock never replaces a key: restore it "+
			"from a backup, or move it away for a new one to be made at the next start (checkpoints signed "+
			"with the old key still verify with its verifier key)", path, err)
	}
	return skey, false, nil
}

// createCheckpointKey writes a new key to path, which must not exist: a
// temporary file (mode 0600), synced, then linked to path, so that path
// never holds half a key and an existing file is never replaced.
func createCheckpointKey(path string) (string, error) {
	skey, _, err := note.GenerateKey(rand.Reader, checkpoint.KeyName)
	if err != nil {
		return "", fmt.Errorf("create checkpoint key: %w", err)
	}
	err = writeFileVia(path, func(w io.Writer) error {
		_, err := io.WriteString(w, skey+"\n")
		return err
	}, os.Link)
	if err != nil {
		return "", fmt.Errorf("create checkpoint key: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync() // the new name survives a crash
		d.Close()
	}
	return skey, nil
}
