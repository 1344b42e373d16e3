package shell

import "testing"

func TestFdExec(t *testing.T) {
	tests := []struct {
		word  string
		ok    bool
		first string
	}{
		{"-x", true, ""}, {"--exec", true, ""}, {"-X", true, ""}, {"--exec-batch", true, ""},
		{"-Hx", true, ""}, {"-xrm", true, "rm"}, {"--exec=rm", true, "rm"},
		{"-ex", false, ""}, {"-H", false, ""}, {"x", false, ""}, {"--extension", false, ""},
	}
	for _, tc := range tests {
		cmd, ok := fdExec(literal(tc.word))
		first := ""
		if len(cmd) > 0 {
			first = cmd[0].val
		}
		if ok != tc.ok || first != tc.first {
			t.Errorf("fdExec(%q) = %q, %v; want %q, %v", tc.word, first, ok, tc.first, tc.ok)
		}
	}
}

func TestSysctlPath(t *testing.T) {
	tests := map[string]string{
		"net.ipv4.ip_forward":        "/proc/sys/net/ipv4/ip_forward",
		"net/ipv4/ip_forward":        "/proc/sys/net/ipv4/ip_forward",
		"net.ipv4.conf.eth0/1.rp":    "/proc/sys/net/ipv4/conf/eth0.1/rp",
		"/../../etc/shadow":          "/etc/shadow",
		"kernel/../../../etc/shadow": "/etc/shadow",
		"kernel.//.//.//.etc.shadow": "/etc/shadow",
	}
	for key, want := range tests {
		if got := sysctlPath(key); got != want {
			t.Errorf("sysctlPath(%q) = %q, want %q", key, got, want)
		}
	}
}
