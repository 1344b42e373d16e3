package shell

import (
	"strings"

	"github.com/airlock-dev/airlock"
)

// git: its global options, its subcommands, and the configuration keys
// that make it run commands.

// gitExecKey reports whether git runs the value of configuration key as a
// command (or loads configuration that may).
func gitExecKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.hookspath", "core.askpass",
		"core.gitproxy", "core.alternaterefscommand", "sequence.editor", "diff.external", "gpg.program",
		"credential.helper", "uploadpack.packobjectshook", "include.path", "receive.procreceiverefs",
		"protocol.allow", "ssh.variant", "core.worktree":
		return true
	}
	for _, p := range []string{"alias.", "pager.", "filter.", "includeif.", "url."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	switch k[strings.LastIndexByte(k, '.')+1:] {
	case "textconv", "command", "driver", "cmd", "helper", "program", "uploadpack", "receivepack", "allow", "proxy", "vcs":
		return true
	}
	return false
}

// gitCommandKey reports whether the value of key is a shell command that
// git runs as such (a pager, an editor): it is analysed like any command.
func gitCommandKey(key string) bool {
	k := strings.ToLower(key)
	return k == "core.pager" || k == "core.editor" || k == "sequence.editor" || strings.HasPrefix(k, "pager.")
}

// gitConfigSet analyses setting git configuration key to value: a pager
// or editor is analysed as a command, an alias as what it runs; the other
// keys that make git run something are privileged. It returns the reason
// when they are.
func (c *call) gitConfigSet(key, value arg) string {
	if !key.static {
		return "sets git configuration only known at run time"
	}
	k := strings.ToLower(key.val)
	switch {
	case gitCommandKey(k) || strings.HasPrefix(k, "alias."):
		if !value.static {
			return "sets " + key.val + " to a command only known at run time"
		}
		if alias, ok := strings.CutPrefix(value.val, "!"); ok {
			c.runScript("git "+key.val, alias, input{})
		} else if strings.HasPrefix(k, "alias.") {
			c.runScript("git "+key.val, "git "+value.val, input{})
		} else {
			c.runScript("git "+key.val, value.val, input{})
		}
		return ""
	case gitExecKey(k):
		return "sets " + key.val + ", which makes git run a command"
	}
	return ""
}

// gitConfigArg analyses a "key=value" given with git -c.
func (c *call) gitConfigArg(a arg) string {
	if !a.static {
		return "sets git configuration only known at run time"
	}
	key, val, _ := strings.Cut(a.val, "=")
	return c.gitConfigSet(literal(key), arg{val: val, static: true, text: quote(val)})
}

// git parses git's global options, then classifies its subcommand.
func git(c *call) effect {
	args := c.args
	risk := ""
	i := 0
loop:
	for i < len(args) {
		a := args[i]
		v := a.val
		switch {
		case !a.static:
			break loop
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--super-prefix":
			i += 2
		case v == "--config-env":
			risk = orElse(risk, "sets git configuration from the environment")
			i += 2
		case v == "-c":
			if i+1 < len(args) {
				risk = orElse(risk, c.gitConfigArg(args[i+1]))
			}
			i += 2
		case strings.HasPrefix(v, "--config-env="):
			risk = orElse(risk, "sets git configuration from the environment")
			i++
		case strings.HasPrefix(v, "--exec-path="):
			risk = "runs git programs from " + v[len("--exec-path="):]
			i++
		case strings.HasPrefix(v, "-"):
			i++
		default:
			break loop
		}
	}
	var e effect
	switch {
	case i >= len(args):
		e = gitRead("shows git help or version")
	case !args[i].static:
		e = unknown("runs git with a subcommand only known at run time")
	default:
		sub := args[i].val
		if r := gitCommands[sub]; r != nil {
			e = c.delegate(args[i+1:], r)
		} else {
			e = exec("runs git " + sub + ", which Airlock does not know (an alias or an extension)")
			e.generic = true
		}
	}
	for _, a := range args {
		if a.static && strings.Contains(a.val, "ext::") {
			return unknown("uses git's ext:: transport, which runs a command")
		}
	}
	if risk != "" && e.tier < airlock.TierPrivileged {
		return env(risk)
	}
	return e
}

// gitReader is a subcommand that reads the repository; --output makes
// it write a file.
func gitReader(reason string) rule {
	return func(c *call) effect {
		e := gitRead(reason)
		if outs := c.values("--output"); len(outs) > 0 {
			w := write(airlock.ClassFSWrite, "writes git output into a file")
			c.raiseWrites(&w, outs...)
			e = worse(e, w)
		}
		return e
	}
}

