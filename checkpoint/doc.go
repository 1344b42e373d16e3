// Package checkpoint signs the audit log's head as C2SP signed notes and
// checks a log against them, so that a truncated or rewritten log is
// detected (airlock audit checkpoint, airlock audit verify).
package checkpoint
