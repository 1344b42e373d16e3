package email

import "testing"

// A configuration maps the provider's own user IDs to Airlock identities;
// anything else is refused with what an ID looks like.
func TestCheckUserID(t *testing.T) {
	if err := CheckUserID("carol@example.com"); err != nil {
		t.Errorf("CheckUserID(%q) = %v, want nil", "carol@example.com", err)
	}
	if err := CheckUserID("Carol <carol@example.com>"); err == nil {
		t.Errorf("CheckUserID(%q) = nil, want an error", "Carol <carol@example.com>")
	}
}
