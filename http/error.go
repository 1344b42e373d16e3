package http

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/airlock-dev/airlock"
	"github.com/danielgtaylor/huma/v2"
	jsonv2 "github.com/go-json-experiment/json"
)

// statusOf maps every application and refusal code to its HTTP status, in
// one place.
var statusOf = map[string]int{
	airlock.EINVALID:         http.StatusBadRequest,
	airlock.EUNAUTHENTICATED: http.StatusUnauthorized,
	airlock.EUNAUTHORIZED:    http.StatusForbidden,
	airlock.ENOTFOUND:        http.StatusNotFound,
	airlock.ECONFLICT:        http.StatusConflict,
	airlock.CodeHashMismatch: http.StatusConflict,
	airlock.EUNAVAILABLE:     http.StatusServiceUnavailable,
	airlock.ENOTIMPL:         http.StatusNotImplemented,
	airlock.EINTERNAL:        http.StatusInternalServerError,
}

// Problem is an RFC 9457 problem+json body with Airlock's stable code.
type Problem struct {
	huma.ErrorModel
	// Code is the stable code: invalid, unauthenticated, unauthorized,
	// not_found, conflict, unavailable, internal, or a refusal code such as
	// AIRLOCK-HASH-MISMATCH.
	Code string `json:"code" doc:"Stable, machine-readable error code."`
}

// maxEchoed bounds the offending value a problem repeats back.
const maxEchoed = 256

func newProblem(status int, code, msg string, errs ...error) *Problem {
	p := &Problem{Code: code}
	p.Status, p.Title, p.Detail = status, http.StatusText(status), msg
	for _, e := range errs {
		if e == nil {
			continue
		}
		var ae *airlock.Error
		if errors.As(e, &ae) {
			e = errors.New(ae.Message)
		}
		p.Add(e)
	}
	for _, d := range p.Errors {
		if d != nil {
			d.Value = echoed(d.Value)
		}
	}
	return p
}

// echoed bounds the offending value a problem repeats back: it names what
// was wrong and where, it does not return a (possibly huge) body.
func echoed(v any) any {
	if s, ok := v.(string); ok {
		if len(s) > maxEchoed {
			return s[:maxEchoed] + "…"
		}
		return s
	}
	if b, err := json.Marshal(v); err != nil || len(b) > maxEchoed {
		return nil
	}
	return v
}

// Error implements error.
func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

// problem turns an application error into its problem+json response,
// logging the unexpected ones once, here.
func (s *Server) problem(ctx context.Context, err error) error {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	code := airlock.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusBadRequest
	}
	if status >= 500 {
		s.logger().Error("request failed", "code", code, "err", err)
	}
	return newProblem(status, code, airlock.ErrorMessage(err))
}

// writeProblem writes p outside huma (authentication, unknown routes).
func writeProblem(w http.ResponseWriter, p *Problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// strictJSON reads request bodies strictly: duplicate keys (also those
// differing only in case), invalid UTF-8, nesting deeper than
// airlock.MaxJSONDepth and trailing data are refused with where they are
// (airlock.CheckJSON); unknown fields and wrong types are refused by the
// schema.
var strictJSON = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	},
	Unmarshal: func(data []byte, v any) error {
		// huma decodes a body twice: into an `any` to validate it against
		// the schema (every operation here validates), then into the
		// operation's struct. The scan belongs to the first pass.
		if _, validating := v.(*any); validating {
			if err := airlock.CheckJSON(data); err != nil {
				return err
			}
		}
		// Names match exactly (encoding/json would take "Tool" for "tool").
		return jsonv2.Unmarshal(data, v)
	},
}
