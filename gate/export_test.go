package gate

import "github.com/airlock-dev/airlock/catalog"

// ShellForTests is the shell analyser of this package's internal tests. It
// is package shell's, set by shell_test.go (an external test file, which
// may import package shell where these files may not).
var ShellForTests catalog.ShellAnalyser
