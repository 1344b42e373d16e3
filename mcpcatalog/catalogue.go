// Package mcpcatalog is what Airlock knows about the MCP servers teams run
// most, so that a known server's tool calls are classified like built-ins.
//
// For each server: how an operator's command names it, and what each of
// its tools does (a class, a tier, the arguments that are paths or URLs).
// The knowledge is data, in catalogue.tsv, each server with
// the published tool list it was read from.
//
// A server is known by what the operator configured it to run — a package,
// an image, a program, an endpoint — never by what it says about itself
// (its serverInfo is the server's to choose).
package mcpcatalog

import (
	_ "embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
)

// Server is one MCP server the catalogue knows.
type Server struct {
	// Name is the server's name in the catalogue ("filesystem"): what the
	// gateway puts in Action.MCPServer.
	Name string
	// Match lists what an operator's command runs when it runs this server:
	// "npm:@modelcontextprotocol/server-filesystem", "pypi:mcp-server-git",
	// "python:mcp_server_git", "docker:mcp/filesystem",
	// "bin:mcp-server-filesystem", "url:https://api.githubcopilot.com/mcp".
	Match []string
	// Source is the published tool list the tools were read from.
	Source string
	Tools  []Tool
}

// Tool is what one tool of a known server does.
type Tool struct {
	Server, Name string
	// Class and Tier are an Airlock class and tier ("fs.read", "read"),
	// checked against the root package's by its tests.
	Class, Tier string
	// Read, Write and URL name the arguments that are paths the tool
	// reads, paths it writes, and URLs it fetches.
	Read, Write, URL []string
	// Destroy makes a call destructive when its argument DestroyKey is one
	// of these values (a method that deletes).
	DestroyKey string
	Destroy    []string
	// What is the reason a decision shows ("reads a file").
	What string
}

// Keys returns every argument the tool's classification reads.
func (t Tool) Keys() []string {
	keys := append(append(append([]string(nil), t.Read...), t.Write...), t.URL...)
	if t.DestroyKey != "" {
		keys = append(keys, t.DestroyKey)
	}
	return keys
}

//go:embed catalogue.tsv
var catalogueTSV string

type index struct {
	servers []Server
	byName  map[string]*Server
	tools   map[string]*Tool // server + "\x00" + tool
	match   map[string]string
}

var builtin = sync.OnceValue(func() *index {
	servers, err := Parse(catalogueTSV)
	if err != nil {
		panic("mcpcatalog: the built-in catalogue does not parse: " + err.Error()) // a bug, caught by TestParse
	}
	ix := &index{servers: servers, byName: map[string]*Server{}, tools: map[string]*Tool{}, match: map[string]string{}}
	for i := range ix.servers {
		s := &ix.servers[i]
		ix.byName[s.Name] = s
		for j := range s.Tools {
			ix.tools[s.Name+"\x00"+s.Tools[j].Name] = &s.Tools[j]
		}
		for _, m := range s.Match {
			ix.match[m] = s.Name
		}
	}
	return ix
})

