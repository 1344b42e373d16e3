package http

import (
	"context"
	"net/http"
	"slices"

	"github.com/airlock-dev/airlock"
)

type notificationListInput struct {
	Status     string `query:"status" enum:"pending,sent,failed,dead,dropped" doc:"Only deliveries in this state (dead: the dead letters)."`
	Channel    string `query:"channel" doc:"Only deliveries through this channel."`
	Kind       string `query:"kind" doc:"Only notices of this kind."`
	ApprovalID string `query:"approval_id" doc:"Only the notices of this approval request."`
	Before     int64  `query:"before" minimum:"0" doc:"Page: deliveries with a smaller ID."`
	Limit      int    `query:"limit" minimum:"0" maximum:"1000" doc:"At most this many (default 100)."`
}

type notificationListOutput struct {
	Body airlock.NotificationList
}

// listNotifications pages through the deliveries: people who review see
// where notices went and which are dead.
func (s *Server) listNotifications(ctx context.Context, in *notificationListInput) (*notificationListOutput, error) {
	if _, err := s.allow(ctx, "list notifications", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = 100
	}
	ns, err := s.store().Notifications(ctx, airlock.NotificationFilter{Status: airlock.NotificationStatus(in.Status),
		Channel: in.Channel, Kind: in.Kind, ApprovalID: in.ApprovalID, BeforeID: in.Before, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &notificationListOutput{Body: airlock.NotificationList{Notifications: ns}}
	if out.Body.Notifications == nil {
		out.Body.Notifications = []airlock.Notification{}
	}
	if len(ns) == limit {
		out.Body.Next = ns[len(ns)-1].ID
	}
	return out, nil
}

type notificationIDInput struct {
	ID int64 `path:"id" minimum:"1" doc:"The delivery's ID."`
}

type notificationOutput struct {
	Body airlock.Notification
}

func (s *Server) getNotification(ctx context.Context, in *notificationIDInput) (*notificationOutput, error) {
	if _, err := s.allow(ctx, "read notifications", airlock.RoleReviewer, airlock.RoleAdmin); err != nil {
		return nil, err
	}
	n, err := s.store().Notification(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &notificationOutput{Body: n}, nil
}

// retryNotification sends a failed or dead delivery again, now.
func (s *Server) retryNotification(ctx context.Context, in *notificationIDInput) (*notificationOutput, error) {
	t, err := s.allow(ctx, "retry notifications", airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	n, err := s.store().RetryNotification(ctx, in.ID, t.Name)
	if err != nil {
		return nil, err
	}
	return &notificationOutput{Body: n}, nil
}

type testNotificationInput struct {
	Body struct {
		Channel string `json:"channel" minLength:"1" doc:"The channel to send a test message through."`
	}
}

// testNotification queues a test message through one channel and returns
// its delivery, to follow with GET /v1/notifications/{id}.
func (s *Server) testNotification(ctx context.Context, in *testNotificationInput) (*notificationOutput, error) {
	t, err := s.allow(ctx, "send test notifications", airlock.RoleAdmin)
	if err != nil {
		return nil, err
	}
	ch := in.Body.Channel
	if !slices.Contains(s.Channels, ch) {
		return nil, airlock.Errorf(airlock.ENOTFOUND, "no notification channel %q is configured (channels: %v)", ch, s.Channels)
	}
	rec := airlock.TestNotice(t.Name, ch)
	evs, err := s.store().Append(ctx, rec)
	if err != nil {
		return nil, err
	}
	ns, err := s.store().Notifications(ctx, airlock.NotificationFilter{Kind: airlock.NoticeTest, Channel: ch, Limit: 20})
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if n.EventSeq == evs[0].Seq {
			return &notificationOutput{Body: n}, nil
		}
	}
	return nil, airlock.Errorf(airlock.EINTERNAL, "the test notice for %s was recorded (event %d) but no delivery was queued", ch, evs[0].Seq)
}

// callback hands a chat provider's callback to its channel's handler:
// those authenticate themselves (the provider signs each request).
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	h, ok := s.Callbacks[r.PathValue("channel")]
	if !ok {
		notFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}
