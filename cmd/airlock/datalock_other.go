//go:build !unix

package main

// lockStore does not lock where flock(2) is missing: two servers on one
// SQLite database are the operator's to avoid there.
func lockStore(string) (func() error, error) { return func() error { return nil }, nil }
