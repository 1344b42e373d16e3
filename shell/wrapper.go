package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Wrappers: programs classified by what they run.
var wrappers = map[string]rule{
	"sudo": sudo, "sudoedit": sudo, "doas": doas, "pkexec": privWrapper("pkexec", optSpec{long: []string{"--user"}}, 0),
	"run0": privWrapper("run0", optSpec{short: "uDg", long: []string{"--user", "--chdir", "--group",
		"--unit", "--property", "--description", "--slice", "--nice", "--setenv", "--machine"}}, 0),
	"su": su, "runuser": su,
	"chroot": privWrapper("chroot", optSpec{long: []string{"--userspec", "--groups"}}, 1),
	"nsenter": privWrapper("nsenter", optSpec{short: "tSGwr", long: []string{"--target", "--setuid",
		"--setgid", "--wd", "--root"}}, 0),
	"unshare": privWrapper("unshare", optSpec{short: "S", long: []string{"--setuid", "--setgid",
		"--map-user", "--map-group", "--propagation", "--root", "--wd"}}, 0),
	"systemd-run": privWrapper("systemd-run", optSpec{short: "pEMHu", long: []string{"--unit",
		"--property", "--setenv", "--machine", "--host", "--uid", "--gid", "--nice", "--working-directory",
		"--slice", "--description", "--on-calendar", "--on-active", "--on-boot", "--on-startup",
		"--on-unit-active", "--on-unit-inactive", "--timer-property", "--path-property", "--socket-property",
		"--service-type"}}, 0),
	"env":   envRule,
	"nohup": wrapper("nohup", optSpec{}, 0),
	"time":  timeRule,
	"nice":  wrapper("nice", optSpec{short: "n", long: []string{"--adjustment"}}, 0),
	"ionice": wrapper("ionice", optSpec{short: "cnpPu", long: []string{"--class", "--classdata",
		"--pid", "--pgid", "--uid"}}, 0),
	"stdbuf":     wrapper("stdbuf", optSpec{short: "ioe", long: []string{"--input", "--output", "--error"}}, 0),
	"setsid":     wrapper("setsid", optSpec{}, 0),
	"timeout":    wrapper("timeout", optSpec{short: "ks", long: []string{"--kill-after", "--signal"}}, 1),
	"gtimeout":   wrapper("timeout", optSpec{short: "ks", long: []string{"--kill-after", "--signal"}}, 1),
	"chrt":       chrt,
	"taskset":    taskset,
	"flock":      flock,
	"unbuffer":   wrapper("unbuffer", optSpec{}, 0),
	"chronic":    wrapper("chronic", optSpec{}, 0),
	"caffeinate": wrapper("caffeinate", optSpec{short: "tw"}, 0),
	"xvfb-run": wrapper("xvfb-run", optSpec{short: "nsfewp", long: []string{"--server-num",
		"--server-args", "--auth-file", "--error-file", "--wait", "--xauth-protocol"}}, 0),
	"dbus-run-session": wrapper("dbus-run-session", optSpec{long: []string{"--config-file", "--dbus-daemon"}}, 0),
	"proxychains":      wrapper("proxychains", optSpec{short: "f"}, 0),
	"proxychains4":     wrapper("proxychains", optSpec{short: "f"}, 0),
	"torsocks":         wrapper("torsocks", optSpec{short: "uPa", long: []string{"--user", "--pass", "--address", "--port"}}, 0),
	"firejail":         wrapper("firejail", optSpec{}, 0),
	"strace":           tracer("strace", optSpec{short: "eopusaEIOSPbXU"}),
	"ltrace":           tracer("ltrace", optSpec{short: "eopusaAnDFlxw"}),
	"watch":            watch,
	"command":          commandRule,
	"builtin":          builtinRule,
	"exec":             execRule,
	"xargs":            xargs,
	"parallel":         parallel,
	"find":             find,
	"fd":               fd, "fdfind": fd,
	"sh": posixShell, "bash": posixShell, "rbash": posixShell, "zsh": posixShell, "dash": posixShell, "ksh": posixShell,
	"mksh": posixShell, "pdksh": posixShell, "ash": posixShell, "yash": posixShell, "posh": posixShell, "ksh93": posixShell,
	"fish": foreignShell, "csh": foreignShell, "tcsh": foreignShell, "nu": foreignShell,
	"pwsh": foreignShell, "powershell": foreignShell, "elvish": foreignShell, "xonsh": foreignShell,
	"busybox":   busybox,
	"ssh":       ssh,
	"script":    scriptRule,
	"direnv":    direnv,
	"nix-shell": nixShell,
}

