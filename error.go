package airlock

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Application error codes: what went wrong when Airlock could not do what was
// asked. Each transport maps them once (HTTP status, JSON-RPC error, hook
// output). They are distinct from refusal codes: a refusal is a Decision, not
// an error.
const (
	ECONFLICT     = "conflict"     // the state changed under the caller (already resolved, ...)
	EINTERNAL     = "internal"     // a bug or an unexpected failure
	EINVALID      = "invalid"      // the input is malformed; the message says what and where
	ENOTFOUND     = "not_found"    // no such approval, event, policy, ...
	EUNAUTHORIZED = "unauthorized" // the caller may not do this
	// EUNAUTHENTICATED: no valid credential (a server's 401); EUNAUTHORIZED
	// is a valid one not allowed to do this (403).
	EUNAUTHENTICATED = "unauthenticated"
	EUNAVAILABLE     = "unavailable" // a dependency (store, audit log) cannot be reached
	ENOTIMPL         = "not_implemented"
)

// Refusal codes: stable, machine-readable reasons carried by a Decision (and
// later by enforcement) when an action does not run. They are part of the
// public contract: never rename one.
const (
	CodeDenied       = "AIRLOCK-DENIED"        // a rule, floor or layer denies the action
	CodeNeedsHuman   = "AIRLOCK-NEEDS-HUMAN"   // tagged needs-human: refused, a request is queued
	CodeRejected     = "AIRLOCK-REJECTED"      // a reviewer rejected the approval request
	CodeTimeout      = "AIRLOCK-TIMEOUT"       // the approval request's deadline passed
	CodeCancelled    = "AIRLOCK-CANCELLED"     // the approval request was withdrawn before anyone decided
	CodeUsed         = "AIRLOCK-USED"          // the approval already released an earlier check
	CodeSuggested    = "AIRLOCK-SUGGESTED"     // skipped now; a proposal was queued for review
	CodeShadow       = "AIRLOCK-SHADOW"        // skipped; recorded as what would have happened
	CodeHashMismatch = "AIRLOCK-HASH-MISMATCH" // a resolution named a different action hash
	CodeUnavailable  = "AIRLOCK-UNAVAILABLE"   // the decision could not be recorded: fail closed
	CodeInvalid      = "AIRLOCK-INVALID"       // the action itself is malformed (bad args, no tool)
	CodePending      = "AIRLOCK-PENDING"       // a person has not decided yet; the request stays pending
	CodeToolChanged  = "AIRLOCK-TOOL-CHANGED"  // an MCP tool's definition changed, or the tool is new, and no person released it
	CodeAskLimited   = "AIRLOCK-ASK-LIMITED"   // the agent asked too often: the ask was parked as a proposal
	CodeEdited       = "AIRLOCK-EDITED"        // approved as a reviewer edited it, which this host cannot run in place of the original
)

// RefusalCodes documents every refusal code in one place; the transports and
// the docs render it.
var RefusalCodes = []struct{ Code, Meaning string }{
	{CodeDenied, "a rule, a floor or a layer denies the action"},
	{CodeNeedsHuman, "the action is tagged needs-human: it never runs without a person; a request was queued"},
	{CodeRejected, "a reviewer rejected the approval request"},
	{CodeTimeout, "the approval request's deadline passed before anyone decided"},
	{CodeCancelled, "the approval request was cancelled (by a person, or because the waiting caller went away) before anyone decided"},
	{CodeUsed, "the approval already let an earlier check of the same action run: an approval is used once"},
	{CodeSuggested, "the action was skipped and queued as a proposal for a person to approve"},
	{CodeShadow, "the action was skipped and recorded as what would have happened"},
	{CodeHashMismatch, "a resolution named a different action hash than the request's"},
	{CodeUnavailable, "the decision could not be recorded, so the action does not run"},
	{CodeInvalid, "the action is malformed (for example duplicate keys in args)"},
	{CodeToolChanged, "an MCP server's tool changed its definition since it was pinned, or appeared after the server's first listing: it is withheld until a person releases it (a request of class mcp.release shows the change)"},
	{CodeAskLimited, "the agent asked for approval more often than the server's ask limit allows (asks.limit per asks.per): this ask was not put to a person now but parked as a proposal (suggest), which a reviewer may still approve; retry the same action once it is approved"},
	{CodeEdited, "a reviewer approved an edited version of the action, and this host cannot run an edit in place of the call it made (Codex's hooks; Gemini CLI when the edit removes an argument): the original does not run; run the edited action the message gives instead, and it runs once on that approval"},
	{CodePending, "a person has not decided yet and the caller could wait no longer (an agent host's hook timeout): the request stays pending, and the same call retried after its approval runs once"},
}

// Error is an application error with a code and a message safe to show to the
// caller.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("airlock error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic message for any other error: internal details are not for callers.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// DidYouMean returns the suffix an error about an unknown name ends with: "
// (did you mean …? valid: …)" when one valid name is close to got, else "
// (valid: …)"; "" when there are none. Policy and configuration errors
// share it, so that they read alike.
func DidYouMean(got string, valid []string) string { return suggest(got, valid) }

// suggest returns a " (did you mean …?)" or "; valid: …" suffix listing the
// valid alternatives for an unknown name, closest first.
func suggest(got string, valid []string) string {
	if len(valid) == 0 {
		return ""
	}
	best, bestDist := "", 1<<30
	for _, v := range valid {
		if d := editDistance(strings.ToLower(got), strings.ToLower(v)); d < bestDist {
			best, bestDist = v, d
		}
	}
	sorted := append([]string(nil), valid...)
	sort.Strings(sorted)
	list := strings.Join(sorted, ", ")
	if bestDist <= max(2, len(got)/3) {
		return fmt.Sprintf(" (did you mean %q? valid: %s)", best, list)
	}
	return fmt.Sprintf(" (valid: %s)", list)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// CodeOfStatus is the application error code an HTTP status stands for,
// when the answer carries no code of its own: a body that is not a problem
// (a proxy's page), or an error the API's framework raised itself.
func CodeOfStatus(status int) string {
	switch {
	case status == 401:
		return EUNAUTHENTICATED
	case status == 403:
		return EUNAUTHORIZED
	case status == 404:
		return ENOTFOUND
	case status == 409:
		return ECONFLICT
	case status == 503:
		return EUNAVAILABLE
	case status >= 500:
		return EINTERNAL
	}
	return EINVALID
}