// Servers returns the built-in catalogue, sorted by name.
func Servers() []Server {
	out := append([]Server(nil), builtin().servers...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Known reports whether the catalogue has a server of that name.
func Known(server string) bool { return builtin().byName[server] != nil }

// Lookup returns what the catalogue knows of tool of server.
func Lookup(server, tool string) (Tool, bool) {
	t := builtin().tools[server+"\x00"+tool]
	if t == nil {
		return Tool{}, false
	}
	return *t, true
}

// Parse reads a catalogue in the format of catalogue.tsv.
func Parse(text string) ([]Server, error) {
	var servers []Server
	seen := map[string]bool{}
	matches := map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := fields(line)
		errorf := func(format string, a ...any) error {
			return fmt.Errorf("line %d: %s", n+1, fmt.Sprintf(format, a...))
		}
		switch f[0] {
		case "server":
			if len(f) != 4 {
				return nil, errorf("a server line has 4 fields (server, name, matches, source), not %d", len(f))
			}
			if seen[f[1]] {
				return nil, errorf("server %s twice", f[1])
			}
			seen[f[1]] = true
			s := Server{Name: f[1], Match: strings.Fields(f[2]), Source: f[3]}
			for _, m := range s.Match {
				kind, v, ok := strings.Cut(m, ":")
				switch {
				case !ok || v == "":
					return nil, errorf("match %q: want KIND:VALUE", m)
				case kind != "npm" && kind != "pypi" && kind != "python" && kind != "docker" && kind != "bin" && kind != "url":
					return nil, errorf("match %q: unknown kind %s", m, kind)
				case matches[m] != "":
					return nil, errorf("match %q names both %s and %s", m, matches[m], s.Name)
				}
				matches[m] = s.Name
			}
			servers = append(servers, s)
		case "tool":
			if len(f) != 7 {
				return nil, errorf("a tool line has 7 fields (tool, server, name, class, tier, args, what), not %d", len(f))
			}
			if len(servers) == 0 || servers[len(servers)-1].Name != f[1] {
				return nil, errorf("tool %s of server %s: it follows its server's line", f[2], f[1])
			}
			s := &servers[len(servers)-1]
			t := Tool{Server: f[1], Name: f[2], Class: f[3], Tier: f[4], What: f[6]}
			for _, o := range s.Tools {
				if o.Name == t.Name {
					return nil, errorf("tool %s of %s twice", t.Name, t.Server)
				}
			}
			if f[5] != "-" {
				for _, a := range strings.Fields(f[5]) {
					role, keys, ok := strings.Cut(a, "=")
					if !ok || keys == "" {
						return nil, errorf("argument %q: want ROLE=KEYS", a)
					}
					switch role {
					case "read":
						t.Read = strings.Split(keys, ",")
					case "write":
						t.Write = strings.Split(keys, ",")
					case "url":
						t.URL = strings.Split(keys, ",")
					case "destroy":
						k, vs, ok := strings.Cut(keys, ":")
						if !ok || k == "" || vs == "" {
							return nil, errorf("argument %q: want destroy=KEY:VALUE,VALUE", a)
						}
						t.DestroyKey, t.Destroy = k, strings.Split(vs, ",")
					default:
						return nil, errorf("argument %q: unknown role %s (read, write, url, destroy)", a, role)
					}
				}
			}
			s.Tools = append(s.Tools, t)
		default:
			return nil, errorf("unknown kind of line %q (server, tool)", f[0])
		}
	}
	return servers, nil
}

// fields splits a line at tabs, several tabs counting as one.
func fields(line string) []string {
	var out []string
	for _, f := range strings.Split(line, "\t") {
		if f != "" {
			out = append(out, strings.TrimSpace(f))
		}
	}
	return out
}

// Identify returns the catalogue's name for the server an operator
// configured — a command and its arguments, or a streamable HTTP
// endpoint — or "" when the catalogue does not know what it runs. Only what
// the command runs counts: the package after npx, uvx or pipx run, the
// module after python -m, the image of docker run, the package a node
// script lies in, or the program itself; never an argument further on.
func Identify(command string, args []string, url string) string {
	ix := builtin()
	if url != "" {
		for m, name := range ix.match {
			if prefix, ok := strings.CutPrefix(m, "url:"); ok && urlUnder(url, prefix) {
				return name
			}
		}
		return ""
	}
	for _, c := range runs(command, args) {
		if name := ix.match[c]; name != "" {
			return name
		}
	}
	return ""
}

// urlUnder reports whether url is prefix or a path below it.
func urlUnder(url, prefix string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(url), strings.ToLower(prefix))
	return ok && (rest == "" || rest[0] == '/' || rest[0] == '?')
}

