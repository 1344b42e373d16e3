package gate

import (
	_ "embed"
	"sync"
)

// StarterPolicyFile is the name the built-in starter policy is loaded under:
// its positions read "builtin:starter.yaml:LINE:COL", and it is never a path
// on disk.
const StarterPolicyFile = "builtin:starter.yaml"

//go:embed starter.yaml
var starterYAML string

// StarterPolicySource is the YAML text of the starter policy (`airlock
// policy show` prints what it compiles to), for people who want to copy it
// as a starting point.
// StarterPolicy parses its own copy, so changing this slice changes nothing
// the gate enforces.
var StarterPolicySource = []byte(starterYAML)

// starterPolicy parses the starter policy once: a Policy is immutable, so
// every caller can share it.
var starterPolicy = sync.OnceValue(func() *Policy {
	p, err := LoadPolicy(StarterPolicyFile, []byte(starterYAML))
	if err != nil {
		panic("airlock: the built-in starter policy does not load: " + err.Error()) // a bug, caught by TestStarterPolicy
	}
	return p
})

// StarterPolicy returns the built-in policy `airlock serve` enforces when no
// policy file is configured: reads run; writes, network egress, spending
// and unknown tools ask; destructive and privileged actions are tagged
// needs-human. Its tests have passed.
func StarterPolicy() *Policy { return starterPolicy() }
