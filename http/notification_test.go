package http_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/airlocktest"
	"github.com/airlock-dev/airlock/notify"
)

// failing is a channel whose receiver is down.
type failing struct{}

func (failing) Deliver(context.Context, *notify.Delivery) (string, error) {
	return "", errors.New("503 Service Unavailable")
}

func TestNotificationsAPI(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	ts.Server.Channels = []string{"ops"}
	ts.DB.SetRouter(notify.NewRouter([]*notify.Spec{{Name: "ops", Type: "webhook", Everyone: true, Channel: failing{}}}, 0))

	enf, err := ts.Agent.CheckWait(ctx, airlocktest.Action("deploy", "prod"), 0)
	if err != nil || !enf.Pending {
		t.Fatalf("ask: %+v %v", enf, err)
	}
	// A notifier that gives up at once: the request's notice is dead.
	n := &notify.Notifier{Store: ts.DB, Channels: map[string]*notify.Spec{"ops": {Name: "ops", Channel: failing{}}}, Attempts: 1}
	nctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(nctx) }()
	var dead []airlock.Notification
	for len(dead) == 0 {
		if dead, _, err = ts.Bob.Notifications(ctx, airlock.NotificationFilter{Status: airlock.NotificationDead}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	d := dead[0]
	if d.Kind != airlock.EventApprovalRequested || d.ApprovalID != enf.Approval.ID || d.Attempts != 1 || !strings.Contains(d.LastError, "503") {
		t.Fatalf("dead letter %+v", d)
	}
	got, err := ts.Bob.Notification(ctx, d.ID)
	if err != nil || got.Key != d.Key {
		t.Fatalf("show: %+v %v", got, err)
	}
	byApproval, _, err := ts.Admin.Notifications(ctx, airlock.NotificationFilter{ApprovalID: enf.Approval.ID})
	if err != nil || len(byApproval) != 1 {
		t.Fatalf("by approval: %+v %v", byApproval, err)
	}

	// Reviewers read; only admins retry and test; agents do neither.
	if _, err := ts.Bob.RetryNotification(ctx, d.ID); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("reviewer retry: %v, want unauthorized", err)
	}
	if _, _, err := ts.Agent.Notifications(ctx, airlock.NotificationFilter{}); airlock.ErrorCode(err) != airlock.EUNAUTHORIZED {
		t.Fatalf("agent list: %v, want unauthorized", err)
	}
	r, err := ts.Admin.RetryNotification(ctx, d.ID)
	if err != nil || r.Status != airlock.NotificationPending || r.Attempts != 0 {
		t.Fatalf("retry: %+v %v", r, err)
	}
	if _, err := ts.Admin.RetryNotification(ctx, d.ID); airlock.ErrorCode(err) != airlock.ECONFLICT {
		t.Fatalf("retry of a pending delivery: %v, want conflict", err)
	}
	if _, err := ts.Admin.Notification(ctx, 999999); airlock.ErrorCode(err) != airlock.ENOTFOUND {
		t.Fatalf("missing: %v, want not found", err)
	}

	test, err := ts.Admin.TestNotification(ctx, "ops")
	if err != nil || test.Kind != airlock.NoticeTest || test.Channel != "ops" || test.Status != airlock.NotificationPending {
		t.Fatalf("test: %+v %v", test, err)
	}
	if _, err := ts.Admin.TestNotification(ctx, "nope"); airlock.ErrorCode(err) != airlock.ENOTFOUND || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("test of an unknown channel: %v, want not found naming it", err)
	}
	evs, err := ts.DB.Events(ctx, airlock.EventFilter{Kind: airlock.EventNotificationRetry})
	if err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"by":"root"`) {
		t.Fatalf("retry audit %+v %v", evs, err)
	}
}
