package airlock

import (
	"fmt"
)

// RiskTier is how much harm an action can do, totally ordered from reads to
// privileged operations. When several classifiers disagree, the highest tier
// wins. The zero value is not a tier: classification never produces it, and
// Validate rejects it.
type RiskTier uint8

// The risk tiers, from least to most dangerous.
const (
	TierRead          RiskTier = iota + 1 // observes, changes nothing
	TierWrite                             // changes the workspace
	TierNetworkEgress                     // sends data out of the host
	TierSpend                             // costs money
	TierDestructive                       // destroys data or state that may not come back
	TierPrivileged                        // acts with, or gains, more than the agent's own rights
)

var tierNames = [...]string{
	TierRead:          "read",
	TierWrite:         "write",
	TierNetworkEgress: "network-egress",
	TierSpend:         "spend",
	TierDestructive:   "destructive",
	TierPrivileged:    "privileged",
}

// Tiers returns every risk tier in ascending order.
func Tiers() []RiskTier {
	return []RiskTier{TierRead, TierWrite, TierNetworkEgress, TierSpend, TierDestructive, TierPrivileged}
}

// String returns the tier's name as written in policies ("network-egress").
func (t RiskTier) String() string {
	if t.Valid() {
		return tierNames[t]
	}
	return fmt.Sprintf("RiskTier(%d)", uint8(t))
}

// Valid reports whether t is one of the defined tiers.
func (t RiskTier) Valid() bool { return t >= TierRead && t <= TierPrivileged }

// ParseRiskTier parses a tier name as written in policies.
func ParseRiskTier(s string) (RiskTier, error) {
	for _, t := range Tiers() {
		if tierNames[t] == s {
			return t, nil
		}
	}
	return 0, Errorf(EINVALID, "unknown risk tier %q%s", s, suggest(s, tierNames[1:]))
}

// MarshalText implements encoding.TextMarshaler.
func (t RiskTier) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, Errorf(EINVALID, "invalid risk tier %d", uint8(t))
	}
	return []byte(tierNames[t]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *RiskTier) UnmarshalText(b []byte) error {
	v, err := ParseRiskTier(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
