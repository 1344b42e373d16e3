package mcpcatalog

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	servers, err := Parse(catalogueTSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) < 10 {
		t.Errorf("%d servers", len(servers))
	}
	for _, bad := range []string{
		"tool\tx\ta\tfs.read\tread\t-\treads",                                     // before its server
		"server\tx\tnpm:x\n" + "tool\tx\ta\tfs.read\tread\t-\treads",              // a server line without its source
		"server\tx\tnpm:x\tsrc\nserver\tx\tnpm:y\tsrc",                            // twice
		"server\tx\tnpm:x\tsrc\nserver\ty\tnpm:x\tsrc",                            // one match, two servers
		"server\tx\tgem:x\tsrc",                                                   // an unknown kind of match
		"server\tx\tnpm:x\tsrc\ntool\tx\ta\tfs.read\tread\tpath\treads",           // an argument without its role
		"server\tx\tnpm:x\tsrc\ntool\tx\ta\tfs.read\tread\texec=path\treads",      // an unknown role
		"server\tx\tnpm:x\tsrc\ntool\tx\ta\tfs.read\tread\tdestroy=method\treads", // destroy without values
		"server\tx\tnpm:x\tsrc\ntool\tx\ta\tfs.read\tread\t-\treads\ntool\tx\ta\tfs.read\tread\t-\treads",
		"server\tx\tnpm:x\tsrc\ntool\ty\ta\tfs.read\tread\t-\treads", // under another server
		"route\tx",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	s, err := Parse("server\tx\tnpm:x\tsrc\ntool\t\tx\t\ta\tfs.move\twrite\tread=source write=source,destination destroy=method:delete,remove\tmoves\n")
	if err != nil {
		t.Fatal(err)
	}
	got := s[0].Tools[0]
	if strings.Join(got.Read, ",") != "source" || strings.Join(got.Write, ",") != "source,destination" || got.DestroyKey != "method" ||
		strings.Join(got.Destroy, ",") != "delete,remove" || strings.Join(got.Keys(), ",") != "source,source,destination,method" {
		t.Errorf("%+v", got)
	}
}

// TestIdentify: a server is known by what its operator's command runs —
// the package, the module, the image, the program, the endpoint — and by
// nothing further on in the command line.
func TestIdentify(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		url     string
		want    string
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/work"}, "", "filesystem"},
		{"npx", []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/w"}, "", "filesystem"},
		{"npx.cmd", []string{"--yes", "@modelcontextprotocol/server-memory@latest"}, "", "memory"},
		{"/usr/local/bin/npx", []string{"-p", "@modelcontextprotocol/server-everything", "mcp-server-everything"}, "", "everything"},
		{"bunx", []string{"@playwright/mcp@0.0.79", "--headless"}, "", "playwright"},
		{"pnpm", []string{"dlx", "@modelcontextprotocol/server-slack"}, "", "slack"},
		{"uvx", []string{"mcp-server-git", "--repository", "/w"}, "", "git"},
		{"uvx", []string{"mcp-server-fetch==0.6.3"}, "", "fetch"},
		{"uvx", []string{"--from", "mcp-server-time", "mcp-server-time", "--local-timezone", "UTC"}, "", "time"},
		{"uv", []string{"tool", "run", "mcp_server_fetch"}, "", "fetch"},
		{"pipx", []string{"run", "mcp-server-git"}, "", "git"},
		{"python3", []string{"-m", "mcp_server_git", "--repository", "/w"}, "", "git"},
		{"docker", []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"}, "", "github"},
		{"docker", []string{"run", "-i", "--rm", "--mount", "type=bind,src=/w,dst=/projects/w", "mcp/filesystem:latest", "/projects"}, "", "filesystem"},
		{"podman", []string{"run", "-i", "docker.io/mcp/fetch@sha256:0123"}, "", "fetch"},
		{"docker", []string{"run", "-i", "mcr.microsoft.com/playwright/mcp"}, "", "playwright"},
		{"/opt/bin/github-mcp-server", []string{"stdio"}, "", "github"},
		{"mcp-server-filesystem", []string{"/w"}, "", "filesystem"},
		{"/w/mcp/testdata/servers/node_modules/.bin/mcp-server-filesystem", []string{"/w"}, "", "filesystem"},
		{"node", []string{"/w/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/w"}, "", "filesystem"},
		{`C:\tools\node_modules\@modelcontextprotocol\server-postgres\dist\index.js`, nil, "", "postgres"},
		{"", nil, "https://api.githubcopilot.com/mcp/", "github"},
		{"", nil, "https://API.githubcopilot.com/mcp/x/repos/readonly", "github"},

		// Unknown: another package, another image, an entrypoint that runs
		// something else, a known name only as an argument, a lookalike
		// endpoint.
		{"npx", []string{"-y", "@example/server-filesystem", "/w"}, "", ""},
		{"npx", []string{"-y", "my-wrapper", "@modelcontextprotocol/server-filesystem"}, "", ""},
		{"docker", []string{"run", "--entrypoint", "sh", "mcp/filesystem", "-c", "x"}, "", ""},
		{"docker", []string{"run", "-e", "mcp/filesystem", "example/evil"}, "", ""},
		{"docker", []string{"exec", "box", "mcp-server-filesystem"}, "", ""},
		{"bash", []string{"-c", "npx -y @modelcontextprotocol/server-filesystem /w"}, "", ""},
		{"python3", []string{"server.py", "-m", "mcp_server_git"}, "", ""},
		{"my-server", []string{"--like", "mcp-server-filesystem"}, "", ""},
		{"", nil, "https://api.githubcopilot.com.evil.example/mcp/", ""},
		{"", nil, "https://api.githubcopilot.com/mcpx", ""},
		{"", nil, "https://mcp.example.com/mcp", ""},
	} {
		if got := Identify(tc.command, tc.args, tc.url); got != tc.want {
			t.Errorf("Identify(%q, %q, %q) = %q, want %q", tc.command, tc.args, tc.url, got, tc.want)
		}
	}
}

func TestLookup(t *testing.T) {
	tool, ok := Lookup("filesystem", "read_text_file")
	if !ok || tool.Class != "fs.read" || strings.Join(tool.Read, ",") != "path" {
		t.Errorf("%+v %t", tool, ok)
	}
	if _, ok := Lookup("filesystem", "fetch"); ok {
		t.Error("fetch is a tool of filesystem")
	}
	if Known("serverInfo") || !Known("github") {
		t.Error("Known")
	}
}
