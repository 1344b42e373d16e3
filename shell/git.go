package shell

import (
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// git: its global options, its subcommands, and the configuration keys
// that make it run commands.

// gitExecKey reports whether git runs the value of configuration key as a
// command (or loads configuration that may).
func gitExecKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.fsmonitor", "core.askpass", "include.path", "receive.procreceiverefs", "protocol.allow", "ssh.variant",
		"core.worktree", "instaweb.httpd", "sendemail.smtpserver":
		return true
	}
	for _, p := range []string{"alias.", "pager.", "filter.", "includeif.", "url.", "browser.", "difftool.",
		"mergetool.", "man.", "guitool.", "lfs.customtransfer."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	last := k[strings.LastIndexByte(k, '.')+1:]
	switch last {
	case "textconv", "driver", "uploadpack", "receivepack", "allow", "vcs", "tunnel", "update":
		return true
	}
	// core.sshCommand, gpg.ssh.defaultKeyCommand, sendemail.toCmd,
	// core.hooksPath, gpg.x509.program, credential.helper,
	// uploadpack.packObjectsHook, core.gitProxy, sequence.editor...
	for _, s := range []string{"cmd", "command", "program", "helper", "hook", "path", "editor", "proxy"} {
		if strings.HasSuffix(last, s) {
			return true
		}
	}
	return false
}

// gitCommandKey reports whether the value of key is a shell command that
// git runs as such (a pager, an editor, a diff filter): it is analysed
// like any command.
func gitCommandKey(key string) bool {
	k := strings.ToLower(key)
	return k == "core.pager" || k == "core.editor" || k == "sequence.editor" || k == "interactive.difffilter" ||
		strings.HasPrefix(k, "pager.")
}

// gitWriteKey reports whether git writes to the file that key's value
// names (trace2.eventTarget).
func gitWriteKey(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "trace2.") && strings.HasSuffix(k, "target")
}

// gitConfigSet analyses setting git configuration key to value: a pager
// or editor is analysed as a command, an alias as what it runs; the other
// keys that make git run something are privileged, those naming a file it
// writes a write there.
func (c *call) gitConfigSet(key, value arg) effect {
	if !key.static {
		return env("sets git configuration only known at run time")
	}
	k := strings.ToLower(key.val)
	switch {
	case gitCommandKey(k) || strings.HasPrefix(k, "alias."):
		if !value.static {
			return env("sets " + key.val + " to a command only known at run time")
		}
		if alias, ok := strings.CutPrefix(value.val, "!"); ok {
			c.runScript("git "+key.val, alias, input{})
		} else if strings.HasPrefix(k, "alias.") {
			c.runScript("git "+key.val, "git "+value.val, input{})
		} else {
			c.runScript("git "+key.val, value.val, input{})
		}
	case gitExecKey(k):
		return env("sets " + key.val + ", which makes git run a command")
	case gitWriteKey(k):
		e := write(airlock.ClassFSWrite, "makes git write a trace into "+value.text)
		if p, ok := strings.CutPrefix(value.val, "af_unix:"); ok {
			value = literal(strings.TrimPrefix(strings.TrimPrefix(p, "stream:"), "dgram:"))
		}
		c.raiseWrites(&e, value)
		return e
	}
	return effect{}
}

// gitConfigArg analyses a "key=value" given with git -c. A key that is
// neither known to be inert (gitInertKey) nor known for what it runs or
// writes raises the command: git has hundreds of keys, and new ones run
// commands (diff.external, core.fsmonitor, uploadpack.packObjectsHook).
func (c *call) gitConfigArg(a arg) effect {
	if !a.static {
		return env("sets git configuration only known at run time")
	}
	key, val, _ := strings.Cut(a.val, "=")
	if gitInertKey(key) {
		return effect{}
	}
	e := c.gitConfigSet(literal(key), arg{val: val, static: true, text: quote(val)})
	if e.tier == 0 && !gitCommandKey(key) && !strings.HasPrefix(strings.ToLower(key), "alias.") {
		e = exec("sets git configuration " + key + ", which Airlock does not know to be inert")
	}
	return e
}

// gitInertKey reports whether setting git configuration key changes only
// how git shows what it reads: colours, formats, the columns, the order
// of lists, how paths are quoted, how renames are found. The keys and
// their meaning: git-config(1), https://git-scm.com/docs/git-config.
// A key whose value names a program, a command, a hook, a file git reads
// or writes, or a network endpoint is not here.
func gitInertKey(key string) bool {
	k := strings.ToLower(key)
	section, _, _ := strings.Cut(k, ".")
	switch section {
	case "color", "advice", "pretty", "column":
		return !strings.Contains(k, "cmd") && !strings.Contains(k, "command")
	}
	return gitInertKeys[k]
}

