package passkey

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/airlock-dev/airlock"
)

// LogReport is what VerifyLog found: how many passkey-bound approvals it
// checked, and the first that failed.
type LogReport struct {
	// Approvals is how many approvals carried a passkey assertion, and
	// verified up to the first bad one.
	Approvals int64 `json:"approvals"`
	// FirstBad is the sequence number of the first approval whose
	// assertion did not verify, 0 when all did; Problem says why.
	FirstBad int64  `json:"first_bad,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

// OK reports whether every passkey-bound approval verified.
func (r LogReport) OK() bool { return r.FirstBad == 0 }

// key is a registered passkey as the log tells it.
type key struct {
	reviewer string
	public   []byte
}

// VerifyLog walks the audit log through events, in sequence order, and
// checks every approval that carries a passkey assertion (approval.voted,
// approval.resolved): signed by a passkey the log registered to the
// person who approved, before the approval and not removed since, over
// exactly that approval's challenge (Verify). It needs nothing but the
// log: the registrations carry the public keys.
func VerifyLog(ctx context.Context, events func(context.Context, airlock.EventFilter) ([]airlock.Event, error)) (LogReport, error) {
	var rep LogReport
	keys := map[string]key{} // by credential ID
	for after := int64(0); ; {
		evs, err := events(ctx, airlock.EventFilter{AfterSeq: after, Limit: airlock.MaxPageSize})
		if err != nil {
			return rep, err
		}
		for _, e := range evs {
			if problem := checkEvent(&e, keys); problem != "" {
				rep.FirstBad, rep.Problem = e.Seq, problem
				return rep, nil
			} else if carriesPasskey(&e) {
				rep.Approvals++
			}
		}
		if len(evs) < airlock.MaxPageSize {
			return rep, nil
		}
		after = evs[len(evs)-1].Seq
	}
}

// carriesPasskey reports whether an approval event carries an assertion.
func carriesPasskey(e *airlock.Event) bool {
	return (e.Kind == airlock.EventApprovalVoted || e.Kind == airlock.EventApprovalResolved) && bytes.Contains(e.Payload, []byte(`"passkey":`))
}

// checkEvent takes a passkey registration or removal into keys, or checks
// an approval's assertion; it returns what is wrong, "" when nothing is.
func checkEvent(e *airlock.Event, keys map[string]key) string {
	switch e.Kind {
	case airlock.EventPasskeyRegistered, airlock.EventPasskeyRemoved:
		var p airlock.PasskeyRegistered
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return "a passkey event that does not read: " + err.Error()
		}
		if e.Kind == airlock.EventPasskeyRegistered {
			keys[string(p.CredentialID)] = key{reviewer: p.Reviewer, public: p.PublicKey}
		} else {
			delete(keys, string(p.CredentialID))
		}
	case airlock.EventApprovalVoted:
		var v airlock.ApprovalVote
		if err := json.Unmarshal(e.Payload, &v); err != nil {
			return "an approval that does not read: " + err.Error()
		}
		if v.Passkey != nil {
			return checkAssertion(v.Passkey, keys, v.By, v.ID, v.ActionHash)
		}
	case airlock.EventApprovalResolved:
		var c airlock.ApprovalChange
		if err := json.Unmarshal(e.Payload, &c); err != nil {
			return "an approval that does not read: " + err.Error()
		}
		if c.Passkey != nil {
			h := c.ActionHash
			if c.Edit != nil {
				h = c.Edit.To // the reviewer approved the edit
			}
			return checkAssertion(c.Passkey, keys, c.By, c.ID, h)
		}
	}
	return ""
}

func checkAssertion(a *airlock.PasskeyAssertion, keys map[string]key, by, id string, h airlock.Hash) string {
	k, ok := keys[string(a.CredentialID)]
	switch {
	case !ok:
		return fmt.Sprintf("%s's approval of %s is signed by a passkey the log never registered (or removed before it)", by, id)
	case k.reviewer != by:
		return fmt.Sprintf("%s's approval of %s is signed by %s's passkey", by, id, k.reviewer)
	}
	if err := Verify(a, k.public, id, h); err != nil {
		return fmt.Sprintf("%s's passkey approval of %s (sha256:%s) does not verify: %v", by, id, h, err)
	}
	return ""
}
