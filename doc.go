// Package airlock is the vocabulary and the engine of a gate in front of AI
// agents' side effects: actions, decisions, approvals and the audit log.
//
// A Gate classifies each Action and decides it by a stack of policies; an
// Enforcer records the Decision in a Store before the action may run, and
// queues an Approval for a person when the policy asks for one. A library
// user imports this package and one store (package sqlite or postgres);
// package http's Client is the same Guard over a server's API.
// docs/ARCHITECTURE.md draws the packages and the path of one action.
package airlock
