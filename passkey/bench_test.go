package passkey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/sqlite"
)

// BenchmarkApproval measures a person's approval on the server, durable
// on SQLite: plain, the store's resolution alone; passkey, that and both
// steps of the passkey ceremony on the server (the reviewer's passkeys
// read for each, the options made, the assertion checked) — the device's
// signature, which is the browser's, is left out of the time. The goal:
// passkey at most 1.5× plain (docs/BENCHMARKS.md).
func BenchmarkApproval(b *testing.B) {
	for _, withPasskey := range []bool{false, true} {
		name := "plain"
		if withPasskey {
			name = "passkey"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			db := sqlite.NewDB(filepath.Join(b.TempDir(), "a.db"))
			if err := db.Open(ctx); err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			rp := newRP(b)
			dev := newDevice(b, "rev")
			code := airlock.HashTokenSecret("pk_bench")
			now := dev.cred.Created
			if err := db.CreateEnrolment(ctx, airlock.PasskeyEnrolment{Code: code, Reviewer: "rev", By: "ops", Created: now, Expires: now.Add(1 << 40)}, airlock.Record{}); err != nil {
				b.Fatal(err)
			}
			if err := db.RegisterPasskey(ctx, code, dev.cred, airlock.Record{}); err != nil {
				b.Fatal(err)
			}
			aps := make([]airlock.Approval, b.N)
			for i := range aps {
				ap := airlocktest.NewApproval("a", fmt.Sprint("release ", i), airlock.Ask, 1<<40)
				ap.Review.Passkey = withPasskey
				var err error
				if aps[i], _, err = db.RequestApproval(ctx, ap, airlock.Record{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range aps {
				r := airlocktest.Approve(aps[i])
				if withPasskey {
					creds, err := db.Passkeys(ctx, "rev")
					if err != nil {
						b.Fatal(err)
					}
					options, nonce, err := rp.BeginApproval("rev", creds, aps[i].ID, aps[i].ActionHash)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					answer := dev.assert(b, options)
					b.StartTimer()
					if creds, err = db.Passkeys(ctx, "rev"); err != nil {
						b.Fatal(err)
					}
					if r.Passkey, err = rp.FinishApproval("rev", creds, aps[i].ID, aps[i].ActionHash, nonce, json.RawMessage(answer)); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := db.ResolveApproval(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
