package slack_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/slack"
)

// Wiring a Slack channel: it delivers the notices routed to it, and its
// interactivity endpoint (or Socket Mode) resolves the requests people
// click on, through Clicks.
func Example() {
	var store airlock.Store // the server's store
	users := map[string]string{"U0123ABCD": "bob", "U0456EFGH": "alice"}

	ch, err := slack.New(slack.Config{
		Token:         os.Getenv("SLACK_BOT_TOKEN"),
		SigningSecret: os.Getenv("SLACK_SIGNING_SECRET"),
		Channel:       "#agent-approvals",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close()
	spec := &notify.Spec{Name: "team-slack", Type: "slack", Room: true, Updates: true, Users: users, Channel: ch}
	_ = spec // routed by notify.NewRouter, delivered by a notify.Notifier

	clicks := &notify.Clicks{Store: store, Channel: spec.Name, Surface: airlock.SurfaceSlack, Users: users,
		Path: "/callbacks/team-slack"}
	mux := http.NewServeMux()
	mux.Handle("POST /callbacks/team-slack", ch.Handler(clicks))

	// Or, with Config.AppToken (xapp-…) and no public URL:
	go ch.RunSocketMode(context.Background(), clicks)
}
