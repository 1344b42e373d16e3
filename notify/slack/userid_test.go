package slack

import "testing"

// A configuration maps the provider's own user IDs to Airlock identities;
// anything else is refused with what an ID looks like.
func TestCheckUserID(t *testing.T) {
	if err := CheckUserID("U024BE7LH"); err != nil {
		t.Errorf("CheckUserID(%q) = %v, want nil", "U024BE7LH", err)
	}
	if err := CheckUserID("bob"); err == nil {
		t.Errorf("CheckUserID(%q) = nil, want an error", "bob")
	}
}
