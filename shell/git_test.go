package shell

import (
	"reflect"
	"testing"
)

func TestGitValues(t *testing.T) {
	tests := []struct {
		line, shorts string
		want         []string
		opts         []string
	}{
		{"-ix a b", "xs", []string{"a"}, []string{"-x", "--exec"}},
		{"-xa -s ours -x b", "xs", []string{"a", "b"}, []string{"-x", "--exec"}},
		{"-sx c", "xs", nil, []string{"-x", "--exec"}},
		{"--exe a --exec=b --ex c --e d", "xs", []string{"a", "b", "c"}, []string{"-x", "--exec"}},
		{"--upload=a --upload-pack b", "", []string{"a", "b"}, []string{"--upload-pack"}},
		{"-- -x a", "x", nil, []string{"-x"}},
	}
	for _, tc := range tests {
		got := vals(gitValues(words(tc.line), tc.shorts, tc.opts...))
		want := tc.want
		if want == nil {
			want = []string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("gitValues(%q, %q, %q) = %q, want %q", tc.line, tc.shorts, tc.opts, got, want)
		}
	}
}

func TestGitHas(t *testing.T) {
	for line, want := range map[string]bool{
		"--hard": true, "--har": true, "--ha": true, "--h": false, "-fd": true, "--hard=x": true, "-- --hard": false,
		"x --hard": true, "--hardx": false,
	} {
		if got := gitHas(words(line), "--hard", "-d"); got != want {
			t.Errorf("gitHas(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestGitKeys(t *testing.T) {
	for key, want := range map[string]bool{
		"core.sshCommand": true, "gpg.ssh.defaultKeyCommand": true, "sendemail.sendmailCmd": true,
		"core.hooksPath": true, "credential.https://x.helper": true, "submodule.x.update": true,
		"imap.tunnel": true, "browser.x.path": true, "mergetool.x.cmd": true, "http.proxy": true,
		"color.ui": false, "user.email": false, "uploadpack.allowFilter": false, "core.autocrlf": false,
	} {
		if got := gitExecKey(key); got != want {
			t.Errorf("gitExecKey(%q) = %v, want %v", key, got, want)
		}
	}
	if !gitCommandKey("interactive.diffFilter") || !gitWriteKey("trace2.eventTarget") || gitWriteKey("trace2.configParams") {
		t.Errorf("interactive.diffFilter is a command, trace2.eventTarget a file, trace2.configParams neither")
	}
}
