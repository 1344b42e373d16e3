//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockStore takes the exclusive lock of an SQLite store: a file beside the
// database (airlock.db.lock), locked with flock(2) for as long as the
// server runs. A second server on the same database refuses to start; the
// kernel releases the lock when the process ends, however it ends. It is
// advisory: 'airlock token recover' and the other commands that open the
// database beside a running server do not take it.
func lockStore(db string) (unlock func() error, err error) {
	path := db + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another airlock serve"
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
				who += fmt.Sprintf(" (pid %d)", pid)
			}
			return nil, fmt.Errorf("%s already serves %s (it holds %s): stop it first, "+
				"or give this one another --data; several servers share a PostgreSQL store, not an SQLite one", who, db, path)
		}
		return nil, fmt.Errorf("lock the store: %w", err)
	}
	// Who holds it, for the message of the next one that tries.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f.Close, nil
}