// wrapper is a program that runs the command after its options and skip
// more operands (timeout's DURATION), and adds nothing of its own.
func wrapper(via string, o optSpec, skip int) rule {
	return func(c *call) effect {
		_, rest := splitOpts(c.args, o)
		if len(rest) <= skip {
			return read("runs no command")
		}
		c.run(via, rest[skip:], effect{})
		return effect{none: true}
	}
}

// privWrapper is a program that runs a command with more rights than the
// agent's: what it runs is at least privileged.
func privWrapper(via string, o optSpec, skip int) rule {
	return func(c *call) effect {
		_, rest := splitOpts(c.args, o)
		if len(rest) <= skip {
			return unknown("opens an interactive shell with " + via)
		}
		c.run(via, rest[skip:], admin("runs with "+via))
		return effect{none: true}
	}
}

var sudoOpts = optSpec{short: "ugpCDhrtTUR", long: []string{
	"--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type",
	"--command-timeout", "--other-user", "--chroot",
}}

func sudo(c *call) effect {
	opts, rest := splitOpts(c.args, sudoOpts)
	user := "root"
	if u, ok := optVal(opts, "-u", "--user"); ok {
		user = u.text
	}
	switch {
	case c.name == "sudoedit" || optHas(opts, "-e", "--edit"):
		e := effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "edits files as " + user}
		return e
	case optHas(opts, "-l", "--list"):
		return read("lists what sudo allows")
	case len(rest) > 0:
	case optHas(opts, "-i", "-s", "--login", "--shell"):
		return unknown("opens an interactive shell as " + user)
	case optHas(opts, "-v", "--validate"):
		return admin("refreshes the cached sudo credentials")
	case optHas(opts, "-k", "-K", "--reset-timestamp", "--remove-timestamp"):
		return read("forgets the cached sudo credentials")
	default:
		return read("prints sudo's usage or version")
	}
	reason, cmd := c.envAssigns(rest, "sudo")
	if len(cmd) == 0 {
		return unknown("opens an interactive shell as " + user)
	}
	n := c.run("sudo", cmd, admin("runs as "+user))
	if d, ok := optVal(opts, "-D", "--chdir"); ok {
		n.cwd, n.setCwd = cwdArg(c, d), true
	}
	if reason != "" {
		return env(reason)
	}
	return effect{none: true}
}

// cwdArg is the directory a wrapper changes to ("" when unknown).
func cwdArg(c *call, d arg) string {
	if !d.static || d.glob {
		return ""
	}
	if d.val != "" && d.val[0] != '/' && d.val[0] != '~' && c.cwd == "" {
		return ""
	}
	return c.resolve(d.val)
}

func doas(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "uC"})
	user := "root"
	if u, ok := optVal(opts, "-u"); ok {
		user = u.text
	}
	if len(rest) == 0 {
		if optHas(opts, "-C") {
			return read("checks the doas configuration")
		}
		if optHas(opts, "-L") {
			return read("forgets cached doas credentials")
		}
		return unknown("opens an interactive shell as " + user)
	}
	c.run("doas", rest, admin("runs as "+user))
	return effect{none: true}
}

