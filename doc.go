// Package airlock is the vocabulary of a gate in front of AI agents' side
// effects: Action, Classification, Decision, Outcome, Approval, Event, the
// error and refusal codes, and the Guard and Store interfaces every surface
// shares.
//
// The engine lives in packages of its own: package gate classifies each
// Action and decides it by a stack of policies, and its Enforcer records
// the Decision in a Store before the action may run; package checkpoint
// signs the audit log's head. A program that only talks to a server imports
// this package and package client, which link nothing heavier than the
// standard library and a JSON decoder. docs/ARCHITECTURE.md draws the
// packages and the path of one action.
package airlock
