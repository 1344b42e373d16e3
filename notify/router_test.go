package notify_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
)

func specs() []*notify.Spec {
	return []*notify.Spec{
		{Name: "ops", Type: "webhook", Everyone: true},
		{Name: "audit", Type: "webhook", Everyone: true, Events: []string{airlock.EventApprovalResolved}},
		{Name: "room", Type: "slack", Room: true, Updates: true, Users: map[string]string{"UBOB": "bob"}},
		{Name: "dm", Type: "slack", Updates: true, Users: map[string]string{"UALICE": "alice", "UCAROL": "carol"}},
		{Name: "mail", Type: "email", Users: map[string]string{"dave@example.com": "dave"}},
	}
}

func TestRoute(t *testing.T) {
	r := notify.NewRouter(specs(), 0)
	for _, tc := range []struct {
		name string
		n    airlock.Notification
		want []string // channels
	}{
		{"notify ran: the owner's channels and the webhooks",
			airlock.Notification{Kind: airlock.EventDecision, Recipients: []string{"alice"}},
			[]string{"ops", "dm"}},
		{"notify ran for an agent without owner: the webhooks only",
			airlock.Notification{Kind: airlock.EventDecision, Recipients: []string{""}},
			[]string{"ops"}},
		{"a request to bob and alice: the room that maps bob, alice's DMs",
			airlock.Notification{Kind: airlock.EventApprovalRequested, ApprovalID: "r1", Recipients: []string{"bob", "alice"}, Reviewers: []string{"bob", "alice"}},
			[]string{"ops", "room", "dm"}},
		{"its end, told to alice and carol: the room shows it too",
			airlock.Notification{Kind: airlock.EventApprovalResolved, ApprovalID: "r1", Recipients: []string{"alice", "carol"}, Reviewers: []string{"bob", "alice"}},
			[]string{"ops", "audit", "room", "dm"}},
		{"its end when nobody is left to tell",
			airlock.Notification{Kind: airlock.EventApprovalExpired, ApprovalID: "r1", Reviewers: []string{"bob"}},
			[]string{"ops", "room"}},
		{"a request only admins may resolve reaches the rooms",
			airlock.Notification{Kind: airlock.EventApprovalRequested, ApprovalID: "r2", Recipients: []string{""}, Reviewers: []string{""}},
			[]string{"ops", "room"}},
		{"a request for people no channel maps: no room that maps none of them",
			airlock.Notification{Kind: airlock.EventApprovalRequested, ApprovalID: "r3", Recipients: []string{"erin"}, Reviewers: []string{"erin"}},
			[]string{"ops"}},
		{"a rule's notify names the person channels; webhooks still get their kinds",
			airlock.Notification{Kind: airlock.EventApprovalRequested, ApprovalID: "r4", Recipients: []string{"bob", "dave"}, Reviewers: []string{"bob", "dave"}, Route: []string{"mail", "audit"}},
			[]string{"ops", "mail"}},
		{"a request's end reaches the direct messages that showed it, not the mail of its reviewers",
			airlock.Notification{Kind: airlock.EventApprovalResolved, ApprovalID: "r6", Recipients: []string{"erin"}, Reviewers: []string{"alice", "dave"}},
			[]string{"ops", "audit", "dm"}},
		{"a named room carries it though it maps nobody",
			airlock.Notification{Kind: airlock.EventApprovalRequested, ApprovalID: "r5", Recipients: []string{"erin"}, Reviewers: []string{"erin"}, Route: []string{"room", "dm"}},
			[]string{"ops", "room"}},
		{"a test goes only where it is sent",
			airlock.Notification{Kind: airlock.NoticeTest, Recipients: []string{"bob"}, Route: []string{"audit"}},
			[]string{"audit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range r.Route(tc.n) {
				got = append(got, d.Channel)
				if d.Kind != tc.n.Kind || d.Route != nil || !slices.Equal(d.Recipients, tc.n.Recipients) {
					t.Errorf("delivery %+v does not carry the notice %+v", d, tc.n)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("routed to %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRouteReminder(t *testing.T) {
	created := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	payload := func(timeout time.Duration) json.RawMessage {
		b, err := json.Marshal(airlock.Approval{ID: "r1", Outcome: airlock.Ask, Tier: airlock.TierWrite, Created: created, Expires: created.Add(timeout)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r := notify.NewRouter(specs()[:3], 10*time.Minute)
	n := airlock.Notification{Kind: airlock.EventApprovalRequested, ApprovalID: "r1", Recipients: []string{"bob"},
		Reviewers: []string{"bob"}, Subject: "approval requested: deploy", Payload: payload(time.Hour)}
	var got []string
	for _, d := range r.Route(n) {
		got = append(got, d.Channel+":"+d.Kind)
		if d.Kind == airlock.NoticeReminder {
			if !d.Due.Equal(created.Add(50*time.Minute)) || !strings.HasPrefix(d.Subject, "reminder: ") {
				t.Errorf("reminder %+v, want due 10m before the deadline", d)
			}
		} else if !d.Due.IsZero() {
			t.Errorf("the request's delivery is due at %v, want at once", d.Due)
		}
	}
	// audit lists only approval.resolved: no reminder through it.
	want := []string{"ops:approval.requested", "ops:approval.reminder", "room:approval.requested", "room:approval.reminder"}
	if !slices.Equal(got, want) {
		t.Fatalf("routed %v, want %v", got, want)
	}
	// A deadline closer than the lead: no reminder.
	n.Payload = payload(5 * time.Minute)
	if ds := r.Route(n); len(ds) != 2 {
		t.Fatalf("routed %d deliveries for a 5-minute request, want the request only (2)", len(ds))
	}
}
