package airlock

// EventPolicyReloadRefused is the kind of the event that records a refused
// reload of the policy files: the previous stack stays in force.
const EventPolicyReloadRefused = "policy.reload_refused"

// PolicyReloadRefusal is the payload of a policy.reload_refused event: the
// policy files were read again (a change, SIGHUP) but the stack they make
// was refused, so the stack in force is no longer what the files on disk
// say. The payload carries both, file by file, with the SHA-256 of each,
// so that `sha256sum` of a file tells which one is deciding.
type PolicyReloadRefusal struct {
	// Reason is what triggered the reload: "file changed", "SIGHUP", ...
	Reason string `json:"reason"`
	// Errors are the problems, one per entry, each file:line:col where it
	// has one.
	Errors []string `json:"errors"`
	// Files are the policy files as read on disk, from the top layer down.
	Files []PolicyFileOnDisk `json:"files"`
	// InForce is the stack that stays in force.
	InForce []PolicySource `json:"in_force"`
}

// PolicyFileOnDisk is a policy file as read from disk at a reload, which
// may not be a policy at all.
type PolicyFileOnDisk struct {
	File string `json:"file"`
	// SHA256 is the hash of the file's bytes, hex; "" when the file could
	// not be read (missing, unreadable).
	SHA256 string `json:"sha256"`
}

// Record returns the audit record of the refusal.
func (r PolicyReloadRefusal) Record() Record {
	return Record{Events: []Event{NewEvent(EventPolicyReloadRefused, nil, "refused", "", r)}}
}

// PolicySource identifies one policy of a stack in a policy.changed event.
type PolicySource struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Layer Layer  `json:"layer"`
	// SHA256 is the hash of the file's bytes, hex.
	SHA256 string `json:"sha256"`
}

// PolicyChange is the payload of a policy.changed event: the stack now in
// force, the one before, and why it changed.
type PolicyChange struct {
	// Reason is what triggered the change: "start", "file changed",
	// "SIGHUP", ...
	Reason   string         `json:"reason"`
	Layers   []PolicySource `json:"layers"`
	Previous []PolicySource `json:"previous,omitempty"`
}

// Record returns the audit record of the change.
func (c PolicyChange) Record() Record {
	return Record{Events: []Event{NewEvent(EventPolicyChanged, nil, "", "", c)}}
}
