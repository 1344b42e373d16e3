package airlock

import (
	"strconv"
	"time"
)

// Rubber-stamp signals (docs/INBOX.md, "Rubber-stamp signals"): an approval
// given faster than the request could be read, and a long run of
// approvals without one rejection. They never block anything; they are
// shown, so that a team sees them, and a fast approval does not count
// toward a proposed grant.

// Reading the request: a person needs at least MinReadBase, and then
// ReadPerByte for every byte of the summary and arguments shown, to read
// a request before deciding it; at most MaxReadTime.
const (
	MinReadBase = 2 * time.Second
	ReadPerByte = 25 * time.Millisecond // 40 characters a second: skimming
	MaxReadTime = 30 * time.Second
)

// LongStreak is the run of approvals without a rejection that is flagged.
const LongStreak = 30

// MinReadTime is the least time a person needs to read what the request
// shows (its summary and its arguments) before deciding it.
func (ap *Approval) MinReadTime() time.Duration {
	n := len(ap.Summary) + len(ap.Action.Args)
	return min(MaxReadTime, MinReadBase+time.Duration(n)*ReadPerByte)
}

// RubberStamped reports whether a person approved the request faster than
// it could be read: from its creation to its approval, less than
// MinReadTime. A request the system settled is not.
func (ap *Approval) RubberStamped() bool {
	return ap.Status == StatusApproved && ap.ResolvedBy != "" && !ap.ResolvedAt.IsZero() &&
		ap.ResolvedAt.Sub(ap.Created) < ap.MinReadTime()
}

// ReviewStats are one reviewer's decisions, or those on one agent's
// requests, in a window: what they approved and rejected, how many
// approvals were given faster than they could be read, and the runs of
// approvals without a rejection.
type ReviewStats struct {
	Name     string `json:"name"`
	Approved int    `json:"approved"`
	Rejected int    `json:"rejected"`
	// Fast counts the approvals given faster than the request could be
	// read (Approval.RubberStamped).
	Fast int `json:"fast"`
	// Streak is the current run of approvals without a rejection; Longest
	// the longest in the window.
	Streak  int `json:"streak"`
	Longest int `json:"longest"`
	// Flags say, in words, what deserves a look: fast approvals, a long
	// streak.
	Flags []string `json:"flags,omitempty"`
}

// Add counts one settled request, in the order they were settled.
func (s *ReviewStats) Add(ap *Approval) {
	switch ap.Status {
	case StatusApproved:
		s.Approved++
		s.Streak++
		s.Longest = max(s.Longest, s.Streak)
		if ap.RubberStamped() {
			s.Fast++
		}
	case StatusRejected:
		s.Rejected++
		s.Streak = 0
	}
}

// Flag sets Flags from the counts.
func (s *ReviewStats) Flag() {
	s.Flags = nil
	if s.Fast > 0 {
		s.Flags = append(s.Flags, plural(s.Fast, "approval")+" faster than the request could be read")
	}
	if s.Longest >= LongStreak {
		s.Flags = append(s.Flags, plural(s.Longest, "approval")+" in a row without a rejection")
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// ReviewSignals are the rubber-stamp signals of a window, by reviewer and
// by agent, the most flagged first.
type ReviewSignals struct {
	Since     time.Time     `json:"since"`
	Reviewers []ReviewStats `json:"reviewers"`
	Agents    []ReviewStats `json:"agents"`
}