func gitWriter(reason string) rule { return fixed(gitWrite(reason)) }

var gitCommands = buildGitCommands()

func buildGitCommands() map[string]rule {
	gitCommands := map[string]rule{}
	for _, name := range strings.Fields(`status log diff show blame annotate describe shortlog grep rev-parse rev-list
		ls-files ls-tree cat-file merge-base for-each-ref name-rev check-ignore check-attr check-ref-format
		check-mailmap count-objects help version whatchanged show-ref show-branch var verify-commit verify-tag
		verify-pack fsck range-diff cherry diff-tree diff-index diff-files request-pull get-tar-commit-id
		column fmt-merge-msg stripspace patch-id interpret-trailers merge-tree show-index unpack-file
		rerere-diff`) {
		gitCommands[name] = gitReader("reads the repository")
	}
	for _, name := range strings.Fields(`add commit merge cherry-pick revert mv am read-tree write-tree
		commit-tree fast-import mktree mktag unpack-objects index-pack pack-objects pack-refs repack
		prune-packed checkout-index merge-file merge-index rerere mailsplit update-server-info
		fast-export bugreport diagnose`) {
		gitCommands[name] = gitWriter("changes the repository")
	}
	gitCommands["commit"] = gitWriter("records a commit")
	gitCommands["add"] = gitWriter("stages changes")
	gitCommands["merge"] = gitWriter("merges branches")
	for name, r := range map[string]rule{
		"push": gitPush, "fetch": gitFetch(airlock.ClassGitWrite, "fetches from a remote"),
		"pull":      gitFetch(airlock.ClassGitWrite, "pulls from a remote"),
		"ls-remote": gitFetch(airlock.ClassGitRead, "lists a remote's refs"),
		"clone":     gitClone, "init": gitInit, "branch": gitBranch, "tag": gitTag, "remote": gitRemote,
		"config": gitConfig, "stash": gitStash, "worktree": gitWorktree, "reflog": gitReflog,
		"checkout": gitCheckout, "switch": gitSwitch, "restore": gitRestore, "reset": gitReset,
		"clean": gitClean, "rm": gitRm, "gc": gitGc, "prune": gitPrune,
		"filter-branch": fixed(gitDestroy("rewrites history")), "filter-repo": fixed(gitDestroy("rewrites history")),
		"update-ref": gitUpdateRef, "symbolic-ref": gitSymbolicRef, "rebase": gitRebase, "bisect": gitBisect,
		"submodule": gitSubmodule, "notes": gitNotes, "apply": gitApply, "archive": gitArchive,
		"format-patch": gitFormatPatch, "bundle": gitBundle, "send-email": fixed(net(airlock.ClassNetConnect, "sends patches by email")),
		"daemon":       fixed(net(airlock.ClassNetConnect, "serves repositories")),
		"instaweb":     fixed(net(airlock.ClassNetConnect, "serves a web interface")),
		"http-backend": fixed(net(airlock.ClassNetConnect, "serves repositories")),
		"credential":   gitCredential, "credential-store": gitCredential, "credential-cache": gitCredential,
		"maintenance": gitMaintenance, "lfs": gitLFS, "hook": fixed(exec("runs a git hook")),
		"difftool": gitTool, "mergetool": gitTool, "sparse-checkout": gitSparse, "replace": gitReplace,
		"hash-object": gitHashObject, "update-index": gitWriter("changes the index"),
		"range-diff": gitReader("compares commit ranges"),
	} {
		gitCommands[name] = r
	}
	return gitCommands
}

// gitRunsOpts parses options whose value git runs as a command
// (--upload-pack, --receive-pack, --exec).
func gitRunsOpts(c *call, opts ...string) {
	for _, v := range c.values(opts...) {
		c.runWords("git "+opts[0], []arg{v}, input{})
	}
}