// su handles su and runuser: "su -c CMD [user]", "runuser -u USER -- CMD".
func su(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "cgGswu", long: []string{"--command", "--session-command",
		"--group", "--supp-group", "--shell", "--whitelist-environment", "--user"}})
	user := "root"
	for _, r := range rest {
		if r.static && r.val != "-" && !strings.HasPrefix(r.val, "-") {
			user = r.text
			break
		}
	}
	if u, ok := optVal(opts, "-u", "--user"); ok {
		user = u.text
	}
	floor := admin("runs as " + user)
	// Options may follow the user name: look for -c everywhere.
	if cmd, ok := optVal(opts, "-c", "--command", "--session-command"); ok || c.has("-c", "--command") {
		if !ok {
			cmd, _ = c.value("-c", "--command")
		}
		if !cmd.static {
			return unknown("runs a command only known at run time as " + user)
		}
		n := c.runScript("su -c", cmd.val, c.in)
		n.floor = floor
		return effect{none: true}
	}
	if _, ok := optVal(opts, "-u", "--user"); ok && len(rest) > 0 {
		c.run(c.name, rest, floor)
		return effect{none: true}
	}
	return unknown("opens an interactive shell as " + user)
}

func envRule(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "uCS", long: []string{"--unset", "--chdir", "--split-string"}})
	if len(rest) > 0 && rest[0].static && rest[0].val == "-" {
		rest = rest[1:] // "-" is -i
	}
	reason, cmd := c.envAssigns(rest, "env")
	e := effect{none: true}
	if reason != "" {
		e = env(reason)
	}
	if s, ok := optVal(opts, "-S", "--split-string"); ok {
		if !s.static {
			return unknown("runs a command only known at run time")
		}
		script := s.val
		if len(cmd) > 0 {
			script += " " + joinTexts(cmd)
		}
		c.runScript("env -S", script, c.in)
		return e
	}
	if len(cmd) == 0 {
		return inert("prints the environment")
	}
	n := c.run("env", cmd, effect{})
	if d, ok := optVal(opts, "-C", "--chdir"); ok {
		n.cwd, n.setCwd = cwdArg(c, d), true
	}
	return e
}

// timeRule is /usr/bin/time, which may also write its report to a file.
func timeRule(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "fo", long: []string{"--format", "--output"}})
	e := effect{none: true}
	if out, ok := optVal(opts, "-o", "--output"); ok {
		e = write(airlock.ClassFSWrite, "writes a timing report")
		c.raiseWrites(&e, out)
	}
	if len(rest) > 0 {
		c.run("time", rest, effect{})
	} else if e.none {
		return read("runs no command")
	}
	return e
}

func chrt(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "TPD", long: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}})
	switch {
	case optHas(opts, "-p", "--pid"):
		return exec("changes the scheduling of a running process")
	case optHas(opts, "-m", "--max") || len(rest) < 2:
		return read("shows scheduling settings")
	}
	c.run("chrt", rest[1:], effect{})
	return effect{none: true}
}

func taskset(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{})
	switch {
	case optHas(opts, "-p", "--pid"):
		return exec("changes the CPU affinity of a running process")
	case len(rest) < 2:
		return read("shows CPU affinity")
	}
	c.run("taskset", rest[1:], effect{})
	return effect{none: true}
}

func flock(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "wEc", long: []string{"--wait", "--timeout", "--conflict-exit-code", "--command"}})
	if len(rest) == 0 {
		return read("takes a lock")
	}
	e := effect{none: true}
	lock := write(airlock.ClassFSWrite, "creates a lock file")
	if c.raiseWrites(&lock, rest[0]); lock.tier == airlock.TierPrivileged {
		e = lock
	}
	if cmd, ok := optVal(opts, "-c", "--command"); ok {
		if !cmd.static {
			return unknown("runs a command only known at run time")
		}
		c.runScript("flock -c", cmd.val, c.in)
		return e
	}
	if len(rest) > 1 && rest[1].static && (rest[1].val == "-c" || rest[1].val == "--command") && len(rest) > 2 {
		c.runWords("flock -c", rest[2:3], c.in)
		return e
	}
	if len(rest) == 1 {
		if e.none {
			return read("takes a lock")
		}
		return e
	}
	c.run("flock", rest[1:], effect{})
	return e
}