var gitInertKeys = stringSet(
	"core.quotepath", "core.abbrev", "core.autocrlf", "core.safecrlf", "core.eol", "core.ignorecase",
	"core.precomposeunicode", "core.commentchar", "core.commentstring", "core.whitespace", "core.filemode",
	"core.preloadindex", "core.bigfilethreshold", "core.warnambiguousrefs", "index.threads", "pack.threads",
	"log.date", "log.decorate", "log.abbrevcommit", "log.follow", "log.showroot", "log.mailmap",
	"log.graphcolors", "log.excludedecoration", "log.initialdecorationset",
	"diff.renames", "diff.algorithm", "diff.noprefix", "diff.mnemonicprefix", "diff.relative", "diff.context",
	"diff.interhunkcontext", "diff.statgraphwidth", "diff.statnamewidth", "diff.colormoved", "diff.colormovedws",
	"diff.submodule", "diff.indentheuristic", "diff.suppressblankempty", "diff.dirstat", "diff.ignoresubmodules",
	"diff.renamelimit", "diff.srcprefix", "diff.dstprefix", "diff.wserrorhighlight",
	"format.pretty", "grep.linenumber", "grep.column", "grep.patterntype", "grep.extendedregexp",
	"grep.fullname", "grep.fallbacktonoindex", "grep.threads",
	"status.short", "status.branch", "status.showuntrackedfiles", "status.relativepaths", "status.showstash",
	"status.aheadbehind", "status.renames", "status.renamelimit", "status.displaycommentprefix",
	"status.submodulesummary", "branch.sort", "tag.sort", "i18n.logoutputencoding", "i18n.commitencoding",
	"blame.date", "blame.coloring", "blame.showemail", "blame.blankboundary", "blame.showroot",
	"user.name", "user.email", "init.defaultbranch", "merge.conflictstyle", "rerere.enabled",
	"feature.manyfiles", "core.untrackedcache", "core.checkstat", "core.trustctime")

// gitGlobals are git's own options, before its subcommand.
var gitGlobals = getopt{short: "Cc", long: names("--git-dir --work-tree --namespace --super-prefix --config-env"),
	optLong: names("--exec-path"), exact: true}

// git parses git's global options, then classifies its subcommand.
func git(c *call) effect {
	p := gitGlobals.split(c.args)
	var risk effect
	dir, known := c.cwd, c.cwd != "" && !c.lost // where git looks for the repository
	here := true                                // no -C: git looks where the action runs
	var workTree []arg
	for _, o := range p.opts {
		switch {
		case o.name == "-C" && o.has:
			here = false
			if v, ok := o.val.pathValue(); ok && o.val.static && !throughLink(v) && known {
				dir = resolvePath(dir, v)
			} else {
				known = false
			}
		case o.name == "--work-tree" && o.has:
			workTree = append(workTree, o.val)
		case o.name == "-c" && o.has:
			risk = worse(risk, c.gitConfigArg(o.val))
		case o.name == "--config-env":
			risk = worse(risk, env("sets git configuration from the environment"))
		case o.name == "--exec-path" && o.has:
			risk = worse(risk, env("runs git programs from "+o.val.val))
		case o.name == "--git-dir" && o.has && !(o.val.static && (o.val.val == ".git" || strings.HasSuffix(o.val.val, "/.git"))):
			// A repository's configuration can run commands (a pager, a
			// gpg.program, core.fsmonitor); a .git directory's is protected
			// (writing it needs a person), another's is a file like any.
			risk = worse(risk, exec("uses the repository at "+o.val.text+", whose configuration may name commands git runs"))
		}
	}
	args := p.ops
	if len(args) > 0 && args[0].static && !gitHome(c, dir, known, here) {
		// A directory below the one the agent works in, or elsewhere,
		// may hold another repository: a bare one is a directory of plain
		// files (HEAD, objects, refs, config) that git finds by itself, and
		// its configuration names commands git runs (a pager, gpg.program,
		// core.fsmonitor, a diff driver).
		risk = worse(risk, exec("uses the repository git finds from "+orElse(dir, "a directory only known at run time")+
			", whose configuration may name commands git runs"))
	}
	var e effect
	switch {
	case len(args) == 0:
		e = gitRead("shows git help or version")
	case !args[0].static:
		e = unknown("runs git with a subcommand only known at run time")
	default:
		sub := args[0].val
		r := gitCommands()[sub]
		if r == nil && strings.HasPrefix(sub, "credential-") {
			r = gitCredential // credential-store, credential-libsecret, a helper of any name
		}
		if r == nil && strings.HasPrefix(sub, "remote-") {
			r = gitRemoteHelper
		}
		if r != nil {
			c.gitSub = sub
			e = c.delegate(args[1:], r)
			c.gitSub = ""
		} else {
			e = exec("runs git " + sub + ", which Airlock does not know (an alias or an extension)")
			e.generic = true
		}
	}
	for _, a := range c.args {
		if a.static && strings.Contains(a.val, "ext::") {
			return unknown("uses git's ext:: transport, which runs a command")
		}
	}
	if e.tier < airlock.TierPrivileged && len(args) > 0 {
		c.gitReadsFiles(&e, args, dir, workTree)
	}
	if risk.tier > e.tier && !e.none {
		return risk
	}
	return e
}

