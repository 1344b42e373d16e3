package checkpoint_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
	"github.com/airlock-dev/airlock/sqlite"
)

// Signing the audit log's head, and checking later that the log still
// holds it: keep the note and the verifier key where the database's holder
// cannot reach them.
func ExampleCheckpointer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "airlock-example")
	defer os.RemoveAll(dir)
	db := sqlite.NewDB(filepath.Join(dir, "airlock.db"))
	if err := db.Open(ctx); err != nil {
		panic(err)
	}
	defer db.Close()
	for range 3 {
		db.Append(ctx, airlock.Record{Events: []airlock.Event{{Kind: airlock.EventPolicyChanged, Payload: []byte(`{}`)}}})
	}

	skey, vkey, _ := note.GenerateKey(rand.Reader, checkpoint.KeyName) // keep skey secret
	checkpoints, err := checkpoint.New(db, skey)
	if err != nil {
		panic(err)
	}
	sc, _, err := checkpoints.Sign(ctx)
	if err != nil {
		panic(err)
	}
	kept := sc.Note // stored elsewhere, with vkey

	// Later: the signature first, then the log.
	keys, _ := checkpoint.ParseVerifierKeys([]string{vkey})
	cp, err := checkpoint.Open([]byte(kept), keys)
	if err != nil {
		panic(err)
	}
	rep, _ := db.Verify(ctx)
	fmt.Println("checkpoint of seq", cp.Seq, "recorded at seq", rep.HeadSeq)
	fmt.Println("the log holds it:", checkpoint.Check(ctx, cp, rep, db.Events) == nil)
	// Output:
	// checkpoint of seq 3 recorded at seq 4
	// the log holds it: true
}
