package feishu

import "testing"

// A configuration maps the provider's own user IDs to Airlock identities;
// anything else is refused with what an ID looks like.
func TestCheckUserID(t *testing.T) {
	if err := CheckUserID("ou_7d8a6e6df7621556ce0d21922b676706"); err != nil {
		t.Errorf("CheckUserID(%q) = %v, want nil", "ou_7d8a6e6df7621556ce0d21922b676706", err)
	}
	if err := CheckUserID("U024BE7LH"); err == nil {
		t.Errorf("CheckUserID(%q) = nil, want an error", "U024BE7LH")
	}
}