// tracer is strace or ltrace: it runs a command, or attaches to a running
// process, which reads its memory.
func tracer(via string, o optSpec) rule {
	return func(c *call) effect {
		opts, rest := splitOpts(c.args, o)
		e := effect{none: true}
		if out, ok := optVal(opts, "-o"); ok {
			e = write(airlock.ClassFSWrite, "writes a trace")
			c.raiseWrites(&e, out)
		}
		for _, o := range opts {
			if o.name == "-E" && o.has {
				if name, _, _ := strings.Cut(o.val.val, "="); !o.val.static {
					e = worse(e, env("sets an environment variable only known at run time"))
				} else if r, bad := sensitiveVar(name); bad {
					e = worse(e, env(r))
				}
			}
		}
		if optHas(opts, "-p") {
			return worse(e, admin("attaches to a running process and reads its memory"))
		}
		if len(rest) == 0 {
			if e.none {
				return read("runs no command")
			}
			return e
		}
		c.run(via, rest, effect{})
		return e
	}
}

func watch(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "nq", long: []string{"--interval", "--equexit"}})
	if len(rest) == 0 {
		return read("runs no command")
	}
	if optHas(opts, "-x", "--exec") {
		c.run("watch", rest, effect{})
	} else {
		c.runWords("watch", rest, input{})
	}
	return effect{none: true}
}

func commandRule(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{})
	if optHas(opts, "-v", "-V") || len(rest) == 0 {
		return inert("describes a command")
	}
	c.run("command", rest, effect{})
	return effect{none: true}
}

func builtinRule(c *call) effect {
	if len(c.args) == 0 {
		return inert("does nothing")
	}
	c.run("builtin", c.args, effect{})
	return effect{none: true}
}

func execRule(c *call) effect {
	_, rest := splitOpts(c.args, optSpec{short: "a"})
	if len(rest) == 0 {
		return inert("changes the shell's file descriptors")
	}
	c.run("exec", rest, effect{})
	return effect{none: true}
}

func xargs(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "adEILnPsJR", long: []string{
		"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var",
	}})
	if len(rest) == 0 {
		rest = []arg{literal("echo")}
	}
	// With -I R (or -i, --replace), R in any word becomes an input line.
	for _, o := range opts {
		mark := ""
		switch {
		case (o.name == "-I" || o.name == "-J") && o.has:
			mark = o.val.val
		case o.name == "-i" || o.name == "--replace":
			mark = "{}"
			if o.has && o.val.val != "" {
				mark = o.val.val
			}
		}
		if mark != "" {
			rest = placeholder(rest, arg{}, mark)
		}
	}
	n := c.run("xargs", rest, effect{})
	n.in, n.xargs = input{kind: inNull}, true
	return effect{none: true}
}

