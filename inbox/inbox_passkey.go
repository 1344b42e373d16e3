package inbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/passkey"
)

// PasskeysPage lists the signed-in person's passkeys and registers one.
type PasskeysPage struct {
	Base
	Passkeys []airlock.PasskeyCredential
	// Enabled is false when the server has no inbox URL to bind passkeys
	// to (notifications.inbox_url).
	Enabled bool
	Done    string
}

// CredentialID is a passkey's ID as the page writes it (base64url).
func CredentialID(c airlock.PasskeyCredential) string {
	return base64.RawURLEncoding.EncodeToString(c.ID)
}

// passkeys lists the person's passkeys.
func (in *inbox) passkeys(w http.ResponseWriter, r *http.Request) {
	t := principalFrom(r.Context())
	cs, err := in.host.Store().Passkeys(r.Context(), t.Reviewer().Name)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	in.render(w, http.StatusOK, "passkeys", &PasskeysPage{Base: baseFor(r, "Passkeys"), Passkeys: cs,
		Enabled: in.host.Passkeys() != nil, Done: r.URL.Query().Get("done")})
}

// jsonAnswer writes v as the answer of a passkey ceremony's step.
func jsonAnswer(w http.ResponseWriter, status int, v any) {
	secure(w)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// jsonRefusal answers a ceremony's step that failed: what was wrong.
func jsonRefusal(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	switch airlock.ErrorCode(err) {
	case airlock.ENOTFOUND:
		status = http.StatusNotFound
	case airlock.EUNAUTHORIZED:
		status = http.StatusForbidden
	case airlock.ECONFLICT:
		status = http.StatusConflict
	case airlock.EUNAVAILABLE, airlock.EINTERNAL:
		status = http.StatusServiceUnavailable
	}
	jsonAnswer(w, status, map[string]string{"error": airlock.ErrorMessage(err)})
}

// form reads a ceremony step's form.
func form(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		return airlock.Errorf(airlock.EINVALID, "the form could not be read: %v", err)
	}
	return nil
}

// enrolmentCode is the hash of the enrolment code a form carries.
func enrolmentCode(r *http.Request) (airlock.Hash, error) {
	code := strings.TrimSpace(r.PostForm.Get("code"))
	if code == "" {
		return airlock.Hash{}, airlock.Errorf(airlock.EINVALID, "enter the enrolment code an admin gave you (airlock reviewers enrol NAME)")
	}
	return airlock.HashTokenSecret(code), nil
}

// enrolment reads a registration step's form: the relying party, the
// person signed in and their passkeys, and the live enrolment its code
// names, which must be theirs (a refusal otherwise is audited).
func (in *inbox) enrolment(w http.ResponseWriter, r *http.Request) (*passkey.RP, airlock.PasskeyEnrolment, []airlock.PasskeyCredential, error) {
	ctx := r.Context()
	rp := in.host.Passkeys()
	if rp == nil {
		return nil, airlock.PasskeyEnrolment{}, nil, airlock.Errorf(airlock.EINVALID, "this server binds no passkeys: it has no inbox URL (notifications.inbox_url)")
	}
	if err := form(w, r); err != nil {
		return nil, airlock.PasskeyEnrolment{}, nil, err
	}
	code, err := enrolmentCode(r)
	if err != nil {
		return nil, airlock.PasskeyEnrolment{}, nil, err
	}
	e, err := in.host.Store().StartEnrolment(ctx, code, nil)
	if err != nil {
		return nil, e, nil, err
	}
	who := principalFrom(ctx).Reviewer().Name
	if e.Reviewer != who {
		err := airlock.Errorf(airlock.EUNAUTHORIZED, "this enrolment code is for %s, and you are signed in as %s", e.Reviewer, who)
		in.host.Refuse(ctx, principalFrom(ctx), "passkey enrolment", airlock.EUNAUTHORIZED, airlock.ErrorMessage(err))
		return nil, e, nil, err
	}
	existing, err := in.host.Store().Passkeys(ctx, who)
	return rp, e, existing, err
}

// passkeyBegin starts registering a passkey with an enrolment code: the
// options for navigator.credentials.create.
func (in *inbox) passkeyBegin(w http.ResponseWriter, r *http.Request) {
	rp, e, existing, err := in.enrolment(w, r)
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	options, session, err := rp.BeginRegistration(e.Reviewer, existing)
	if err == nil {
		_, err = in.host.Store().StartEnrolment(r.Context(), e.Code, session)
	}
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	jsonAnswer(w, http.StatusOK, map[string]json.RawMessage{"options": options})
}

// passkeyFinish registers the passkey the browser made, with its
// enrolment code, once: audited with the passkey's public key.
func (in *inbox) passkeyFinish(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rp, e, existing, err := in.enrolment(w, r)
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	who, code, st := e.Reviewer, e.Code, in.host.Store()
	name := strings.TrimSpace(r.PostForm.Get("name"))
	c, err := rp.FinishRegistration(who, existing, e.Session, json.RawMessage(r.PostForm.Get("response")), name, time.Now())
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	ev := airlock.NewEvent(airlock.EventPasskeyRegistered, nil, "", "", airlock.PasskeyRegistered{
		Reviewer: who, CredentialID: c.ID, PublicKey: c.PublicKey, Name: c.Name,
	})
	if err := st.RegisterPasskey(ctx, code, c, airlock.Record{Events: []airlock.Event{ev}}); err != nil {
		jsonRefusal(w, err)
		return
	}
	jsonAnswer(w, http.StatusOK, map[string]string{"id": CredentialID(c), "next": "/inbox/passkeys?done=" + url.QueryEscape("registered "+name)})
}

