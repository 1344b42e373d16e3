package email_test

import (
	"log"
	"os"

	"github.com/airlock-dev/airlock/notify"
	"github.com/airlock-dev/airlock/notify/email"
)

// An email channel submits mail with STARTTLS on port 587, as the user
// airlock, to the people it maps.
func ExampleNew() {
	ch, err := email.New(email.Config{
		Host:     "smtp.example.com",
		Username: "airlock",
		Password: os.Getenv("AIRLOCK_SMTP_PASSWORD"),
		From:     "Airlock <airlock@example.com>",
	})
	if err != nil {
		log.Fatal(err)
	}
	spec := &notify.Spec{Name: "mail", Type: "email", Channel: ch, Users: map[string]string{
		"bob@example.com":   "bob",
		"alice@example.com": "alice",
	}}
	_ = spec // routed by notify.NewRouter, delivered by a notify.Notifier
}
