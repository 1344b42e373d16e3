package passkey_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/passkey"
)

const origin = "https://airlock.example.com"

// device is a passkey authenticator in Go: an ES256 key and what a
// browser would send of its assertions. (The browser tests use Chromium's
// own virtual authenticator; this one lets a test bend what it sends.)
type device struct {
	key  *ecdsa.PrivateKey
	id   []byte
	cred airlock.PasskeyCredential
	uv   bool   // the user was verified
	orig string // the origin the browser reports
	sign uint32
}

func newDevice(t testing.TB, reviewer string) *device {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256), XCoord: k.X.FillBytes(make([]byte, 32)), YCoord: k.Y.FillBytes(make([]byte, 32)),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	wc := webauthn.Credential{ID: id, PublicKey: pub, AttestationType: "none",
		Flags: webauthn.CredentialFlags{UserPresent: true, UserVerified: true}}
	raw, err := json.Marshal(wc)
	if err != nil {
		t.Fatal(err)
	}
	return &device{key: k, id: id, uv: true, orig: origin, cred: airlock.PasskeyCredential{
		ID: id, Reviewer: reviewer, PublicKey: pub, Credential: raw, Created: time.Now()}}
}

// assert answers navigator.credentials.get with these options, as the
// browser's JSON of the PublicKeyCredential.
func (d *device) assert(t testing.TB, options json.RawMessage) json.RawMessage {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RPID      string `json:"rpId"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &o); err != nil {
		t.Fatal(err)
	}
	cd, _ := json.Marshal(map[string]any{"type": "webauthn.get", "challenge": o.PublicKey.Challenge, "origin": d.orig, "crossOrigin": false})
	rp := sha256.Sum256([]byte(o.PublicKey.RPID))
	flags := byte(0x01) // user present
	if d.uv {
		flags |= 0x04
	}
	d.sign++
	auth := append(append(rp[:], flags), binary.BigEndian.AppendUint32(nil, d.sign)...)
	digest := sha256.Sum256(append(append([]byte(nil), auth...), sha256Sum(cd)...))
	sig, err := ecdsa.SignASN1(rand.Reader, d.key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	out, _ := json.Marshal(map[string]any{
		"id": b64(d.id), "rawId": b64(d.id), "type": "public-key", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"authenticatorData": b64(auth), "clientDataJSON": b64(cd), "signature": b64(sig),
			"userHandle": b64(passkey.UserHandle(d.cred.Reviewer))},
	})
	return out
}

func sha256Sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func newRP(t testing.TB) *passkey.RP {
	t.Helper()
	rp, err := passkey.New(origin)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

var hash = airlock.Hash{1, 2, 3}

const requestID = "01a2233b-0000-7000-8000-000000000001"

// approve runs both steps of reviewer's approval with dev.
func approve(t testing.TB, rp *passkey.RP, dev *device, id string, h airlock.Hash) (*airlock.PasskeyAssertion, error) {
	t.Helper()
	creds := []airlock.PasskeyCredential{dev.cred}
	options, nonce, err := rp.BeginApproval(dev.cred.Reviewer, creds, id, h)
	if err != nil {
		t.Fatal(err)
	}
	return rp.FinishApproval(dev.cred.Reviewer, creds, id, h, nonce, dev.assert(t, options))
}

// TestApproval: an assertion over this approval's challenge, by the
// reviewer's device with the user verified, at the inbox's origin, is
// accepted and verifies offline; one for another request or action, from
// another origin, without user verification, or by another person's
// device is refused; any change to the kept assertion fails its check.
func TestApproval(t *testing.T) {
	rp := newRP(t)
	bob := newDevice(t, "bob")
	a, err := approve(t, rp, bob, requestID, hash)
	if err != nil {
		t.Fatal(err)
	}
	if err := passkey.Verify(a, bob.cred.PublicKey, requestID, hash); err != nil {
		t.Fatalf("the kept assertion does not verify: %v", err)
	}

	// The browser signs the challenge it was given; the server checks it
	// against the approval it finishes.
	creds := []airlock.PasskeyCredential{bob.cred}
	options, nonce, _ := rp.BeginApproval("bob", creds, requestID, hash)
	answer := bob.assert(t, options)
	other := hash
	other[31] = 9
	if _, err := rp.FinishApproval("bob", creds, requestID, other, nonce, answer); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Errorf("an assertion for another action: %v", err)
	}
	if _, err := rp.FinishApproval("bob", creds, "01a2233b-0000-7000-8000-000000000002", hash, nonce, answer); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Errorf("an assertion for another request: %v", err)
	}
	carol := newDevice(t, "carol")
	if _, err := rp.FinishApproval("carol", []airlock.PasskeyCredential{carol.cred}, requestID, hash, nonce, answer); err == nil {
		t.Error("bob's assertion approved as carol")
	}
	for name, bend := range map[string]func(*device){
		"another origin":       func(d *device) { d.orig = "https://evil.example" },
		"no user verification": func(d *device) { d.uv = false },
	} {
		d := newDevice(t, "bob")
		bend(d)
		if _, err := approve(t, rp, d, requestID, hash); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
	}
	if _, _, err := rp.BeginApproval("dana", nil, requestID, hash); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Errorf("a reviewer without a passkey: %v", err)
	}

	for name, bend := range map[string]func(*airlock.PasskeyAssertion){
		"signature":          func(a *airlock.PasskeyAssertion) { a.Signature[len(a.Signature)-1] ^= 1 },
		"authenticator data": func(a *airlock.PasskeyAssertion) { a.AuthenticatorData[36] ^= 1 },
		"nonce":              func(a *airlock.PasskeyAssertion) { a.Nonce[0] ^= 1 },
		"client data": func(a *airlock.PasskeyAssertion) {
			a.ClientDataJSON = []byte(strings.Replace(string(a.ClientDataJSON), "webauthn.get", "webauthn.create", 1))
		},
	} {
		c := *a
		c.Signature, c.AuthenticatorData, c.Nonce = clone(a.Signature), clone(a.AuthenticatorData), clone(a.Nonce)
		bend(&c)
		if err := passkey.Verify(&c, bob.cred.PublicKey, requestID, hash); err == nil {
			t.Errorf("a changed %s verifies", name)
		}
	}
	if err := passkey.Verify(a, carol.cred.PublicKey, requestID, hash); err == nil {
		t.Error("bob's assertion verifies with carol's key")
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// TestVerifyLog: the log's passkey-bound approvals verify against the
// keys it registered; an approval signed by a key registered to someone
// else, or removed before it, is named by its sequence number.
func TestVerifyLog(t *testing.T) {
	rp := newRP(t)
	bob, carol := newDevice(t, "bob"), newDevice(t, "carol")
	a, err := approve(t, rp, bob, requestID, hash)
	if err != nil {
		t.Fatal(err)
	}
	reg := func(d *device, kind string) airlock.Event {
		return airlock.NewEvent(kind, nil, "", "", airlock.PasskeyRegistered{Reviewer: d.cred.Reviewer, CredentialID: d.id, PublicKey: d.cred.PublicKey})
	}
	vote := func(by string) airlock.Event {
		return airlock.NewEvent(airlock.EventApprovalVoted, nil, "approved", requestID, airlock.ApprovalVote{
			ID: requestID, Status: airlock.StatusApproved, ActionHash: hash, By: by, Passkey: a})
	}
	for _, tc := range []struct {
		name    string
		log     []airlock.Event
		bad     int64
		problem string
	}{
		{"registered, then approved", []airlock.Event{reg(bob, airlock.EventPasskeyRegistered), vote("bob")}, 0, ""},
		{"approved before the key was registered", []airlock.Event{vote("bob"), reg(bob, airlock.EventPasskeyRegistered)}, 1, "never registered"},
		{"removed before it approved", []airlock.Event{reg(bob, airlock.EventPasskeyRegistered), reg(bob, airlock.EventPasskeyRemoved), vote("bob")}, 3, "never registered"},
		{"carol's vote with bob's key", []airlock.Event{reg(bob, airlock.EventPasskeyRegistered), reg(carol, airlock.EventPasskeyRegistered), vote("carol")}, 3, "bob's passkey"},
	} {
		for i := range tc.log {
			tc.log[i].Seq = int64(i + 1)
		}
		rep, err := passkey.VerifyLog(context.Background(), func(_ context.Context, f airlock.EventFilter) ([]airlock.Event, error) {
			return tc.log[min(int(f.AfterSeq), len(tc.log)):], nil
		})
		if err != nil || rep.FirstBad != tc.bad || !strings.Contains(rep.Problem, tc.problem) {
			t.Errorf("%s: %+v, %v; want first bad %d (%q)", tc.name, rep, err, tc.bad, tc.problem)
		}
	}
}