func gitPush(c *call) effect {
	gitRunsOpts(c, "--receive-pack", "--exec")
	destroy := func(reason string) effect {
		return effect{class: airlock.ClassGitWrite, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: reason}
	}
	switch {
	case c.has("-f", "--force", "--force-with-lease", "--force-if-includes"):
		return destroy("pushes to a remote with --force")
	case c.has("--mirror"):
		return destroy("mirrors to a remote, overwriting its refs")
	case c.has("-d", "--delete"):
		return destroy("deletes remote refs")
	case c.has("--prune"):
		return destroy("deletes remote branches that do not exist locally")
	}
	ops := c.operands("--repo", "-o", "--push-option", "--receive-pack", "--exec", "--recurse-submodules")
	if len(ops) > 1 {
		for _, r := range ops[1:] {
			if r.static && strings.HasPrefix(r.val, "+") {
				return destroy("force-pushes a refspec (+)")
			}
			if r.static && strings.HasPrefix(r.val, ":") {
				return destroy("deletes a remote ref (:ref)")
			}
		}
	}
	return gitNet(airlock.ClassGitWrite, "pushes to a remote")
}

func gitFetch(class airlock.Class, reason string) rule {
	return func(c *call) effect {
		gitRunsOpts(c, "--upload-pack")
		return gitNet(class, reason)
	}
}

// gitSubConfig returns why the configuration given to a subcommand
// ("clone -c key=value", --template, which installs hooks) matters, if it does.
func gitSubConfig(c *call) string {
	for _, v := range c.values("-c", "--config") {
		if r := c.gitConfigArg(v); r != "" {
			return r
		}
	}
	if t, ok := c.value("--template"); ok {
		return "installs hooks from template " + t.text + ", which run on checkout"
	}
	return ""
}

func gitClone(c *call) effect {
	gitRunsOpts(c, "--upload-pack", "-u")
	if r := gitSubConfig(c); r != "" {
		return env(r)
	}
	e := gitNet(airlock.ClassGitWrite, "clones a repository")
	ops := c.operands("-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able",
		"--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude", "-c", "--config", "--template",
		"-j", "--jobs", "--filter", "--server-option", "--bundle-uri", "--ref-format")
	dest := literal(".")
	if len(ops) > 1 {
		dest = ops[1]
	}
	c.raiseWrites(&e, dest)
	return e
}

func gitInit(c *call) effect {
	if r := gitSubConfig(c); r != "" {
		return env(r)
	}
	e := gitWrite("creates a repository")
	ops := c.operands("--template", "--separate-git-dir", "-b", "--initial-branch", "--object-format", "--ref-format", "--shared")
	dir := literal(".")
	if len(ops) > 0 {
		dir = ops[0]
	}
	c.raiseWrites(&e, dir)
	return e
}

func gitBranch(c *call) effect {
	switch {
	case c.has("-D"), c.has("-d", "--delete") && c.has("-f", "--force"):
		return gitDestroy("deletes a branch, even if unmerged")
	case c.has("-M", "-C"):
		return gitDestroy("renames or copies a branch over an existing one")
	case c.has("-d", "--delete"):
		return gitWrite("deletes a branch")
	case c.has("-m", "--move", "-c", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
		return gitWrite("renames, copies or configures a branch")
	}
	ops := c.operands("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format",
		"--sort", "--column", "--color", "-t", "--track")
	if len(ops) == 0 || c.has("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "--verbose", "--show-current") {
		return gitRead("lists branches")
	}
	if c.has("-f", "--force") {
		return gitDestroy("resets a branch with --force")
	}
	return gitWrite("creates a branch")
}

func gitTag(c *call) effect {
	switch {
	case c.has("-d", "--delete"):
		return gitDestroy("deletes a tag")
	case c.has("-v", "--verify", "-l", "--list", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged"):
		return gitRead("lists tags")
	}
	ops := c.operands("-m", "--message", "-F", "--file", "-u", "--local-user", "--cleanup", "--sort", "--format", "--column", "-n")
	if len(ops) == 0 {
		return gitRead("lists tags")
	}
	if c.has("-f", "--force") {
		return gitDestroy("moves a tag with --force")
	}
	return gitWrite("creates a tag")
}

func gitRemote(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 || ops[0].val == "get-url" {
		return gitRead("lists remotes")
	}
	switch ops[0].val {
	case "show", "update", "prune":
		return gitNet(airlock.ClassGitRead, "contacts a remote")
	}
	return gitWrite("changes remotes")
}

func gitConfig(c *call) effect {
	if c.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
		return gitRead("reads git configuration")
	}
	ops := c.operands("-f", "--file", "--blob", "--default", "--comment", "--type", "--value")
	key := arg{}
	setting := !c.has("--unset", "--unset-all", "--remove-section", "--rename-section")
	if len(ops) > 0 {
		switch ops[0].val {
		case "list", "get":
			return gitRead("reads git configuration")
		case "set", "unset", "rename-section", "remove-section", "edit":
			setting = ops[0].val == "set"
			ops = ops[1:]
		default:
			if len(ops) == 1 && !c.has("-e", "--edit") && setting {
				return gitRead("reads git configuration")
			}
		}
	}
	if len(ops) > 0 {
		key = ops[0]
	}
	if setting && len(ops) > 0 {
		value := literal("")
		if len(ops) > 1 {
			value = ops[1]
		}
		if r := c.gitConfigSet(key, value); r != "" {
			return env(r)
		}
	}
	if c.has("--system") {
		return effect{class: airlock.ClassGitWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "changes the system-wide git configuration"}
	}
	e := gitWrite("changes git configuration")
	c.raiseWrites(&e, c.values("-f", "--file")...)
	return e
}

func gitStash(c *call) effect {
	ops := c.operands("-m", "--message", "--pathspec-from-file")
	if len(ops) == 0 {
		return gitWrite("stashes changes")
	}
	switch ops[0].val {
	case "list", "show":
		return gitRead("shows stashes")
	case "drop", "clear":
		return gitDestroy("deletes stashed changes")
	}
	return gitWrite("stashes or restores changes")
}

func gitWorktree(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 || ops[0].val == "list" {
		return gitRead("lists worktrees")
	}
	if ops[0].val == "remove" {
		return gitDestroy("removes a worktree and its files")
	}
	e := gitWrite("changes worktrees")
	if ops[0].val == "add" || ops[0].val == "move" {
		c.raiseWrites(&e, ops[1:]...)
	}
	return e
}

func gitReflog(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "expire" || ops[0].val == "delete" || ops[0].val == "drop") {
		return gitDestroy("deletes reflog entries")
	}
	return gitRead("shows the reflog")
}