// gitHome reports whether dir, where git looks for the repository, is the
// directory the action runs in or one above it (where the repository the
// agent works in is found). When the action's directory is not known, only
// a git run where the action runs (no cd, no -C) is.
func gitHome(c *call, dir string, known, here bool) bool {
	if c.start == "" {
		return here && c.cwd == "" && !c.lost
	}
	return known && (dir == c.start || strings.HasPrefix(c.start, strings.TrimSuffix(dir, "/")+"/"))
}

// gitReadsFiles raises e by the files a git command reads outside what the
// repository holds: a work tree given elsewhere (--work-tree), the files
// git grep and git diff read with --no-index, --untracked or
// --no-exclude-standard (every file under the directory, hidden ones
// included), and the REV:PATH objects it names (HEAD:.env).
func (c *call) gitReadsFiles(e *effect, args []arg, dir string, workTree []arg) {
	sub := args[0].val
	rest := args[1:]
	for _, w := range workTree {
		if w.static {
			c.raiseReadTree(e, literal(resolvePath(dir, w.val)))
		} else if !w.lenient {
			*e = worse(*e, maySecret("reads the work tree at "+w.text+", only known at run time"))
		}
	}
	if (sub == "grep" || sub == "diff") && gitHas(rest, "--no-index", "--untracked", "--no-exclude-standard") {
		tree := literal(orElse(dir, "."))
		tree.under = true
		ops := c.operands()
		n := len(ops)
		for _, op := range ops[1:n] {
			if op.static && op.val != "--" && op.val != sub {
				o := literal(resolvePath(dir, op.val))
				o.under = true
				c.raiseReads(e, o)
			}
		}
		if sub == "grep" {
			c.raiseReadTree(e, tree)
		}
	}
	for _, a := range rest {
		if !a.static || strings.Contains(a.val, "://") || strings.HasPrefix(a.val, "-") {
			continue
		}
		if _, path, ok := strings.Cut(a.val, ":"); ok && path != "" {
			c.raiseReads(e, literal(resolvePath(dir, strings.TrimPrefix(path, "./"))))
		}
	}
}

// gitOptions is how a git subcommand, which parses its options with
// parse-options, spells the ones a rule asks about: short options bundle
// and take the rest of the word or the next one (-ix CMD); long ones take
// "=value" or the next word and may be cut to any unique prefix (--exe
// CMD). Airlock lists only the options it asks about, so a prefix needs
// two letters, and one that several of them share counts as each (git
// refuses it, so counting it costs nothing). shorts are the subcommand's
// short options that take a value, to walk bundles.
func gitOptions(shorts string, opts ...string) getopt {
	return getopt{short: shorts, long: opts, partial: true}
}

// gitValues returns the values of the options want (-x, --exec) of one of
// git's subcommands.
func gitValues(args []arg, shorts string, want ...string) []arg {
	return gitOptions(shorts, want...).values(args, want...)
}

// gitHas reports whether one of opts is given to a parse-options
// subcommand, long options possibly shortened (--unsafe for
// --unsafe-paths), short ones possibly bundled.
// gitHas reports whether the subcommand deciding is given one of opts,
// reading its words as git does where options.txt lists its options: a
// value is not an option (git tag -m -l v1 makes a tag; git apply
// --exclude --check applies). Where it does not, or a word is an option
// the list does not know, every word that looks like one counts.
func (c *call) gitHas(opts ...string) bool {
	if spec := optionSpecs()["git "+c.gitSub]; spec != nil && c.gitSub != "" {
		read, _, unknown := spec.read(c.args)
		if unknown == "" {
			for _, o := range read {
				if slices.Contains(opts, o.name) {
					return true
				}
			}
			return false
		}
	}
	return gitHas(c.args, opts...)
}

