package http

import (
	"context"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/google/uuid"
)

// maxTokenLife bounds expires_in: ten years.
const maxTokenLife = 10 * 365 * 24 * time.Hour

type createTokenInput struct {
	Body struct {
		Role      string `json:"role" enum:"agent,reviewer,admin" doc:"What the token may do."`
		Name      string `json:"name,omitempty" doc:"The person a reviewer or admin token authenticates; a label for an agent token."`
		Agent     string `json:"agent,omitempty" doc:"The one agent an agent token acts as."`
		ExpiresIn string `json:"expires_in,omitempty" doc:"Validity (a Go duration); empty: until revoked." example:"720h"`
	}
}

type newTokenOutput struct {
	Body airlock.NewToken
}

func (s *Server) createToken(ctx context.Context, in *createTokenInput) (*newTokenOutput, error) {
	t, err := s.allow(ctx, "create tokens", airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	b := &in.Body
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	tok := airlock.Token{ID: id.String(), Role: airlock.Role(b.Role), Name: b.Name, Agent: b.Agent, CreatedBy: t.Name}
	if tok.Role == airlock.RoleAgent && tok.Name == "" {
		tok.Name = b.Agent
	}
	if b.ExpiresIn != "" {
		d, err := time.ParseDuration(b.ExpiresIn)
		if err != nil || d <= 0 || d > maxTokenLife {
			return nil, airlock.Errorf(airlock.EINVALID, "expires_in %q is not a positive duration up to %s, such as 720h", b.ExpiresIn, maxTokenLife)
		}
		now, err := s.store().Now(ctx)
		if err != nil {
			return nil, err
		}
		tok.Expires = now.Add(d)
	}
	if err := tok.Validate(); err != nil {
		return nil, err
	}
	secret, h := airlock.NewTokenSecret()
	if tok, err = s.store().CreateToken(ctx, tok, h); err != nil {
		return nil, err
	}
	return &newTokenOutput{Body: airlock.NewToken{Token: tok, Secret: secret}}, nil
}

type tokenListOutput struct {
	Body airlock.TokenList
}

func (s *Server) listTokens(ctx context.Context, _ *struct{}) (*tokenListOutput, error) {
	if _, err := s.allow(ctx, "list tokens", airlock.RoleAdmin); err != nil {
		return nil, err
	}
	ts, err := s.store().Tokens(ctx)
	if err != nil {
		return nil, err
	}
	out := &tokenListOutput{Body: airlock.TokenList{Tokens: []airlock.Token{}}}
	for _, c := range s.tokens.configured {
		out.Body.Tokens = append(out.Body.Tokens, c.Token)
	}
	out.Body.Tokens = append(out.Body.Tokens, ts...)
	return out, nil
}

type tokenIDInput struct {
	ID string `path:"id" doc:"The token's ID."`
}

type tokenOutput struct {
	Body airlock.Token
}

func (s *Server) revokeToken(ctx context.Context, in *tokenIDInput) (*tokenOutput, error) {
	t, err := s.allow(ctx, "revoke tokens", airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	for _, c := range s.tokens.configured {
		if c.Token.ID == in.ID {
			return nil, airlock.Errorf(airlock.ECONFLICT, "token %s comes from the configuration file: remove it there", in.ID)
		}
	}
	tok, err := s.store().RevokeToken(ctx, in.ID, t.Name)
	if err != nil {
		return nil, err
	}
	s.tokens.forget(in.ID)
	return &tokenOutput{Body: tok}, nil
}

func (s *Server) whoami(ctx context.Context, _ *struct{}) (*tokenOutput, error) {
	t := principalFrom(ctx)
	if t == nil {
		return nil, newProblem(401, airlock.EUNAUTHENTICATED, "not authenticated")
	}
	return &tokenOutput{Body: *t}, nil
}