// parallel is GNU parallel: the command before ":::" is run by a shell.
func parallel(c *call) effect {
	opts, rest := splitOpts(c.args, optSpec{short: "aCdEIjLnNPSs", long: []string{
		"--jobs", "--sshlogin", "--arg-file", "--colsep", "--delimiter", "--results", "--joblog",
		"--tmpdir", "--workdir", "--wd", "--timeout", "--delay", "--retries", "--env", "--halt",
		"--memfree", "--load", "--nice", "--basefile", "--return", "--sshloginfile", "--slf",
		"--tagstring", "--tag-string", "--block", "--limit", "--termseq", "--header", "--max-args",
		"--max-replace-args", "--max-lines", "--max-procs",
	}})
	end := len(rest)
	for i, r := range rest {
		if r.static && strings.HasPrefix(r.val, ":::") {
			end = i
			break
		}
	}
	e := effect{none: true}
	if optHas(opts, "-S", "--sshlogin", "--slf", "--sshloginfile") {
		e = net(airlock.ClassNetConnect, "runs commands on other hosts")
	}
	if end == 0 {
		c.runUnknown("parallel", c.text(), "runs commands read from its input")
		return e
	}
	script, ok := joinValues(rest[:end])
	if !ok {
		c.runUnknown("parallel", joinTexts(rest[:end]), "runs a command only known at run time")
		return e
	}
	custom := ""
	if r, ok := optVal(opts, "-I"); ok {
		custom = r.val
	}
	// parallel puts its inputs into the command before a shell parses it:
	// a placeholder becomes a dynamic word, and one inside quotes could
	// become anything.
	script, found := parallelInputs(script, custom)
	if found && strings.ContainsAny(script, `'"\`+"`") {
		c.runUnknown("parallel", joinTexts(rest[:end]), "runs a command built from its input")
		return e
	}
	c.runScript("parallel", script, input{})
	return e
}

// parallelInputs replaces GNU parallel's replacement strings ({}, {.},
// {/}, {//}, {/.}, {#}, {%}, {3}, {=perl=}, and -I's) by a shell parameter,
// so that the words holding them are dynamic.
func parallelInputs(script, custom string) (string, bool) {
	const input = "${PARALLEL_INPUT}"
	found := false
	if custom != "" && strings.Contains(script, custom) {
		script, found = strings.ReplaceAll(script, custom, input), true
	}
	var b strings.Builder
	for i := 0; i < len(script); i++ {
		if script[i] == '{' {
			if end := parallelMark(script[i:]); end > 0 {
				b.WriteString(input)
				i += end - 1
				found = true
				continue
			}
		}
		b.WriteByte(script[i])
	}
	return b.String(), found
}

// parallelMark returns the length of the replacement string at the start
// of s, or 0.
func parallelMark(s string) int {
	if strings.HasPrefix(s, "{=") {
		if end := strings.Index(s, "=}"); end > 0 {
			return end + 2
		}
		return 0
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '}':
			return i + 1
		case c >= '0' && c <= '9', c == '.', c == '/', c == '#', c == '%':
		default:
			return 0
		}
	}
	return 0
}

// findValueTests are the find tests and actions that take one value.
var findValueTests = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-type": true, "-xtype": true,
	"-user": true, "-group": true, "-uid": true, "-gid": true, "-perm": true, "-size": true,
	"-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true,
	"-newer": true, "-anewer": true, "-cnewer": true, "-samefile": true, "-inum": true, "-links": true,
	"-maxdepth": true, "-mindepth": true, "-fstype": true, "-used": true, "-context": true,
	"-printf": true, "-regextype": true, "-files0-from": true,
}

func find(c *call) effect {
	args := c.args
	i := 0
	for i < len(args) && args[i].static {
		switch v := args[i].val; {
		case v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O"):
			i++
			continue
		case v == "-D":
			i += 2
			continue
		}
		break
	}
	var starts []arg
	for ; i < len(args); i++ {
		a := args[i]
		if a.static && (len(a.val) > 1 && a.val[0] == '-' || a.val == "(" || a.val == "!" || a.val == ")" || a.val == ",") {
			break
		}
		starts = append(starts, a)
	}
	found := c.representative(starts)
	e := read("finds files")
	for i < len(args) {
		a := args[i]
		i++
		if !a.static {
			continue
		}
		switch v := a.val; {
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			j := i
			for j < len(args) && !(args[j].static && (args[j].val == ";" || args[j].val == "+")) {
				j++
			}
			n := c.run("find "+v, placeholder(args[i:j], found), effect{})
			if v == "-execdir" || v == "-okdir" {
				n.cwd, n.setCwd = cwdArg(c, found), true
			}
			i = j + 1
		case v == "-delete":
			e = worse(e, remove("deletes the files it finds"))
		case v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf":
			if i < len(args) {
				w := write(airlock.ClassFSWrite, "writes the list of files it finds")
				c.raiseWrites(&w, args[i])
				e = worse(e, w)
			}
			i++
			if v == "-fprintf" {
				i++
			}
		case findValueTests[v] || strings.HasPrefix(v, "-newer"):
			i++
		}
	}
	return e
}