// passkeyRemove removes one of the person's passkeys.
func (in *inbox) passkeyRemove(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := form(w, r); err != nil {
		in.fail(w, r, http.StatusBadRequest, "Not removed", airlock.ErrorMessage(err))
		return
	}
	id, err := base64.RawURLEncoding.DecodeString(r.PostForm.Get("id"))
	if err != nil || len(id) == 0 {
		in.fail(w, r, http.StatusBadRequest, "Not removed", "The form names no passkey.")
		return
	}
	who := principalFrom(ctx).Reviewer().Name
	cs, err := in.host.Store().Passkeys(ctx, who)
	if err != nil {
		in.storeFail(w, r, err)
		return
	}
	var found *airlock.PasskeyCredential
	for i := range cs {
		if bytes.Equal(cs[i].ID, id) {
			found = &cs[i]
		}
	}
	if found == nil {
		in.fail(w, r, http.StatusNotFound, "Not removed", "You have no such passkey.")
		return
	}
	ev := airlock.NewEvent(airlock.EventPasskeyRemoved, nil, "", "", airlock.PasskeyRegistered{
		Reviewer: who, CredentialID: found.ID, PublicKey: found.PublicKey, Name: found.Name, By: who,
	})
	if err := in.host.Store().RemovePasskey(ctx, who, id, airlock.Record{Events: []airlock.Event{ev}}); err != nil {
		in.storeFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/inbox/passkeys?done="+url.QueryEscape("removed "+found.Name), http.StatusSeeOther)
}

// approvalPasskey starts the person's passkey approval of a request: the
// options for navigator.credentials.get, whose challenge commits to the
// request's ID and the hash of the action approved (the edit's, when the
// form carries one), and the nonce the approval brings back.
func (in *inbox) approvalPasskey(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rp := in.host.Passkeys()
	if rp == nil {
		jsonRefusal(w, airlock.Errorf(airlock.EINVALID, "this server binds no passkeys: it has no inbox URL (notifications.inbox_url)"))
		return
	}
	if err := form(w, r); err != nil {
		jsonRefusal(w, err)
		return
	}
	ap, signed, err := in.signedHash(r)
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	rev := principalFrom(ctx).Reviewer()
	if err := ap.Authorize(rev); err != nil {
		jsonRefusal(w, err)
		return
	}
	cs, err := in.host.Store().Passkeys(ctx, rev.Name)
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	options, nonce, err := rp.BeginApproval(rev.Name, cs, ap.ID, signed)
	if err != nil {
		jsonRefusal(w, err)
		return
	}
	jsonAnswer(w, http.StatusOK, map[string]any{"options": options, "nonce": base64.RawURLEncoding.EncodeToString(nonce)})
}

// signedHash reads the request a passkey approval form names and the hash
// the passkey signs: the action hash the form echoes, or, when it carries
// an edit (args), the edited action's.
func (in *inbox) signedHash(r *http.Request) (airlock.Approval, airlock.Hash, error) {
	h, err := airlock.ParseHash(r.PostForm.Get("action_hash"))
	if err != nil {
		return airlock.Approval{}, h, airlock.Errorf(airlock.EINVALID, "the form must carry the action hash it showed: %s", airlock.ErrorMessage(err))
	}
	ap, err := in.host.Store().Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		return ap, h, err
	}
	if args := strings.TrimSpace(r.PostForm.Get("args")); args != "" {
		e, err := airlock.NewEdit(&ap, json.RawMessage(args))
		if err != nil {
			return ap, h, err
		}
		return ap, e.ActionHash, nil
	}
	return ap, h, nil
}

// passkeyAssertion verifies the passkey assertion an approval form
// carries, nil when it carries none.
func (in *inbox) passkeyAssertion(r *http.Request) (*airlock.PasskeyAssertion, error) {
	raw := r.PostForm.Get("passkey_assertion")
	if raw == "" {
		return nil, nil
	}
	rp := in.host.Passkeys()
	if rp == nil {
		return nil, airlock.Errorf(airlock.EINVALID, "this server binds no passkeys")
	}
	nonce, err := base64.RawURLEncoding.DecodeString(r.PostForm.Get("passkey_nonce"))
	if err != nil {
		return nil, airlock.Errorf(airlock.EINVALID, "the passkey nonce is not base64url: %v", err)
	}
	ap, signed, err := in.signedHash(r)
	if err != nil {
		return nil, err
	}
	who := principalFrom(r.Context()).Reviewer().Name
	cs, err := in.host.Store().Passkeys(r.Context(), who)
	if err != nil {
		return nil, err
	}
	return rp.FinishApproval(who, cs, ap.ID, signed, nonce, json.RawMessage(raw))
}