func gitHas(args []arg, opts ...string) bool {
	return getopt{flags: opts, partial: true}.has(args, opts...)
}

// gitReader is a subcommand that reads the repository; --output makes
// it write a file.
func gitReader(reason string) rule {
	return func(c *call) effect {
		e := gitRead(reason)
		c.writesTo(&e, "writes git output into a file", c.values("--output")...)
		return e
	}
}

func gitWriter(reason string) rule { return fixed(gitWrite(reason)) }

// gitIf is subcommand sub, which does yes when one of opts
// (space-separated) is given, and no otherwise. Its options are read as
// git reads them (options.txt): a value is not an option (git clean -e -n
// -f deletes), and the last of an option and its negation wins (git clean
// -n --no-dry-run deletes).
func gitIf(sub, opts string, yes, no effect) rule {
	list := names(opts)
	return func(c *call) effect {
		on := false
		set := func(name string) {
			switch {
			case slices.Contains(list, name):
				on = true
			case strings.HasPrefix(name, "--no-") && slices.Contains(list, "--"+name[len("--no-"):]):
				on = false
			}
		}
		if spec := optionSpecs()["git "+sub]; spec != nil {
			read, _, _ := spec.read(c.args)
			for _, o := range read {
				set(o.name)
			}
		} else {
			for i, a := range c.args {
				if a.static && a.val == "--" {
					break
				}
				if a.static && strings.HasPrefix(a.val, "--no-") {
					set(a.val)
				} else if gitHas(c.args[i:i+1], list...) {
					on = true
				}
			}
		}
		if on {
			return yes
		}
		return no
	}
}

// gitOutputs is a subcommand that changes the repository and writes the
// files its options or first operands name.
func gitOutputs(reason string, shorts string, opts []string, operands int) rule {
	return func(c *call) effect {
		e := gitWrite(reason)
		c.raiseWrites(&e, gitValues(c.args, shorts, opts...)...)
		if ops := c.operands(); operands > 0 && len(ops) > 0 {
			c.raiseWrites(&e, ops[:min(operands, len(ops))]...)
		}
		return e
	}
}

var gitCommands = sync.OnceValue(buildGitCommands)

