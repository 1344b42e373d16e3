package http

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/airlock-dev/airlock"
)

// Enrolment codes live this long unless the admin says otherwise, and at
// most maxEnrolment.
const (
	defaultEnrolment = time.Hour
	maxEnrolment     = 7 * 24 * time.Hour
)

type enrolInput struct {
	Name string `path:"name" doc:"The person who may register a passkey with the code."`
	Body struct {
		ExpiresIn string `json:"expires_in,omitempty" doc:"How long the code may be used (a Go duration, at most 168h); 1h by default." example:"1h"`
	}
}

type enrolOutput struct {
	Body airlock.NewPasskeyEnrolment
}

// enrolPasskey lets one person register a passkey, once, with the code it
// returns: an admin vouches that the device they register is theirs.
func (s *Server) enrolPasskey(ctx context.Context, in *enrolInput) (*enrolOutput, error) {
	t, err := s.allow(ctx, "enrol passkeys", airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	ttl := defaultEnrolment
	if v := in.Body.ExpiresIn; v != "" {
		if ttl, err = time.ParseDuration(v); err != nil || ttl <= 0 || ttl > maxEnrolment {
			return nil, airlock.Errorf(airlock.EINVALID, "expires_in %q is not a positive duration up to %s, such as 1h", v, maxEnrolment)
		}
	}
	now, err := s.store().Now(ctx)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	code := "pk_" + base64.RawURLEncoding.EncodeToString(raw)
	e := airlock.PasskeyEnrolment{Code: airlock.HashTokenSecret(code), Reviewer: in.Name, By: t.Name, Created: now, Expires: now.Add(ttl)}
	ev := airlock.NewEvent(airlock.EventPasskeyEnrolment, nil, "", "", map[string]any{"reviewer": e.Reviewer, "by": e.By, "expires": e.Expires})
	if err := s.store().CreateEnrolment(ctx, e, airlock.Record{Events: []airlock.Event{ev}}); err != nil {
		return nil, err
	}
	return &enrolOutput{Body: airlock.NewPasskeyEnrolment{Code: code, Reviewer: e.Reviewer, Expires: e.Expires}}, nil
}
