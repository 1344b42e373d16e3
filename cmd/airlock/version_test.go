package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	want := readBuildInfo().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != exitOK || stdout != want || stderr != "" {
			t.Errorf("airlock %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(args, " "), code, stdout, stderr, want)
		}
	}
}

func TestBuildInfoString(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "v1.2.3", Commit: "1f5597fc816ef7c51a86a688c1177f906c10777e", Time: "2026-11-28T09:00:00Z", Go: "go1.26.0"},
			"airlock v1.2.3 (commit 1f5597fc816ef7c51a86a688c1177f906c10777e of 2026-11-28T09:00:00Z; go1.26.0 " + platform + ")"},
		{buildInfo{Version: "dev", Commit: "1f5597fc", Modified: true, Go: "go1.26.0"},
			"airlock dev (commit 1f5597fc, modified; go1.26.0 " + platform + ")"},
		{buildInfo{Version: "dev", Go: "go1.26.0"}, "airlock dev (commit unknown; go1.26.0 " + platform + ")"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// A flag error names the command once: "airlock: airlock: unknown flag"
// said the program twice.
func TestFlagErrorNamesTheCommandOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "airlock: unknown flag: --nope\nRun 'airlock --help' for usage.\n"},
		{[]string{"policy", "lint", "--nope", "x"}, "airlock policy lint: unknown flag: --nope\nRun 'airlock policy lint --help' for usage.\n"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || stderr != tc.want {
			t.Errorf("airlock %s: exit %d, stderr %q; want %d, %q", strings.Join(tc.args, " "), code, stderr, exitUsage, tc.want)
		}
	}
}
