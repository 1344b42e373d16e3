package catalog

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/mcpcatalog"
	"github.com/airlock-dev/airlock/sensitive"
)

// classCapabilities is the capability each class the MCP server catalogue
// uses needs, as the built-in tools of that class have it.
var classCapabilities = map[airlock.Class]airlock.Capability{
	airlock.ClassFSRead: airlock.CapWorkspaceRead, airlock.ClassFSWrite: airlock.CapWorkspaceWriteText, airlock.ClassFSMkdir: airlock.CapWorkspaceWrite,
	airlock.ClassFSMove: airlock.CapWorkspaceWrite, airlock.ClassFSCopy: airlock.CapWorkspaceWrite, airlock.ClassFSDelete: airlock.CapWorkspaceDelete,
	airlock.ClassNetHTTP: airlock.CapNetworkEgress, airlock.ClassGitRead: airlock.CapGitRead, airlock.ClassGitWrite: airlock.CapGitWrite,
	airlock.ClassStoreWrite: airlock.CapStoreWrite, airlock.ClassAgentStateWrite: airlock.CapAgentStateWrite, airlock.ClassHostCall: airlock.CapHostCall,
	airlock.ClassProcessExec: airlock.CapProcessExec, airlock.ClassCredentialsRead: airlock.CapCredentialsRead, airlock.ClassPackageInstall: airlock.CapNetworkEgress,
}

// knownMCPTool is a catalogued MCP tool, resolved to Airlock's types.
type knownMCPTool struct {
	class      airlock.Class
	capability airlock.Capability
	tier       airlock.RiskTier
	t          mcpcatalog.Tool
	keys       map[string]bool
}

// knownMCPTools resolves the MCP server catalogue once. An entry whose
// class or tier Airlock does not have is left out — its calls stay
// mcp.call — and TestMCPCatalogue fails on it.
var knownMCPTools = sync.OnceValue(func() map[string]*knownMCPTool {
	m := map[string]*knownMCPTool{}
	for _, s := range mcpcatalog.Servers() {
		for _, t := range s.Tools {
			k, err := resolveMCPTool(t)
			if err == nil {
				m[t.Server+"\x00"+t.Name] = k
			}
		}
	}
	return m
})

// resolveMCPTool checks a catalogue entry against Airlock's classes and
// tiers: a known class with a capability, a tier not below the class's.
func resolveMCPTool(t mcpcatalog.Tool) (*knownMCPTool, error) {
	class := airlock.Class(t.Class)
	natural, ok := class.Tier()
	capability, hasCap := classCapabilities[class]
	if !ok || !hasCap {
		return nil, airlock.Errorf(airlock.EINVALID, "MCP tool %s of %s: class %q is not one the catalogue may use", t.Name, t.Server, t.Class)
	}
	tier, err := airlock.ParseRiskTier(t.Tier)
	if err != nil {
		return nil, err
	}
	// The catalogue's reads of the agent's own state are reads, as
	// TodoWrite's are; every other class keeps at least its own tier.
	if tier < natural && class != airlock.ClassAgentStateWrite {
		return nil, airlock.Errorf(airlock.EINVALID, "MCP tool %s of %s: tier %s is below class %s's own (%s)", t.Name, t.Server, tier, class, natural)
	}
	keys := map[string]bool{}
	for _, k := range t.Keys() {
		keys[k] = true
	}
	return &knownMCPTool{class: class, capability: capability, tier: tier, t: t, keys: keys}, nil
}

// classifyKnownMCP classifies a call of tool of MCP server server when the
// action names the catalogue's server it runs on (Action.MCPServer) and the
// catalogue lists the tool; ok is false otherwise, and the call stays a
// generic mcp.call. Its paths are judged as Read's and Write's are, its
// URLs as WebFetch's, a file: URL as a read of its path.
func classifyKnownMCP(server, tool string, a *airlock.Action, cat *sensitive.Catalogue) (airlock.Classification, bool) {
	known := a.MCPServer
	if known == "" {
		return airlock.Classification{}, false
	}
	k := knownMCPTools()[known+"\x00"+tool]
	if k == nil {
		return airlock.Classification{}, false
	}
	c := airlock.Classification{Class: k.class, Capability: k.capability, Tier: k.tier, Source: "mcp catalog",
		Reason: k.t.What + " (tool " + tool + " of MCP server " + server + ", known as " + known + ")"}
	if len(k.keys) == 0 {
		return c, true
	}
	args := airlock.PickArgs(a.Args, k.keys)
	if k.t.DestroyKey != "" {
		if v, ok := args[k.t.DestroyKey].(string); ok && slices.Contains(k.t.Destroy, v) && c.Tier < airlock.TierDestructive {
			c.Tier = airlock.TierDestructive
			c.Reason = k.t.What + " with " + k.t.DestroyKey + " " + v + ", which deletes (tool " + tool + " of MCP server " + server + ", known as " + known + ")"
		}
	}
	reads := stringsArg(args, k.t.Read)
	for _, u := range stringsArg(args, k.t.URL) {
		scheme, _, _ := strings.Cut(u, ":")
		if !strings.EqualFold(scheme, "file") {
			continue
		}
		p, ok := fileURIPath(u)
		if !ok {
			// A file: URL Airlock cannot read as one local path may name
			// any file: nothing proves it is not a secret.
			c.Class, c.Capability, c.Tier = airlock.ClassCredentialsRead, airlock.CapCredentialsRead, airlock.TierPrivileged
			c.Reason = "opens a file: URL Airlock cannot read as a local path: " + strconv.Quote(airlock.ClipText(u, 200))
			return c, true
		}
		reads = append(reads, p)
	}
	raiseForCredentials(&c, orHome(reads, a.Cwd), a.Cwd, cat)
	raiseForSystemPaths(&c, orHome(stringsArg(args, k.t.Write), a.Cwd), a.Cwd, cat)
	return c, true
}

// orHome adds, when the action has no working directory, each relative
// path as it would be in a home directory: a server resolves a relative
// path against a directory Airlock does not see (the filesystem server,
// against each directory it may reach, which may be a home), so
// .aws/credentials is judged as ~/.aws/credentials too.
func orHome(paths []string, cwd string) []string {
	if cwd != "" {
		return paths
	}
	out := paths
	for _, p := range paths {
		if p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
			out = append(out, "~/"+p)
		}
	}
	return out
}