// representative picks the start path that stands for the files a command
// finds: the most sensitive one, else the first, else ".".
func (c *call) representative(starts []arg) arg {
	for _, s := range starts {
		if !s.static {
			continue
		}
		p := c.resolve(s.val)
		if _, ok := sensitive.Secret(p, s.glob); ok {
			return s
		}
		if _, ok := sensitive.SystemPlace(p, s.glob); ok {
			return s
		}
	}
	if len(starts) > 0 {
		return starts[0]
	}
	return literal(".")
}

// placeholder marks the words of find -exec that contain "{}": find
// replaces it with each file it finds, whose name may be anything, so they
// are dynamic (sh -c '... {} ...' runs unknown code). For path checks "{}"
// stands for the path the files are found under. The text stays as written.
func placeholder(words []arg, found arg, marks ...string) []arg {
	if len(marks) == 0 {
		marks = []string{"{}"}
	}
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = w
		if !w.static || !slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(w.val, m) }) {
			continue
		}
		out[i].static, out[i].val, out[i].path = false, "", ""
		if found.static {
			out[i].path = strings.ReplaceAll(w.val, marks[0], found.val)
			out[i].glob = w.glob || found.glob
		}
	}
	return out
}

func fd(c *call) effect {
	for i, a := range c.args {
		if a.static && (a.val == "-x" || a.val == "--exec" || a.val == "-X" || a.val == "--exec-batch") {
			j := i + 1
			for j < len(c.args) && !(c.args[j].static && c.args[j].val == ";") {
				j++
			}
			ops := operands(c.args[:i], "-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth",
				"--min-depth", "--exact-depth", "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner",
				"-j", "--threads", "--max-results", "-c", "--color", "--base-directory", "--path-separator", "--ignore-file")
			var starts []arg
			if len(ops) > 1 {
				starts = ops[1:]
			}
			cmd := placeholder(c.args[i+1:j], c.representative(starts), "{}", "{/}", "{//}", "{.}", "{/.}")
			c.run("fd "+a.val, cmd, effect{})
			break
		}
	}
	return read("finds files")
}

// posixShell is sh, bash and their kin: -c STRING is parsed; a script file
// runs; no script means code from standard input.
func posixShell(c *call) effect {
	args := c.args
	cmode, smode := false, false
	i := 0
loop:
	for i < len(args) {
		a := args[i]
		v := a.val
		switch {
		case !a.static:
			break loop
		case v == "--" || v == "-":
			i++
			break loop
		case strings.HasPrefix(v, "--"):
			i++
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			i++
			for _, ch := range v[1:] {
				switch ch {
				case 'c':
					cmode = true
				case 's':
					smode = true
				case 'o', 'O':
					i++ // the option's name is the next word
				}
			}
		default:
			break loop
		}
	}
	ops := args[min(i, len(args)):]
	if cmode {
		if len(ops) == 0 {
			return read("runs no command")
		}
		if !ops[0].static {
			return unknown("runs a " + c.name + " command only known at run time")
		}
		c.runScript(c.name+" -c", ops[0].val, c.in)
		return effect{none: true}
	}
	if smode || len(ops) == 0 {
		return c.stdinCode("shell", true)
	}
	return c.runsFile(ops[0], "shell", true)
}

// foreignShell is a shell whose language Airlock does not parse.
func foreignShell(c *call) effect {
	ops := c.operands()
	if c.has("-c", "--command", "-Command", "-EncodedCommand") || len(ops) == 0 {
		return unknown("runs " + c.name + " code, which Airlock cannot parse")
	}
	return c.runsFile(ops[0], c.name, false)
}

