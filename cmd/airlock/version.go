package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is the build's version: set with -ldflags "-X main.version=v1.2.3",
// else the module's version the go command stamped (go install …@v1.2.3, or
// a pseudo-version from the repository a build ran in).
var version = "dev"

// buildInfo is what a build says about itself: its version, the commit it
// was built from, and whether the tree had changes that commit does not hold.
type buildInfo struct {
	Version  string
	Commit   string // vcs.revision; "" when the build did not record one
	Time     string // vcs.time
	Modified bool   // vcs.modified
	Go       string
}

// readBuildInfo reads the build's information from the binary itself.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `airlock version` prints:
// "airlock v1.2.3 (commit 1f5597f…, modified; go1.26.0 linux/amd64)".
func (b buildInfo) String() string {
	commit := "commit unknown"
	if b.Commit != "" {
		commit = "commit " + b.Commit
		if b.Time != "" {
			commit += " of " + b.Time
		}
		if b.Modified {
			commit += ", modified"
		}
	}
	return fmt.Sprintf("airlock %s (%s; %s %s/%s)", b.Version, commit, b.Go, runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the commit airlock was built from",
		Long: `Version prints airlock's version, the commit it was built from (and
"modified" when the tree held changes that commit does not), and the Go
release and platform it was built with. 'airlock --version' prints the same.`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), readBuildInfo())
			return err
		},
	}
}
