// Package inbox is the reviewers' web inbox: server-rendered pages
// (html/template, typed page structs) and vendored htmx, sessions signed in
// with a reviewer's token, the approval, audit, agents and notifications
// pages, and a live event stream. The API server mounts it (Mount) and
// gives it what it needs of itself (Host).
package inbox