func gitCheckout(c *call) effect {
	if c.has("-f", "--force", "--ours", "--theirs", "-p", "--patch", "--pathspec-from-file") {
		return gitDestroy("discards uncommitted changes")
	}
	for _, a := range c.args {
		if a.static && a.val == "--" {
			return gitDestroy("discards changes to files")
		}
	}
	ops := c.operands("-b", "-B", "--orphan", "--conflict", "--track", "-t")
	if len(ops) == 1 && ops[0].static && (ops[0].val == "." || ops[0].glob || strings.HasPrefix(ops[0].val, ":")) {
		return gitDestroy("discards changes to files")
	}
	if len(ops) >= 2 {
		return gitDestroy("restores files from a commit, discarding changes")
	}
	return gitWrite("switches branches")
}

func gitSwitch(c *call) effect {
	if c.has("-f", "--force", "--discard-changes", "-C", "--force-create") {
		return gitDestroy("switches branches, discarding changes or resetting a branch")
	}
	return gitWrite("switches branches")
}

func gitRestore(c *call) effect {
	if c.has("-S", "--staged") && !c.has("-W", "--worktree") {
		return gitWrite("unstages changes")
	}
	return gitDestroy("discards uncommitted changes to files")
}

func gitReset(c *call) effect {
	if c.has("--hard") {
		return gitDestroy("discards commits and uncommitted changes (reset --hard)")
	}
	return gitWrite("moves HEAD or unstages changes")
}

func gitClean(c *call) effect {
	if c.has("-n", "--dry-run") {
		return gitRead("lists untracked files it would delete")
	}
	return gitDestroy("deletes untracked files")
}

func gitRm(c *call) effect {
	switch {
	case c.has("-n", "--dry-run"):
		return gitRead("lists files it would remove")
	case c.has("--cached"):
		return gitWrite("stops tracking files")
	}
	return gitDestroy("deletes files from the work tree")
}

func gitGc(c *call) effect {
	for _, v := range c.values("--prune") {
		if v.val == "now" || v.val == "all" {
			return gitDestroy("deletes unreachable objects now")
		}
	}
	return gitWrite("compacts the repository")
}

func gitPrune(c *call) effect {
	if c.has("-n", "--dry-run") {
		return gitRead("lists unreachable objects")
	}
	return gitDestroy("deletes unreachable objects")
}

func gitUpdateRef(c *call) effect {
	if c.has("-d", "--stdin") {
		return gitDestroy("deletes or rewrites refs")
	}
	return gitWrite("moves a ref")
}

func gitSymbolicRef(c *call) effect {
	if c.has("-d", "--delete") {
		return gitDestroy("deletes a symbolic ref")
	}
	if len(c.operands("-m")) >= 2 {
		return gitWrite("changes a symbolic ref")
	}
	return gitRead("reads a symbolic ref")
}