func buildGitCommands() map[string]rule {
	gitCommands := map[string]rule{}
	for _, name := range strings.Fields(`status log diff show blame annotate describe shortlog rev-parse rev-list
		ls-files ls-tree cat-file merge-base for-each-ref name-rev check-ignore check-attr check-ref-format
		check-mailmap count-objects help version whatchanged show-ref show-branch var verify-commit verify-tag
		verify-pack range-diff cherry diff-tree diff-index diff-files get-tar-commit-id
		column fmt-merge-msg stripspace patch-id merge-tree show-index rerere-diff`) {
		gitCommands[name] = gitReader("reads the repository")
	}
	for _, name := range strings.Fields(`add commit merge cherry-pick revert mv am read-tree write-tree
		commit-tree mktree mktag unpack-objects pack-refs repack prune-packed merge-index rerere
		update-server-info unpack-file`) {
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
		"checkout": gitCheckout, "restore": gitRestore, "rm": gitRm, "gc": gitGc,
		"filter-branch": gitFilterBranch, "filter-repo": fixed(gitDestroy("rewrites history")),
		"symbolic-ref": gitSymbolicRef, "rebase": gitRunning("git rebase --exec", "xsXC", "-x --exec", gitWrite("rebases commits")), "bisect": gitBisect,
		"submodule": gitSubmodule, "notes": gitNotes, "apply": gitApply, "am": gitApply, "archive": gitArchive,
		"format-patch": gitFormatPatch, "bundle": gitBundle, "send-email": gitSendEmail,
		"daemon":       fixed(net(airlock.ClassNetConnect, "serves repositories")),
		"instaweb":     gitInstaweb,
		"http-backend": fixed(net(airlock.ClassNetConnect, "serves repositories")),
		"credential":   gitCredential,
		"maintenance":  gitMaintenance, "lfs": gitLFS, "hook": fixed(exec("runs a git hook")),
		"difftool":        gitRunning("git difftool --extcmd", "xtyO", "-x --extcmd", exec("runs a diff or merge tool")),
		"mergetool":       gitRunning("git difftool --extcmd", "xtyO", "-x --extcmd", exec("runs a diff or merge tool")),
		"sparse-checkout": gitSparse, "replace": gitReplace,
		"update-index": gitWriter("changes the index"), "range-diff": gitReader("compares commit ranges"),
		"grep": gitGrep, "interpret-trailers": gitTrailers, "merge-file": gitMergeFile, "merge-index": gitMergeIndex,
		"request-pull":   gitFetch(airlock.ClassGitRead, "summarises changes, checking the remote"),
		"checkout-index": gitOutputs("writes files from the index", "", []string{"--prefix"}, 0),
		"fast-export":    gitOutputs("exports the repository", "", []string{"--export-marks"}, 0),
		"fast-import":    gitOutputs("imports into the repository", "", []string{"--export-marks", "--export-pack-edges"}, 0),
		"pack-objects":   gitOutputs("writes packs", "", nil, 1),
		"index-pack":     gitOutputs("writes a pack index", "o", []string{"-o"}, 0),
		"mailsplit":      gitOutputs("splits a mailbox", "o", []string{"-o"}, 0),
		"bugreport":      gitOutputs("writes a bug report", "os", []string{"-o", "--output-directory"}, 0),
		"diagnose":       gitOutputs("writes a diagnostics archive", "os", []string{"-o", "--output-directory"}, 0),
		"imap-send":      fixed(net(airlock.ClassNetConnect, "uploads patches to an IMAP folder")),
		"send-pack":      gitFetch(airlock.ClassGitWrite, "pushes to a remote"),
		"fetch-pack":     gitFetch(airlock.ClassGitWrite, "fetches from a remote"),
		"upload-pack":    fixed(gitRead("serves a repository to a fetch")),
		"upload-archive": fixed(gitRead("serves an archive of a repository")),
		"receive-pack":   fixed(gitWrite("receives a push, running the repository's hooks")),
		"http-fetch":     fixed(gitNet(airlock.ClassGitWrite, "fetches over HTTP")),
		"remote-ext":     gitRemoteExt,
		"http-push":      fixed(gitNet(airlock.ClassGitWrite, "pushes over HTTP")),
		// Subcommands that one of their options turns into something else.
		"switch": gitIf("switch", "-f --force --discard-changes -C --force-create",
			gitDestroy("switches branches, discarding changes or resetting a branch"), gitWrite("switches branches")),
		"reset": gitIf("reset", "--hard", gitDestroy("discards commits and uncommitted changes (reset --hard)"),
			gitWrite("moves HEAD or unstages changes")),
		"clean": gitIf("clean", "-n --dry-run", gitRead("lists untracked files it would delete"),
			gitDestroy("deletes untracked files")),
		"prune": gitIf("prune", "-n --dry-run", gitRead("lists unreachable objects"),
			gitDestroy("deletes unreachable objects")),
		"update-ref":  gitIf("update-ref", "-d --stdin", gitDestroy("deletes or rewrites refs"), gitWrite("moves a ref")),
		"hash-object": gitIf("hash-object", "-w", gitWrite("writes objects"), gitRead("hashes files")),
		"fsck": gitIf("fsck", "--lost-found", gitWrite("checks the repository, writing lost objects into .git/lost-found"),
			gitRead("checks the repository")),
	} {
		gitCommands[name] = r
	}
	return gitCommands
}

// gitRunsOpts parses options whose value git runs as a command
// (--upload-pack, --receive-pack, --exec), in every spelling (see
// gitValues).
func gitRunsOpts(c *call, via, shorts string, opts ...string) {
	for _, v := range gitValues(c.args, shorts, opts...) {
		c.runWords(via, []arg{v}, input{})
	}
}