// arch is macOS arch: "arch -x86_64 CMD" runs CMD; alone it prints.
func arch(c *call) effect {
	_, rest := splitOpts(c.args, optSpec{short: "e", long: []string{"-arch"}})
	if len(rest) == 0 {
		return read("prints the architecture")
	}
	c.run("arch", rest, effect{})
	return effect{none: true}
}

func busybox(c *call) effect {
	if len(c.args) == 0 || !c.args[0].static || strings.HasPrefix(c.args[0].val, "-") {
		return read("lists its commands")
	}
	c.run("busybox", c.args, effect{})
	return effect{none: true}
}

var sshOpts = optSpec{short: "BbcDEeFIiJLlmOopQRSWw"}

// ssh: the remote command is parsed (Via ssh); options that run local
// commands (ProxyCommand) are parsed too.
func ssh(c *call) effect {
	opts, rest := splitOpts(c.args, sshOpts)
	c.proxyCommands(opts)
	host := "a host"
	if len(rest) > 0 {
		host = rest[0].text
	}
	e := net(airlock.ClassNetConnect, "connects to "+host+" over ssh")
	if len(rest) == 0 || optHas(opts, "-N", "-O", "-G", "-V", "-Q") {
		return e
	}
	remote := rest[1:]
	if len(remote) == 0 {
		// An interactive login: the remote shell runs what it reads.
		switch c.in.kind {
		case inText:
			n := c.runScript("ssh", c.in.text, input{})
			n.cwd, n.setCwd, n.lenient = "~", true, true
		case inPipe, inDynamic:
			c.runUnknown("ssh", c.text(), "runs remote commands read from its input")
		}
		return e
	}
	// The remote command reads the local standard input.
	n := c.runWords("ssh", remote, c.in)
	n.cwd, n.setCwd, n.lenient = "~", true, true
	return e
}

// proxyCommands parses the local commands that ssh options run
// (-o ProxyCommand=..., -o LocalCommand=...).
func (c *call) proxyCommands(opts []option) {
	for _, o := range opts {
		if o.name != "-o" || !o.has {
			continue
		}
		if !o.val.static {
			c.runUnknown("ssh -o", o.val.text, "sets an ssh option only known at run time")
			continue
		}
		key, val, ok := strings.Cut(o.val.val, "=")
		if !ok {
			key, val, _ = strings.Cut(o.val.val, " ")
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
			c.runScript("ssh -o "+strings.TrimSpace(key), strings.TrimSpace(val), input{})
		}
	}
}

func scriptRule(c *call) effect {
	if cmd, ok := c.value("-c", "--command"); ok {
		if !cmd.static {
			return unknown("runs a command only known at run time")
		}
		c.runScript("script -c", cmd.val, c.in)
		return write(airlock.ClassFSWrite, "records a terminal session to a file")
	}
	return unknown("opens an interactive shell and records it")
}

func direnv(c *call) effect {
	if len(c.args) >= 3 && c.args[0].val == "exec" {
		n := c.run("direnv exec", c.args[2:], effect{})
		n.cwd, n.setCwd = cwdArg(c, c.args[1]), true
		return effect{none: true}
	}
	if len(c.args) > 0 && (c.args[0].val == "allow" || c.args[0].val == "permit" || c.args[0].val == "grant") {
		return exec("allows a .envrc to run in this directory")
	}
	return read("shows direnv status")
}

func nixShell(c *call) effect {
	e := net(airlock.ClassPackageInstall, "builds or downloads a Nix environment")
	if cmd, ok := c.value("--run", "--command"); ok {
		if !cmd.static {
			c.runUnknown("nix-shell --run", cmd.text, "runs a command only known at run time")
		} else {
			c.runScript("nix-shell --run", cmd.val, c.in)
		}
	}
	return e
}
