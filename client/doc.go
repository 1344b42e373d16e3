// Package client is the Go client of an Airlock server's API: an
// airlock.Guard that checks actions and waits for people across long polls
// and restarts, and the reviewers' and administrators' calls. It imports the
// root, package hook/relay (for the problem bodies) and the standard
// library only, so an agent that talks to a server links nothing of the
// engine.
package client