func gitPush(c *call) effect {
	gitRunsOpts(c, "git --receive-pack", "o", "--receive-pack", "--exec")
	destroy := func(reason string) effect {
		return effect{class: airlock.ClassGitWrite, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: reason}
	}
	switch {
	case c.gitHas("-f", "--force", "--force-with-lease", "--force-if-includes"):
		return destroy("pushes to a remote with --force")
	case c.gitHas("--mirror"):
		return destroy("mirrors to a remote, overwriting its refs")
	case c.gitHas("-d", "--delete"):
		return destroy("deletes remote refs")
	case c.gitHas("--prune"):
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

// gitRunning is a subcommand that does e and runs the values of opts
// (space-separated) as commands; shorts are its short options that take a
// value, to walk bundles.
func gitRunning(via, shorts, opts string, e effect) rule {
	list := names(opts)
	return func(c *call) effect {
		gitRunsOpts(c, via, shorts, list...)
		return e
	}
}

func gitFetch(class airlock.Class, reason string) rule {
	return gitRunning("git --upload-pack", "sXjo", "--upload-pack --receive-pack --exec", gitNet(class, reason))
}

// gitRemoteHelper: the transport helpers (remote-http, remote-fd,
// remote-<vcs>) talk to a remote.
func gitRemoteHelper(*call) effect {
	return gitNet(airlock.ClassGitWrite, "talks to a remote through a transport helper")
}

// gitRemoteExt: git remote-ext REMOTE URL runs URL as a command, git's
// escapes aside (%S is the service it serves).
func gitRemoteExt(c *call) effect {
	if ops := c.operands(); len(ops) > 1 {
		if !ops[1].static {
			return unknown("runs a command only known at run time as a git transport")
		}
		r := strings.NewReplacer("%S", "git-upload-pack", "%s", "upload-pack", "%G", "", "%V", "", "%%", "%", "% ", " ")
		c.runScript("git remote-ext", r.Replace(strings.TrimPrefix(ops[1].val, "ext::")), input{})
	}
	return gitNet(airlock.ClassGitWrite, "talks to a remote through a command")
}

// gitSubConfig returns what the configuration given to a subcommand
// ("clone -c key=value", --template, which installs hooks) makes git do.
func gitSubConfig(c *call) effect {
	var e effect
	for _, v := range gitValues(c.args, "cobuj", "-c", "--config") {
		e = worse(e, c.gitConfigArg(v))
	}
	if t := gitValues(c.args, "cobuj", "--template"); len(t) > 0 {
		e = worse(e, env("installs hooks from template "+t[0].text+", which run on checkout"))
	}
	return e
}

func gitClone(c *call) effect {
	gitRunsOpts(c, "git --upload-pack", "cobuj", "-u", "--upload-pack")
	e := gitNet(airlock.ClassGitWrite, "clones a repository")
	ops := c.operands("-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able",
		"--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude", "-c", "--config", "--template",
		"-j", "--jobs", "--filter", "--server-option", "--bundle-uri", "--ref-format")
	dest := literal(".")
	if len(ops) > 1 {
		dest = ops[1]
	}
	c.raiseWrites(&e, append(gitValues(c.args, "cobuj", "--separate-git-dir"), dest)...)
	return worse(e, gitSubConfig(c))
}

func gitInit(c *call) effect {
	e := gitWrite("creates a repository")
	ops := c.operands("--template", "--separate-git-dir", "-b", "--initial-branch", "--object-format", "--ref-format", "--shared")
	dir := literal(".")
	if len(ops) > 0 {
		dir = ops[0]
	}
	c.raiseWrites(&e, append(gitValues(c.args, "b", "--separate-git-dir"), dir)...)
	return worse(e, gitSubConfig(c))
}

func gitBranch(c *call) effect {
	switch {
	case c.gitHas("-D"), c.gitHas("-d", "--delete") && c.gitHas("-f", "--force"):
		return gitDestroy("deletes a branch, even if unmerged")
	case c.gitHas("-M", "-C"):
		return gitDestroy("renames or copies a branch over an existing one")
	case c.gitHas("-d", "--delete"):
		return gitWrite("deletes a branch")
	case c.gitHas("-m", "--move", "-c", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
		return gitWrite("renames, copies or configures a branch")
	}
	ops := c.operands("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format",
		"--sort", "--column", "--color", "-t", "--track")
	if len(ops) == 0 || c.gitHas("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "--verbose", "--show-current") {
		return gitRead("lists branches")
	}
	if c.gitHas("-f", "--force") {
		return gitDestroy("resets a branch with --force")
	}
	return gitWrite("creates a branch")
}

func gitTag(c *call) effect {
	switch {
	case c.gitHas("-d", "--delete"):
		return gitDestroy("deletes a tag")
	case c.gitHas("-v", "--verify", "-l", "--list", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged"):
		return gitRead("lists tags")
	}
	ops := c.operands("-m", "--message", "-F", "--file", "-u", "--local-user", "--cleanup", "--sort", "--format", "--column", "-n")
	if len(ops) == 0 {
		return gitRead("lists tags")
	}
	if c.gitHas("-f", "--force") {
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
	ops := c.operands("-f", "--file", "--blob", "--default", "--comment", "--type", "--value")
	if c.gitHas("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
		return c.gitConfigRead(ops)
	}
	key := arg{}
	setting := !c.gitHas("--unset", "--unset-all", "--remove-section", "--rename-section")
	if len(ops) > 0 {
		switch ops[0].val {
		case "list", "get":
			return c.gitConfigRead(ops[1:])
		case "set", "unset", "rename-section", "remove-section", "edit":
			setting = ops[0].val == "set"
			ops = ops[1:]
		default:
			if len(ops) == 1 && !c.gitHas("-e", "--edit") && setting {
				return c.gitConfigRead(ops)
			}
		}
	}
	if len(ops) > 0 {
		key = ops[0]
	}
	var set effect
	if setting && len(ops) > 0 {
		value := literal("")
		if len(ops) > 1 {
			value = ops[1]
		}
		set = c.gitConfigSet(key, value)
	}
	if c.gitHas("--system") {
		return worse(effect{class: airlock.ClassGitWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "changes the system-wide git configuration"}, set)
	}
	e := gitWrite("changes git configuration")
	c.raiseWrites(&e, gitValues(c.args, "f", "-f", "--file")...)
	return worse(e, set)
}

// gitConfigRead is a git config that reads: the file it reads (-f, an
// INI file such as ~/.aws/credentials reads as well as a git one), and the
// keys it asks for. A key or pattern that names where git keeps a
// credential (http.<url>.extraheader, as actions/checkout leaves it; a
// password or token) reads a secret; so does
// --get-urlmatch http, which prints every http.<url>.* setting.
func (c *call) gitConfigRead(keys []arg) effect {
	e := gitRead("reads git configuration")
	c.raiseReads(&e, gitValues(c.args, "f", "-f", "--file")...)
	urlmatch := c.gitHas("--get-urlmatch")
	for _, k := range keys {
		switch {
		case !k.static:
			if !k.lenient {
				e = worse(e, maySecret("reads a git setting named only at run time, which may hold a credential"))
			}
		case gitCredentialKey(k.val) || urlmatch && strings.EqualFold(k.val, "http"):
			e = worse(e, maySecret("reads git setting "+k.text+", which holds a credential"))
		}
		if urlmatch {
			break // the URL follows the section
		}
	}
	return e
}

// gitCredentialKey reports whether a git configuration key, or a pattern
// of keys (--get-regexp), names where a credential is kept.
func gitCredentialKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"extraheader", "password", "passwd", "token", "secret", "authorization", "cookiefile"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func gitStash(c *call) effect {
	ops := c.operands("-m", "--message", "--pathspec-from-file")
	if len(ops) == 0 {
		return gitWrite("stashes changes")
	}
	switch ops[0].val {
	case "list", "show":
		return gitReader("shows stashes")(c)
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
	return gitReader("shows the reflog")(c)
}

func gitCheckout(c *call) effect {
	if c.gitHas("-f", "--force", "--ours", "--theirs", "-p", "--patch", "--pathspec-from-file") {
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

func gitRestore(c *call) effect {
	if c.gitHas("-S", "--staged") && !c.gitHas("-W", "--worktree") {
		return gitWrite("unstages changes")
	}
	return gitDestroy("discards uncommitted changes to files")
}

func gitRm(c *call) effect {
	switch {
	case c.gitHas("-n", "--dry-run"):
		return gitRead("lists files it would remove")
	case c.gitHas("--cached"):
		return gitWrite("stops tracking files")
	}
	return gitDestroy("deletes files from the work tree")
}

func gitGc(c *call) effect {
	for _, v := range gitValues(c.args, "", "--prune") {
		if v.val == "now" || v.val == "all" {
			return gitDestroy("deletes unreachable objects now")
		}
	}
	return gitWrite("compacts the repository")
}

func gitSymbolicRef(c *call) effect {
	if c.gitHas("-d", "--delete") {
		return gitDestroy("deletes a symbolic ref")
	}
	if len(c.operands("-m")) >= 2 {
		return gitWrite("changes a symbolic ref")
	}
	return gitRead("reads a symbolic ref")
}

func gitBisect(c *call) effect {
	ops := c.operands()
	if len(ops) == 0 {
		return gitRead("shows bisect help")
	}
	switch ops[0].val {
	case "run":
		// The command is every word after "run", options included.
		if rest := gitAfter(c.args, "run"); len(rest) > 0 {
			c.run("git bisect run", rest, effect{})
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
		rest := gitAfter(c.args, "foreach")
		for len(rest) > 0 && rest[0].static && (rest[0].val == "--recursive" || rest[0].val == "-q" || rest[0].val == "--quiet") {
			rest = rest[1:]
		}
		if len(rest) > 0 {
			c.runWords("git submodule foreach", rest, input{})
		}
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

// gitApply: git apply and git am write the files the patch names;
// --unsafe-paths lets them be anywhere, --directory puts them under a
// folder.
func gitApply(c *call) effect {
	if c.gitHas("--check", "--stat", "--numstat", "--summary") && !c.gitHas("--apply") {
		return gitRead("checks a patch")
	}
	e := gitWrite("applies a patch")
	if c.gitHas("--unsafe-paths") {
		e = effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged,
			reason: "applies a patch to files outside the work tree (--unsafe-paths), wherever the patch says"}
	}
	c.raiseWrites(&e, gitValues(c.args, "pCS", "--directory", "--build-fake-ancestor")...)
	return e
}

func gitArchive(c *call) effect {
	e := gitRead("writes an archive of the repository")
	if len(gitValues(c.args, "o", "--remote")) > 0 {
		e = gitNet(airlock.ClassGitRead, "fetches an archive from a remote")
	}
	c.writesTo(&e, "writes an archive", gitValues(c.args, "o", "-o", "--output")...)
	gitRunsOpts(c, "git --exec", "o", "--exec")
	return e
}

func gitFormatPatch(c *call) effect {
	e := write(airlock.ClassFSWrite, "writes patch files")
	c.raiseWrites(&e, gitValues(c.args, "ovv", "-o", "--output-directory", "--output")...)
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

func gitSparse(c *call) effect {
	ops := c.operands()
	if len(ops) > 0 && ops[0].val == "list" {
		return gitRead("lists sparse checkout patterns")
	}
	return gitWrite("changes sparse checkout")
}

func gitReplace(c *call) effect {
	if c.gitHas("-l", "--list") || len(c.operands()) == 0 {
		return gitRead("lists replacements")
	}
	return gitWrite("replaces objects")
}

// gitAfter returns the words after the first operand word, the command
// that bisect run or submodule foreach runs.
func gitAfter(args []arg, word string) []arg {
	for i, a := range args {
		if a.static && a.val == word {
			return args[i+1:]
		}
	}
	return nil
}

var gitGrepOpts = getopt{short: "efABCm", optShort: "O", optLong: names("--open-files-in-pager"), partial: true}

// gitGrep: -O[PAGER] (--open-files-in-pager[=PAGER]) runs PAGER with the
// files that match.
func gitGrep(c *call) effect {
	for _, pager := range gitGrepOpts.values(c.args, "-O", "--open-files-in-pager") {
		if pager.val != "" {
			c.runWords("git grep -O", []arg{literal(pager.val)}, input{})
		}
	}
	return gitReader("searches the repository")(c)
}

// gitTrailers: interpret-trailers --in-place rewrites the files it is given.
func gitTrailers(c *call) effect {
	if !c.gitHas("--in-place") {
		return gitRead("formats trailers")
	}
	e := write(airlock.ClassFSWrite, "adds trailers to files in place")
	c.raiseWrites(&e, c.operands("--trailer", "--where", "--if-exists", "--if-missing")...)
	return e
}

// gitMergeFile writes the merge into its first file, unless -p prints it.
func gitMergeFile(c *call) effect {
	if c.gitHas("-p", "--stdout") {
		return gitRead("merges files, printing the result")
	}
	e := write(airlock.ClassFSWrite, "merges into a file")
	if ops := c.operands("-L"); len(ops) > 0 {
		c.raiseWrites(&e, ops[0])
	}
	return e
}

// gitMergeIndex runs its first operand, a merge program, for each file.
func gitMergeIndex(c *call) effect {
	if ops := c.operands(); len(ops) > 0 {
		c.run("git merge-index", ops[:1], effect{})
	}
	return gitWrite("merges files with a program")
}

// gitFilterBranch rewrites history, running each filter as a shell command.
func gitFilterBranch(c *call) effect {
	for _, f := range []string{"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter",
		"--commit-filter", "--tag-name-filter"} {
		for _, x := range c.values(f) {
			c.runWords("git filter-branch "+f, []arg{x}, input{})
		}
	}
	return gitDestroy("rewrites history")
}

// gitSendEmail sends the files it is given; its -cmd options and an
// --smtp-server that is a path run programs.
func gitSendEmail(c *call) effect {
	gitRunsOpts(c, "git send-email", "", "--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd")
	for _, s := range gitValues(c.args, "", "--smtp-server") {
		if strings.HasPrefix(s.val, "/") || strings.HasPrefix(s.val, "~") || !s.static {
			c.runWords("git send-email --smtp-server", []arg{s}, input{})
		}
	}
	e := net(airlock.ClassNetConnect, "sends patches by email")
	c.raiseSent(&e)
	return e
}

// gitInstaweb serves a web interface with --httpd and opens --browser.
func gitInstaweb(c *call) effect {
	gitRunsOpts(c, "git instaweb --httpd", "dbp", "-d", "--httpd")
	gitRunsOpts(c, "git instaweb --browser", "dbp", "-b", "--browser")
	return net(airlock.ClassNetConnect, "serves a web interface")
}
