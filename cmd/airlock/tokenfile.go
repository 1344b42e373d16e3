package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// secretFile is the file a new token's secret goes to (token create --out).
// It is made ready before the token exists: its directory is created (0700)
// and a temporary file beside it (0600) is open, so that a directory that
// is missing or not writable stops the command before the server makes a
// token whose secret would be lost. What is left after the token exists —
// writing the secret and renaming it into place — fails rarely, and the
// caller revokes the token, or prints its secret, when it does.
type secretFile struct {
	path string
	tmp  *os.File
}

// prepareSecretFile creates path's directory and a temporary file in it.
func prepareSecretFile(path string) (*secretFile, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory: --out names the file the secret goes to", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the secret file's directory: %w", err)
	}
	// CreateTemp makes the file with mode 0600: the secret is never
	// readable by others, not even for a moment.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("write the secret file: %w", err)
	}
	return &secretFile{path: path, tmp: tmp}, nil
}

// commit writes the secret and puts the file in place, replacing one that
// was there.
func (f *secretFile) commit(secret string) error {
	_, err := f.tmp.WriteString(secret + "\n")
	err = errors.Join(err, f.tmp.Sync(), f.tmp.Close())
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return fmt.Errorf("write the secret to %s: %w", f.path, err)
	}
	return nil
}

// abort removes the temporary file: no token was made.
func (f *secretFile) abort() {
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}
