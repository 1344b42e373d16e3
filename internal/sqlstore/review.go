package sqlstore

import (
	"encoding/json"

	"github.com/airlock-dev/airlock"
)

// ReviewColumns are the columns of a request's review (migration
// 0011_review / 0007_review), as ApprovalColumns ends with them: its
// Review, Votes, Escalated and Edit.
const ReviewColumns = `review, votes, escalated, edit`

// ReviewText is a request's review as its columns hold it: JSON, "" for
// none.
type ReviewText struct {
	Review, Votes, Edit string
	Escalated           int
}

// Decode sets ap's review from its columns.
func (t *ReviewText) Decode(ap *airlock.Approval) error {
	ap.Review, ap.Votes, ap.Edit, ap.Escalated = airlock.Review{}, nil, nil, t.Escalated
	for _, c := range []struct {
		name, text string
		v          any
	}{{"review", t.Review, &ap.Review}, {"votes", t.Votes, &ap.Votes}, {"edit", t.Edit, &ap.Edit}} {
		if c.text == "" {
			continue
		}
		if err := json.Unmarshal([]byte(c.text), c.v); err != nil {
			return airlock.Errorf(airlock.EINTERNAL, "approval %s: stored %s: %v", ap.ID, c.name, err)
		}
	}
	return nil
}

// EncodeReview returns ap's review as its columns hold it, with the
// time its next escalation is due (Unix ns, 0 for none) and its edit's
// hash (nil for none).
func EncodeReview(ap *airlock.Approval) (t ReviewText, escalateAt int64, editHash []byte) {
	t.Escalated = ap.Escalated
	if !ap.Review.IsZero() {
		t.Review = string(mustJSON(ap.Review))
	}
	if len(ap.Votes) > 0 {
		t.Votes = string(mustJSON(ap.Votes))
	}
	if ap.Edit != nil {
		t.Edit = string(mustJSON(ap.Edit))
		editHash = ap.Edit.ActionHash[:]
	}
	if at := ap.EscalateAt(); !at.IsZero() {
		escalateAt = at.UnixNano()
	}
	return t, escalateAt, editHash
}

// mustJSON marshals Airlock's own types, which always marshal.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("sqlstore: " + err.Error())
	}
	return b
}

// PersonText is a session's person as its column holds it: JSON, "" for
// a token's session.
func PersonText(p *airlock.Person) string {
	if p == nil {
		return ""
	}
	return string(mustJSON(p))
}

// ParsePerson reads a session's person column.
func ParsePerson(text string) (*airlock.Person, error) {
	if text == "" {
		return nil, nil
	}
	var p airlock.Person
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return nil, airlock.Errorf(airlock.EINTERNAL, "stored session person: %v", err)
	}
	return &p, nil
}
