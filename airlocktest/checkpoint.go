package airlocktest

import (
	"bytes"
	"testing"

	"github.com/airlock-dev/airlock/checkpoint"
	"golang.org/x/mod/sumdb/note"
)

// CheckpointKey returns a checkpoint signer key and its verifier key, the
// same for the same seed, so that tests can make several distinct keys.
func CheckpointKey(tb testing.TB, seed byte) (skey, vkey string) {
	tb.Helper()
	skey, vkey, err := note.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)), checkpoint.KeyName)
	if err != nil {
		tb.Fatal(err)
	}
	return skey, vkey
}