// runs returns what a command line runs, as catalogue matches: the
// candidates to look up, the most specific first.
func runs(command string, args []string) []string {
	prog := strings.ToLower(path.Base(strings.ReplaceAll(command, `\`, "/")))
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		prog = strings.TrimSuffix(prog, ext)
	}
	switch prog {
	case "npx", "bunx", "pnpx":
		if p := npmPackage(args); p != "" {
			return []string{"npm:" + p}
		}
		return nil
	case "pnpm", "yarn", "bun", "npm":
		if len(args) > 0 && (args[0] == "dlx" || args[0] == "x" || args[0] == "exec") {
			if p := npmPackage(args[1:]); p != "" {
				return []string{"npm:" + p}
			}
		}
		return nil
	case "uvx", "uv", "pipx":
		if prog != "uvx" {
			switch {
			case len(args) > 1 && prog == "uv" && args[0] == "tool" && args[1] == "run":
				args = args[2:]
			case len(args) > 0 && prog == "pipx" && args[0] == "run":
				args = args[1:]
			default:
				return nil
			}
		}
		if p := pypiPackage(args); p != "" {
			return []string{"pypi:" + p}
		}
		return nil
	case "python", "python3":
		for i, a := range args {
			if a == "-m" && i+1 < len(args) {
				return []string{"python:" + args[i+1]}
			}
			if !strings.HasPrefix(a, "-") {
				return nil // a script: not a module the catalogue names
			}
		}
		return nil
	case "docker", "podman":
		if img := dockerImage(args); img != "" {
			return []string{"docker:" + img}
		}
		return nil
	case "node", "nodejs", "deno":
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if p := nodeModulesPackage(a); p != "" {
				return []string{"npm:" + p}
			}
			return nil
		}
		return nil
	}
	c := []string{"bin:" + prog}
	if p := nodeModulesPackage(command); p != "" { // the package's own script, run as a program
		c = append([]string{"npm:" + p}, c...)
	}
	return c
}

// npmPackage is the package npx runs: the value of -p/--package, else the
// first word that is not an option; without its version.
func npmPackage(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-p" || a == "--package":
			if i+1 < len(args) {
				return stripNPMVersion(args[i+1])
			}
			return ""
		case strings.HasPrefix(a, "--package="):
			return stripNPMVersion(strings.TrimPrefix(a, "--package="))
		case a == "--":
			continue
		case strings.HasPrefix(a, "-"):
			continue // -y, --yes, --quiet
		}
		return stripNPMVersion(a)
	}
	return ""
}

// stripNPMVersion turns @scope/name@1.2.3 and name@latest into the package.
func stripNPMVersion(p string) string {
	if i := strings.LastIndexByte(p, '@'); i > 0 {
		p = p[:i]
	}
	return p
}

// pypiPackage is the package uvx runs: --from's, else the first word that
// is not an option; without its version (name==1.2, name@1.2).
func pypiPackage(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--from":
			if i+1 < len(args) {
				return stripPyPIVersion(args[i+1])
			}
			return ""
		case strings.HasPrefix(a, "--from="):
			return stripPyPIVersion(strings.TrimPrefix(a, "--from="))
		case strings.HasPrefix(a, "-"):
			continue
		}
		return stripPyPIVersion(a)
	}
	return ""
}

func stripPyPIVersion(p string) string {
	if i := strings.IndexAny(p, "=<>~!@["); i > 0 {
		p = p[:i]
	}
	return strings.ToLower(strings.ReplaceAll(p, "_", "-"))
}

// dockerValueOptions are docker run's options that take a value as the
// next word.
var dockerValueOptions = map[string]bool{
	"-e": true, "--env": true, "--env-file": true, "-v": true, "--volume": true, "--mount": true, "--name": true,
	"--network": true, "--net": true, "-p": true, "--publish": true, "-w": true, "--workdir": true, "-u": true, "--user": true,
	"-l": true, "--label": true, "--add-host": true, "--platform": true, "--pull": true, "-m": true, "--memory": true,
	"--cpus": true, "--hostname": true, "-h": true, "--device": true, "--cap-add": true, "--cap-drop": true,
	"--security-opt": true, "--tmpfs": true, "--ulimit": true, "--log-driver": true, "--log-opt": true, "--restart": true,
}

// dockerImage is the image of docker run (or podman run), without its
// registry's docker.io prefix, tag or digest; "" when an --entrypoint runs
// something else in it, or when the command is not run.
func dockerImage(args []string) string {
	if len(args) == 0 || args[0] != "run" {
		return ""
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--entrypoint" || strings.HasPrefix(a, "--entrypoint="):
			return ""
		case dockerValueOptions[a]:
			i++
			continue
		case strings.HasPrefix(a, "-"):
			continue
		}
		img := strings.ToLower(a)
		if j := strings.IndexByte(img, '@'); j >= 0 {
			img = img[:j]
		}
		if j := strings.LastIndexByte(img, ':'); j > strings.LastIndexByte(img, '/') {
			img = img[:j]
		}
		img = strings.TrimPrefix(img, "docker.io/")
		img = strings.TrimPrefix(img, "index.docker.io/")
		return img
	}
	return ""
}

// nodeModulesPackage is the package a path lies in: the name after its
// last node_modules/ (a scope takes two names).
func nodeModulesPackage(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	i := strings.LastIndex(p, "node_modules/")
	if i < 0 {
		return ""
	}
	rest := strings.Split(p[i+len("node_modules/"):], "/")
	switch {
	case rest[0] == ".bin": // a program's link: known by its name (bin:)
		return ""
	case len(rest) >= 2 && strings.HasPrefix(rest[0], "@"):
		return rest[0] + "/" + rest[1]
	case len(rest) >= 1 && rest[0] != "":
		return rest[0]
	}
	return ""
}