func gitRebase(c *call) effect {
	for _, x := range c.values("-x", "--exec") {
		c.runWords("git rebase --exec", []arg{x}, input{})
	}
	return gitWrite("rebases commits")
}

func gitBisect(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		return gitRead("shows bisect help")
	}
	switch ops[0].val {
	case "run":
		if len(ops) > 1 {
			c.run("git bisect run", ops[1:], effect{})
		}
		return gitWrite("bisects history")
	case "log", "view", "visualize", "help", "terms":
		return gitRead("shows the bisect state")
	}
	return gitWrite("bisects history")
}

func gitSubmodule(c *call) effect {
	ops := c.operands("-b", "--branch", "--name", "--reference", "--depth", "-j", "--jobs")
	if len(ops) == 0 {
		return gitRead("shows submodules")
	}
	switch ops[0].val {
	case "status", "summary":
		return gitRead("shows submodules")
	case "foreach":
		c.runWords("git submodule foreach", ops[1:], input{})
		return gitWrite("runs a command in each submodule")
	case "update", "add":
		return gitNet(airlock.ClassGitWrite, "fetches submodules")
	}
	return gitWrite("changes submodules")
}

func gitNotes(c *call) effect {
	ops := c.operands("--ref", "-m", "--message", "-F", "--file", "-c", "--reedit-message", "-C", "--reuse-message")
	if len(ops) == 0 || ops[0].val == "list" || ops[0].val == "show" || ops[0].val == "get-ref" {
		return gitRead("shows notes")
	}
	return gitWrite("changes notes")
}

func gitApply(c *call) effect {
	if c.has("--check", "--stat", "--numstat", "--summary") && !c.has("--apply") {
		return gitRead("checks a patch")
	}
	return gitWrite("applies a patch")
}

func gitArchive(c *call) effect {
	e := gitRead("writes an archive of the repository")
	if c.has("--remote") {
		e = gitNet(airlock.ClassGitRead, "fetches an archive from a remote")
	}
	if outs := c.values("-o", "--output"); len(outs) > 0 {
		w := write(airlock.ClassFSWrite, "writes an archive")
		c.raiseWrites(&w, outs...)
		e = worse(e, w)
	}
	gitRunsOpts(c, "--exec")
	return e
}

func gitFormatPatch(c *call) effect {
	e := write(airlock.ClassFSWrite, "writes patch files")
	c.raiseWrites(&e, c.values("-o", "--output-directory")...)
	return e
}

func gitBundle(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "verify" || ops[0].val == "list-heads") {
		return gitRead("reads a bundle")
	}
	e := gitWrite("writes or unpacks a bundle")
	if len(ops) > 1 && ops[0].val == "create" {
		c.raiseWrites(&e, ops[1])
	}
	return e
}

func gitCredential(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "fill" || ops[0].val == "get") {
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads stored git credentials"}
	}
	return write(airlock.ClassFSWrite, "changes stored git credentials")
}

func gitMaintenance(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "start" || ops[0].val == "register") {
		return admin("schedules background git maintenance")
	}
	return gitWrite("runs git maintenance")
}

func gitLFS(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		return gitRead("shows git lfs help")
	}
	switch ops[0].val {
	case "push", "pull", "fetch", "clone":
		return gitNet(airlock.ClassGitWrite, "transfers large files with a remote")
	case "ls-files", "status", "env", "version", "logs":
		return gitRead("shows large files")
	case "track":
		if len(ops) == 1 {
			return gitRead("lists tracked patterns")
		}
	case "migrate":
		return gitDestroy("rewrites history")
	}
	return gitWrite("changes large file settings")
}

func gitTool(c *call) effect {
	for _, x := range c.values("-x", "--extcmd") {
		c.runWords("git difftool --extcmd", []arg{x}, input{})
	}
	return exec("runs a diff or merge tool")
}

func gitSparse(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && ops[0].val == "list" {
		return gitRead("lists sparse checkout patterns")
	}
	return gitWrite("changes sparse checkout")
}

func gitReplace(c *call) effect {
	if c.has("-l", "--list") || len(c.operands()) == 0 {
		return gitRead("lists replacements")
	}
	return gitWrite("replaces objects")
}

func gitHashObject(c *call) effect {
	if c.has("-w") {
		return gitWrite("writes objects")
	}
	return gitRead("hashes files")
}
