package shell

import (
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
	"mvdan.cc/sh/v3/syntax"
)

// Wrappers: programs classified by what they run.
var wrappers = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"sudo": sudo, "sudoedit": sudo, "doas": doas, "su": su, "runuser": su,
		"pkexec": privWrapper("pkexec", getopt{long: names("--user")}, 0),
		"run0":   privWrapper("run0", run0Opts, 0), "chroot": privWrapper("chroot", chrootOpts, 1),
		"nsenter": privWrapper("nsenter", nsenterOpts, 0), "unshare": privWrapper("unshare", unshareOpts, 0),
		"systemd-run": privWrapper("systemd-run", systemdRunOpts, 0),
		"env":         envRule, "time": timeRule, "ionice": ionice, "chrt": chrt, "taskset": taskset, "flock": flock,
		"nohup":   nohup,
		"nice":    wrapper("nice", niceOpts, 0),
		"stdbuf":  wrapper("stdbuf", stdbufOpts, 0),
		"setsid":  wrapper("setsid", setsidOpts, 0),
		"timeout": wrapper("timeout", timeoutOpts, 1), "gtimeout": wrapper("timeout", timeoutOpts, 1),
		"unbuffer": wrapper("unbuffer", getopt{}, 0), "chronic": wrapper("chronic", getopt{}, 0),
		"caffeinate": wrapper("caffeinate", getopt{short: "tw"}, 0),
		"xvfb-run":   xvfbRun, "dbus-run-session": dbusRunSession,
		"proxychains": proxychains, "proxychains4": proxychains, "torsocks": torsocks, "firejail": firejail,
		"strace": tracer("strace", straceOpts), "ltrace": tracer("ltrace", ltraceOpts),
		"watch": watch, "command": commandRule, "builtin": builtinRule, "exec": execRule,
		"noglob": wrapper("noglob", getopt{}, 0), "nocorrect": wrapper("nocorrect", getopt{}, 0),
		"xargs": xargs, "parallel": parallel, "find": find, "fd": fd, "fdfind": fd,
		"sh": posixShell, "bash": posixShell, "rbash": posixShell, "zsh": posixShell, "dash": posixShell, "ksh": posixShell,
		"mksh": posixShell, "pdksh": posixShell, "ash": posixShell, "yash": posixShell, "posh": posixShell, "ksh93": posixShell,
		"sash": posixShell,
		"fish": foreignShell, "csh": foreignShell, "tcsh": foreignShell, "nu": foreignShell,
		"pwsh": foreignShell, "powershell": foreignShell, "elvish": foreignShell, "xonsh": foreignShell,
		"busybox": busybox, "ssh": ssh, "script": scriptRule, "direnv": direnv, "nix-shell": nixShell, "arch": arch,
		// Programs that run a command with changed rights, limits, scheduling or
		// surroundings.
		"setarch": setarch(true), "linux32": setarch(false), "linux64": setarch(false), "i386": setarch(false),
		"x86_64":  setarch(false),
		"setpriv": wrapper("setpriv", setprivOpts, 0), "capsh": capsh, "runcon": runcon, "ksu": ksu,
		"sg": sg, "newgrp": fixed(unknown("opens a shell with another group")),
		"numactl": wrapper("numactl", numactlOpts, 0), "prlimit": prlimit, "cpulimit": cpulimit, "choom": choom,
		"aa-exec":   wrapper("aa-exec", getopt{short: "pn", long: names("--profile --namespace")}, 0),
		"softlimit": wrapper("softlimit", getopt{short: "madoplfcrts"}, 0),
		"setuidgid": wrapper("setuidgid", getopt{}, 1), "envuidgid": wrapper("envuidgid", getopt{}, 1),
		"chpst": chpst, "envdir": envdir, "logsave": logsave, "setlock": setlock, "start-stop-daemon": startStopDaemon,
		"rlwrap": rlwrap, "faketime": faketime, "fakeroot": fakeroot, "bwrap": bwrap,
		"torify": wrapper("torify", getopt{}, 0), "aoss": wrapper("aoss", getopt{}, 0),
		"catchsegv":       wrapper("catchsegv", getopt{}, 0),
		"trickle":         wrapper("trickle", getopt{short: "duwtln"}, 0),
		"grc":             wrapper("grc", getopt{short: "c", long: names("--config")}, 0),
		"systemd-inhibit": wrapper("systemd-inhibit", getopt{long: names("--what --who --why --mode")}, 0),
		"systemd-cat": wrapper("systemd-cat", getopt{short: "tp",
			long: names("--identifier --priority --stderr-priority --level-prefix --namespace")}, 0),
	}
})

// The options of the wrappers, where their command starts.
var (
	run0Opts = getopt{short: "uDg", long: names("--user --chdir --group --unit --property --description --slice " +
		"--nice --setenv --machine --background --shell-prompt-prefix --lightweight --area")}
	chrootOpts  = getopt{long: names("--userspec --groups")}
	nsenterOpts = getopt{short: "tSGW", long: names("--target --setuid --setgid --wdns")}
	unshareOpts = getopt{short: "SG", long: names("--setuid --setgid --propagation --setgroups --monotonic " +
		"--boottime")}
	systemdRunOpts = getopt{short: "pEMHu", long: names("--unit --property --setenv --machine --host --uid --gid " +
		"--nice --working-directory --slice --description --on-calendar --on-active --on-boot --on-startup " +
		"--on-unit-active --on-unit-inactive --timer-property --path-property --socket-property --service-type")}
	dbusRunSessionOpts = getopt{long: names("--config-file --dbus-daemon"), exact: true}
	torsocksOpts       = getopt{short: "upaP", long: names("--user --pass --address --port"), exact: true}
	choomOpts          = getopt{short: "np", long: names("--adjust --pid"), exact: true}
	faketimeOpts       = getopt{long: names("--date-prog"), exact: true}
	fakerootOpts       = getopt{short: "lisb", long: names("--lib --faked --fd-base"), exact: true}
	niceOpts           = getopt{short: "n", long: names("--adjustment"), flags: names("--help --version")}
	stdbufOpts         = getopt{short: "ioe", long: names("--input --output --error"), flags: names("--help --version")}
	setsidOpts         = getopt{flags: names("--ctty --fork --wait --help --version")}
	timeoutOpts        = getopt{short: "ks", long: names("--kill-after --signal"), flags: names("--preserve-status " +
		"--foreground --verbose --help --version")}
	setprivOpts = getopt{long: names("--reuid --regid --ruid --euid --rgid --egid --groups --inh-caps --ambient-caps " +
		"--bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile --landlock-access " +
		"--landlock-rule --seccomp-filter"), flags: names("--dump --nnp --no-new-privs --clear-groups " +
		"--keep-groups --init-groups --reset-env --list-caps --help --version")}
	numactlOpts = getopt{short: "imwpPCNSfLMo", long: names("--interleave --weighted-interleave --membind " +
		"--preferred --preferred-many --physcpubind --cpunodebind --shmid --file --length --offset --shmmode " +
		"--cpubind"), flags: names("--all --localalloc --show --hardware --balancing --huge --touch --verify " +
		"--strict --shm --help --version")}
)

// wrapper is a program that runs the command after its options and skip
// more operands (timeout's DURATION), and adds nothing of its own.
func wrapper(via string, g getopt, skip int) rule {
	return func(c *call) effect {
		rest := g.split(c.args).ops
		return c.runs(via, rest[min(skip, len(rest)):], read("runs no command"))
	}
}

// nohup runs a command immune to hangups; when its output is a terminal it
// writes it to nohup.out (in the directory, else in the home).
func nohup(c *call) effect {
	rest := getopt{flags: names("--help --version")}.split(c.args).ops
	if len(rest) == 0 {
		return read("runs no command")
	}
	c.run("nohup", rest, effect{})
	return write(airlock.ClassFSWrite, "may write the command's output to nohup.out")
}

// privWrapper is a program that runs a command with more rights than the
// agent's: what it runs is at least privileged.
func privWrapper(via string, g getopt, skip int) rule {
	return func(c *call) effect {
		rest := g.split(c.args).ops
		if len(rest) <= skip {
			return unknown("opens an interactive shell with " + via)
		}
		c.run(via, rest[skip:], admin("runs with "+via))
		return effect{none: true}
	}
}

var sudoOpts = getopt{short: "aCcDgpRrtTUu", long: names("--auth-type --close-from --chdir --group --host " +
	"--login-class --prompt --chroot --role --type --command-timeout --other-user --user"),
	flags: names("--askpass --background --bell --preserve-env --edit --set-home --help --login --remove-timestamp " +
		"--reset-timestamp --list --non-interactive --preserve-groups --shell --stdin --version --validate")}

func sudo(c *call) effect {
	p := sudoOpts.split(c.args)
	rest := p.ops
	user := "root"
	if u, ok := p.value("-u", "--user"); ok {
		user = u.text
	}
	switch {
	case c.name == "sudoedit" || p.has("-e", "--edit"):
		e := effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "edits files as " + user}
		return e
	case p.has("-l", "--list"):
		return read("lists what sudo allows")
	case len(rest) > 0:
	case p.has("-i", "-s", "--login", "--shell"):
		return unknown("opens an interactive shell as " + user)
	case p.has("-v", "--validate"):
		return admin("refreshes the cached sudo credentials")
	case p.has("-k", "-K", "--reset-timestamp", "--remove-timestamp"):
		return read("forgets the cached sudo credentials")
	default:
		return read("prints sudo's usage or version")
	}
	reason, cmd := c.envAssigns(rest, "sudo")
	if len(cmd) == 0 {
		return unknown("opens an interactive shell as " + user)
	}
	n := c.run("sudo", cmd, admin("runs as "+user))
	if d, ok := p.value("-D", "--chdir"); ok {
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
	p := getopt{short: "auC"}.split(c.args)
	rest := p.ops
	user := "root"
	if u, ok := p.value("-u"); ok {
		user = u.text
	}
	if len(rest) == 0 {
		if p.has("-C") {
			return read("checks the doas configuration")
		}
		if p.has("-L") {
			return read("forgets cached doas credentials")
		}
		return unknown("opens an interactive shell as " + user)
	}
	c.run("doas", rest, admin("runs as "+user))
	return effect{none: true}
}

var suOpts = getopt{short: "cgGswu", long: names("--command --session-command --group --supp-group --shell " +
	"--whitelist-environment --user"), flags: names("--preserve-environment --login --fast --pty --help --version")}

// su handles su and runuser: "su -c CMD [user]", "runuser -u USER -- CMD".
func su(c *call) effect {
	p := suOpts.split(c.args)
	rest := p.ops
	user := "root"
	for _, r := range rest {
		if r.static && r.val != "-" && !strings.HasPrefix(r.val, "-") {
			user = r.text
			break
		}
	}
	if u, ok := p.value("-u", "--user"); ok {
		user = u.text
	}
	floor := admin("runs as " + user)
	// Options may follow the user name: look for -c everywhere.
	cmd, ok := suOpts.parse(c.args).value("-c", "--command", "--session-command")
	if ok {
		if !cmd.static {
			return unknown("runs a command only known at run time as " + user)
		}
		n := c.runScript("su -c", cmd.val, c.in)
		n.floor = floor
		return effect{none: true}
	}
	if _, ok := p.value("-u", "--user"); ok && len(rest) > 0 {
		c.run(c.name, rest, floor)
		return effect{none: true}
	}
	return unknown("opens an interactive shell as " + user)
}

var envOpts = getopt{short: "uCS", long: names("--unset --chdir --split-string"),
	flags: names("--ignore-environment --null --block-signal --default-signal --ignore-signal --list-signal-handling " +
		"--debug --help --version")}

func envRule(c *call) effect {
	p := envOpts.split(c.args)
	rest := p.ops
	if len(rest) > 0 && rest[0].static && rest[0].val == "-" {
		rest = rest[1:] // "-" is -i
	}
	reason, cmd := c.envAssigns(rest, "env")
	e := effect{none: true}
	if reason != "" {
		e = env(reason)
	}
	if s, ok := p.value("-S", "--split-string"); ok {
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
		return printsEnvironment
	}
	n := c.run("env", cmd, effect{})
	if d, ok := p.value("-C", "--chdir"); ok {
		n.cwd, n.setCwd = cwdArg(c, d), true
	}
	return e
}

// setsEnv classifies the NAME=VALUE settings that a wrapper's options give
// its command (strace -E, firejail --env): a variable that changes what
// runs is privileged, and one that holds a command is analysed.
func (c *call) setsEnv(via string, vals []arg) effect {
	e := effect{none: true}
	for _, v := range vals {
		if !v.static {
			e = env("sets an environment variable only known at run time")
		} else if r, _ := c.envAssigns([]arg{v}, via); r != "" {
			e = env(r)
		}
	}
	return e
}

var timeOpts = getopt{short: "fo", long: names("--format --output"), flags: names("--append --portability --quiet " +
	"--verbose --help --version")}

// timeRule is /usr/bin/time, which may also write its report to a file.
func timeRule(c *call) effect {
	p := timeOpts.split(c.args)
	rest := p.ops
	e := effect{none: true}
	if out, ok := p.value("-o", "--output"); ok {
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

var chrtOpts = getopt{short: "TPD", long: names("--sched-runtime --sched-period --sched-deadline"),
	flags: names("--batch --deadline --fifo --idle --other --rr --ext --reset-on-fork --all-tasks --max --pid " +
		"--verbose --help --version")}

// chrt runs "chrt [options] PRIORITY COMMAND"; the policies that use no
// priority may leave it out.
func chrt(c *call) effect {
	p := chrtOpts.split(c.args)
	rest := p.ops
	switch {
	case p.has("-p", "--pid"):
		return exec("changes the scheduling of a running process")
	case p.has("-m", "--max") || len(rest) == 0:
		return read("shows scheduling settings")
	}
	if chrtPriority(rest[0]) || !rest[0].static {
		rest = rest[1:]
	}
	return c.runs("chrt", rest, read("shows scheduling settings"))
}

// chrtPriority reports whether a word of chrt is a priority (a number).
func chrtPriority(a arg) bool {
	v := strings.TrimPrefix(a.val, "-")
	return a.static && v != "" && strings.Trim(v, "0123456789") == ""
}

var tasksetOpts = getopt{flags: names("--all-tasks --pid --cpu-list --help --version")}

func taskset(c *call) effect {
	p := tasksetOpts.split(c.args)
	if p.has("-p", "--pid") {
		return exec("changes the CPU affinity of a running process")
	}
	return c.runs("taskset", p.ops[min(1, len(p.ops)):], read("shows CPU affinity"))
}

var ioniceOpts = getopt{short: "cnpPu", long: names("--class --classdata --pid --pgid --uid"),
	flags: names("--ignore --help --version")}

// ionice runs a command, or with -p, -P or -u changes (or shows) the I/O
// priority of running processes.
func ionice(c *call) effect {
	p := ioniceOpts.split(c.args)
	switch {
	case p.has("-p", "-P", "-u", "--pid", "--pgid", "--uid") && p.has("-c", "-n", "--class", "--classdata"):
		return exec("changes the I/O priority of running processes")
	case p.has("-p", "-P", "-u", "--pid", "--pgid", "--uid"):
		return read("shows I/O priorities")
	}
	return c.runs("ionice", p.ops, read("shows the I/O priority"))
}

var flockOpts = getopt{short: "wE", long: names("--wait --timeout --conflict-exit-code"), flags: names("--shared " +
	"--exclusive --unlock --nonblock --nb --close --no-fork --verbose --help --version")}

// flock runs "flock [options] FILE COMMAND..." or "flock [options] FILE -c
// COMMAND" (the -c after the file).
func flock(c *call) effect {
	rest := flockOpts.split(c.args).ops
	if len(rest) == 0 {
		return read("takes a lock")
	}
	e := effect{none: true}
	if !rest[0].static || !isFd(rest[0].val) {
		// flock FILE CMD opens FILE, creating it.
		e = write(airlock.ClassFSWrite, "creates a lock file "+rest[0].text)
		c.raiseWrites(&e, rest[0])
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

var straceOpts = getopt{short: "abeEIoOpPsSuUX", long: names("--abbrev --attach --columns --const-print-style " +
	"--decode-pids --detach-on --env --fault --inject --interruptible --kvm --output --raw --read --signal " +
	"--status --string-limit --summary-columns --summary-sort-by --summary-syscall-overhead --syscall-limit " +
	"--trace --trace-fds --trace-path --user --verbose --write --argv0 --stack-trace-frame-limit"),
	flags: names("--absolute-timestamps --timestamps --daemonize --debug --decode-fds --failed-only --follow-forks " +
		"--help --instruction-pointer --no-abbrev --output-append-mode --output-separately --quiet " +
		"--relative-timestamps --seccomp-bpf --secontext --stack-traces --strings-in-hex --successful-only " +
		"--summary --summary-only --summary-wall-clock --syscall-number --syscall-times --tips --version " +
		"--kill-on-exit --pidns-translation")}

var ltraceOpts = getopt{short: "aADeFlnopsuwx", long: names("--align --config --indent --library --output --where"),
	flags: names("--demangle --help --version --no-signals --no-plt")}

var xvfbOpts = getopt{short: "efnpsw", long: names("--error-file --auth-file --server-num --xauth-protocol " +
	"--server-args --wait"), flags: names("--auto-servernum --listen-tcp --help")}

// xvfbRun runs a command with a virtual X server. It writes the server's
// errors (-e) and an X authority file (-f) where it is told; -l and the
// server's own "-listen tcp" open the display to the network, and its
// "-fbdir DIR" writes the screen's memory there.
func xvfbRun(c *call) effect {
	p := xvfbOpts.split(c.args)
	rest := p.ops
	e := effect{none: true}
	for _, o := range p.opts {
		switch o.name {
		case "-e", "--error-file", "-f", "--auth-file":
			if o.has {
				w := write(airlock.ClassFSWrite, "writes X server files")
				c.raiseWrites(&w, o.val)
				e = worse(e, w)
			}
		case "-l", "--listen-tcp":
			e = worse(e, net(airlock.ClassNetConnect, "opens the X server to the network"))
		case "-s", "--server-args":
			if !o.val.static {
				e = worse(e, unknown("starts the X server with options only known at run time"))
				continue
			}
			words := strings.Fields(o.val.val)
			for i, w := range words {
				switch {
				case w == "-listen" && i+1 < len(words) && strings.HasPrefix(words[i+1], "tcp"):
					e = worse(e, net(airlock.ClassNetConnect, "opens the X server to the network"))
				case w == "-fbdir" && i+1 < len(words):
					fb := write(airlock.ClassFSWrite, "writes the X server's screen to files")
					c.raiseWrites(&fb, literal(words[i+1]))
					e = worse(e, fb)
				case i > 0 && (words[i-1] == "-auth" || words[i-1] == "-config"):
					c.raiseReads(&e, literal(w))
				}
			}
		}
	}
	return c.wraps("xvfb-run", rest, e)
}

// dbusRunSession runs a command with a session bus: the daemon it starts
// may be another program (--dbus-daemon), and a configuration file (its
// own, not a system one) says which programs the bus starts and where it
// listens.
func dbusRunSession(c *call) effect {
	p := dbusRunSessionOpts.split(c.args)
	rest := p.ops
	e := effect{none: true}
	if f, ok := p.value("--config-file"); ok {
		e = exec("runs a bus configured by " + f.text + ", which may start programs")
		c.raiseReads(&e, f)
	}
	if d, ok := p.value("--dbus-daemon"); ok {
		c.run("dbus-run-session --dbus-daemon", []arg{d}, effect{})
	}
	return c.wraps("dbus-run-session", rest, e)
}

// proxychains runs a command through the proxies its configuration (-f)
// lists.
func proxychains(c *call) effect {
	p := getopt{short: "f"}.split(c.args)
	rest := p.ops
	e := effect{none: true}
	if f, ok := p.value("-f"); ok {
		c.raiseReads(&e, f)
	}
	return c.wraps(c.name, rest, e)
}

// torsocks runs a command through Tor; --shell opens a shell.
func torsocks(c *call) effect {
	p := torsocksOpts.split(c.args)
	rest := p.ops
	switch {
	case p.has("--shell"):
		return unknown("opens an interactive shell whose connections go through Tor")
	case len(rest) == 0:
		return read("runs no command")
	case len(rest) == 1 && rest[0].static && (rest[0].val == "on" || rest[0].val == "off" || rest[0].val == "show"):
		return read("shows or sets Tor in its own environment")
	}
	c.run("torsocks", rest, effect{})
	return effect{none: true}
}

// firejail runs a command in a sandbox, or the user's shell when given none.
// Its options ("--name=VALUE") may run programs (--shell, --audit), set
// the command's environment (--env), write files (--output, --trace,
// --mkfile), put files where the sandbox reads them (--hosts-file,
// --profile), or manage other sandboxes instead of running anything.
func firejail(c *call) effect {
	e := effect{none: true}
	var vars []arg
	shell := arg{}
	i := 0
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.static || len(a.val) < 2 || a.val[0] != '-' {
			break
		}
		if a.val == "--" {
			i++
			break
		}
		name, _, eq := strings.Cut(a.val, "=")
		val := arg{}
		if eq {
			val = valueArg(a, a.val[len(name)+1:])
		}
		ops := c.args[i+1:]
		switch name {
		case "--env":
			vars = append(vars, val)
		case "--output", "--output-stderr", "--trace", "--build", "--mkfile", "--mkdir":
			if eq {
				w := write(airlock.ClassFSWrite, "writes files for the sandbox")
				c.raiseWrites(&w, val)
				e = worse(e, w)
			}
		case "--shell":
			if eq && val.val != "none" {
				shell = val
			}
		case "--audit":
			if eq {
				c.run("firejail --audit", []arg{val}, effect{})
			}
		case "--get":
			w := write(airlock.ClassFSCopy, "copies a file out of a sandbox")
			c.raiseReads(&w, ops...)
			return w
		case "--put":
			w := write(airlock.ClassFSCopy, "copies a file into a sandbox")
			if len(ops) > 1 {
				c.raiseWrites(&w, ops[1])
			}
			c.raiseReads(&w, ops...)
			return w
		case "--cat", "--ls":
			r := read("shows files of a sandbox")
			c.raiseReads(&r, ops...)
			return r
		case "--shutdown":
			return kill("stops a sandbox")
		case "--bandwidth":
			return admin("changes a sandbox's network bandwidth")
		case "--overlay-clean":
			return remove("deletes the sandbox overlays")
		case "--list", "--tree", "--top", "--netstats", "--version", "--help":
			return read("shows sandboxes")
		case "--hosts-file", "--profile", "--include", "--netfilter", "--netfilter6", "--private":
			// Files firejail reads itself, or puts where the command reads
			// them (--private is its home).
			if eq {
				c.raiseReads(&e, val)
			}
		default:
			if strings.HasSuffix(name, ".print") || strings.HasPrefix(name, "--debug-") {
				return read("shows sandbox settings")
			}
		}
	}
	e = worse(e, c.setsEnv("firejail --env", vars))
	rest := c.args[i:]
	switch {
	case shell.val != "" && len(rest) > 0:
		script, ok := joinValues(rest)
		if !ok {
			c.runUnknown("firejail", joinTexts(rest), "runs a command only known at run time")
			break
		}
		c.run("firejail --shell", []arg{shell, literal("-c"), literal(script)}, effect{})
	case shell.val != "" || len(rest) == 0:
		if shell.val == "" {
			shell = literal("sh")
		}
		c.run("firejail", []arg{shell}, effect{})
	default:
		c.run("firejail", rest, effect{})
	}
	return e
}

// tracer is strace or ltrace: it runs a command, or attaches to a running
// process, which reads its memory. Its own options write the trace (strace
// pipes it to a command given as -o '|COMMAND'), read a configuration
// (ltrace -F), set the command's environment, or tamper with its system
// calls.
func tracer(via string, g getopt) rule {
	return func(c *call) effect {
		p := g.split(c.args)
		rest := p.ops
		e := effect{none: true}
		var vars []arg
		for _, o := range p.opts {
			if !o.has {
				continue
			}
			switch v := o.val.val; o.name {
			case "-o", "--output":
				switch {
				case via != "strace":
				case strings.HasPrefix(v, "|") || strings.HasPrefix(v, "!"):
					c.runScript("strace -o", v[1:], input{kind: inPipe})
					continue
				case !o.val.static && o.val.path == "":
					c.runUnknown("strace -o", o.val.text, "may pipe the trace to a command only known at run time")
					continue
				}
				w := write(airlock.ClassFSWrite, "writes a trace")
				c.raiseWrites(&w, o.val)
				e = worse(e, w)
			case "-F", "--config":
				r := read("reads a configuration file")
				c.raiseReads(&r, o.val)
				e = worse(e, r)
			case "-E", "--env":
				vars = append(vars, o.val)
			case "-e", "--inject", "--fault":
				if o.name == "-e" && !strings.HasPrefix(v, "inject=") && !strings.HasPrefix(v, "fault=") {
					continue
				}
				if strings.Contains(v, "poke_") {
					e = worse(e, unknown("rewrites the arguments of the system calls of the program it runs"))
				} else {
					e = worse(e, exec("changes what the system calls of the program it runs return"))
				}
			}
		}
		e = worse(e, c.setsEnv(via+" -E", vars))
		if p.has("-p", "--attach") {
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

var watchOpts = getopt{short: "nq", optShort: "d", long: names("--interval --equexit"),
	flags: names("--beep --color --no-color --differences --errexit --chgexit --precise --no-title --no-wrap " +
		"--no-linewrap --exec --help --version")}

// watch runs its command with "sh -c" (with -x, as words).
func watch(c *call) effect {
	p := watchOpts.split(c.args)
	rest := p.ops
	if len(rest) == 0 {
		return read("runs no command")
	}
	if p.has("-x", "--exec") {
		c.run("watch", rest, effect{})
	} else {
		c.runWords("watch", rest, input{})
	}
	return effect{none: true}
}

func commandRule(c *call) effect {
	p := getopt{}.split(c.args)
	rest := p.ops
	if p.has("-v", "-V") {
		return inert("describes a command")
	}
	return c.runs("command", rest, inert("describes a command"))
}

// builtinRule runs a shell built-in; ksh93's "builtin -f LIB" loads
// built-ins from a shared library.
func builtinRule(c *call) effect {
	p := getopt{short: "f"}.split(c.args)
	rest := p.ops
	if f, ok := p.value("-f"); ok {
		return env("loads shell built-ins from library " + f.text)
	}
	if len(p.opts) > 0 && len(rest) == 0 || len(c.args) == 0 {
		return inert("lists built-ins")
	}
	c.run("builtin", rest, effect{})
	return effect{none: true}
}

func execRule(c *call) effect {
	rest := getopt{short: "a"}.split(c.args).ops
	return c.runs("exec", rest, inert("changes the shell's file descriptors"))
}

var xargsOpts = getopt{short: "adEILnPsJRS", optShort: "eil", long: names("--arg-file --delimiter --max-lines " +
	"--max-args --max-procs --max-chars --process-slot-var"), flags: names("--null --eof --replace --open-tty " +
	"--interactive --no-run-if-empty --show-limits --verbose --exit --help --version")}

// xargs runs its command with arguments read from its input, or from the
// file given to -a, which it reads (xargs -a FILE echo prints it).
func xargs(c *call) effect {
	p := xargsOpts.split(c.args)
	rest := p.ops
	if len(rest) == 0 {
		rest = []arg{literal("echo")}
	}
	e := effect{none: true}
	replaced := false
	// The command's standard input is empty, unless xargs reads its
	// arguments from a file (the command reads xargs's own) or -o gives it
	// the terminal.
	in := input{kind: inNull}
	for _, o := range p.opts {
		mark := ""
		switch {
		case (o.name == "-a" || o.name == "--arg-file") && o.has:
			c.raiseReads(&e, o.val)
			in = c.in
		case o.name == "--process-slot-var" && o.has:
			e = worse(e, c.setsEnv("xargs --process-slot-var", []arg{{val: o.val.val + "=0", static: o.val.static}}))
		// With -I R (or -i, --replace), R in any word becomes an input line.
		case (o.name == "-I" || o.name == "-J") && o.has:
			mark = o.val.val
		case o.name == "-i" || o.name == "--replace":
			mark = "{}"
			if o.has && o.val.val != "" {
				mark = o.val.val
			}
		}
		if mark != "" {
			rest = placeholder(rest, c.inputNames(), mark)
			replaced = true
		}
	}
	if p.has("-o", "--open-tty") {
		in = input{}
	}
	if text, ok := c.in.names(); ok && in.kind == inNull && !p.has("-I", "-J", "-i", "--replace", "-0", "--null",
		"-d", "--delimiter", "-E", "-e", "--eof") && !strings.ContainsAny(text, `'"\`) {
		// The words of its input, when Airlock knows them (echo f | xargs
		// cat): what they are only xargs's command knows, so they stand,
		// like find's {}, for the paths they name.
		for _, w := range strings.Fields(text) {
			rest = append(slices.Clip(rest), arg{text: quote(w), path: w})
		}
	} else if !replaced {
		// Names from its input: files under a directory when a lister
		// writes them (git ls-files | xargs wc), else only known then.
		names := c.inputNames()
		w := arg{extra: true, from: "the names xargs reads from its input"}
		if names.static {
			w = arg{extra: true, path: names.val, under: true, from: "files under " + names.val}
		}
		rest = append(slices.Clip(rest), w)
	}
	n := c.run("xargs", rest, effect{})
	n.in, n.xargs = in, true
	return e
}

// inputNames is what a line of the command's input names, for xargs and
// its kin: a file under a directory (static, val the directory) when a
// lister writes the input; else a word only known at run time.
func (c *call) inputNames() arg {
	if c.in.kind == inPipe && c.in.under != "" {
		return arg{val: c.in.under, static: true}
	}
	return arg{}
}

// runs runs rest as the command of a wrapper that adds nothing of its own;
// without a command the wrapper does idle.
func (c *call) runs(via string, rest []arg, idle effect) effect {
	if len(rest) == 0 {
		return idle
	}
	c.run(via, rest, effect{})
	return effect{none: true}
}

// wraps runs rest as the command of a wrapper whose own options did e (or
// nothing); without a command the wrapper only reads.
func (c *call) wraps(via string, rest []arg, e effect) effect {
	if len(rest) == 0 {
		return worse(read("runs no command"), e)
	}
	c.run(via, rest, effect{})
	return e
}

var parallelOpts = getopt{short: "aCdEIjJLnNPsS", long: names("--arg-file --arg-file-sep --arg-sep --basefile --bf " +
	"--basenamereplace --bnr --basenameextensionreplace --bner --bin --block --block-size --blocktimeout --bt " +
	"--colsep --compress-program --decompress-program --delay --delimiter --dirnamereplace --dnr --env " +
	"--extensionreplace --er --filter --group-by --halt --halt-on-error --header --joblog --jobs --limit --load " +
	"--max-args --max-chars --max-lines --max-procs --max-replace-args --memfree --memsuspend --nice --parens " +
	"--profile --results --res --retries --return --rpl --seqreplace --shard --slotreplace --sqlandworker " +
	"--sqlmaster --sqlworker --ssh --sshdelay --sshlogin --sshloginfile --slf --tagstring --tag-string " +
	"--template --tmpl --termseq --timeout --tmpdir --tempdir --transferfile --tf --trc --workdir --wd"),
	flags: names("--bar --cat --cleanup --csv --ctag --dry-run --eta --fifo --files --group --keep-order " +
		"--line-buffer --lb --link --xapply --nonall --onall --null --pipe --spreadstdin --pipepart --plus " +
		"--progress --quote --resume --resume-failed --retry-failed --semaphore --shebang --shebang-wrap " +
		"--shellquote --shuf --tag --tee --transfer --tty --ungroup --verbose --version --xargs --help --record-env " +
		"--citation --will-cite --bibtex --embed --interactive --no-notice --number-of-cpus --number-of-cores " +
		"--number-of-sockets --number-of-threads --fg --bg --sqlworker")}

// parallel is GNU parallel: the command before ":::" is run by a shell,
// with inputs given after ":::" or read from files (-a, "::::"). Its own
// options run commands (--ssh, --limit, --compress-program), Perl code
// ({= =}, --rpl, --filter), write files (--joblog, --results) or reach
// other hosts (-S).
func parallel(c *call) effect {
	p := parallelOpts.split(c.args)
	rest := p.ops
	end := len(rest)
	for i, r := range rest {
		if r.static && strings.HasPrefix(r.val, ":::") {
			end = i
			break
		}
	}
	e := effect{none: true}
	var inputs []arg
	for i := end; i < len(rest); i++ {
		if rest[i].static && strings.HasPrefix(rest[i].val, "::::") {
			for i+1 < len(rest) && !(rest[i+1].static && strings.HasPrefix(rest[i+1].val, ":::")) {
				i++
				inputs = append(inputs, rest[i])
			}
		}
	}
	perl := strings.Contains(joinTexts(rest[:end]), "{=")
	for _, o := range p.opts {
		v := o.val
		switch o.name {
		case "-a", "--arg-file":
			inputs = append(inputs, v)
		case "-S", "--sshlogin", "--slf", "--sshloginfile", "--filter-hosts":
			e = worse(e, net(airlock.ClassNetConnect, "runs commands on other hosts"))
			if o.name == "--slf" || o.name == "--sshloginfile" {
				inputs = append(inputs, v)
			}
		case "--bf", "--basefile", "--tf", "--transferfile":
			inputs = append(inputs, v)
		case "--joblog", "--results", "--res", "--tmpdir", "--tempdir":
			w := write(airlock.ClassFSWrite, "writes job results")
			c.raiseWrites(&w, v)
			e = worse(e, w)
		case "--template", "--tmpl":
			from, to, _ := strings.Cut(v.val, "=")
			w := write(airlock.ClassFSWrite, "writes files from a template")
			c.raiseWrites(&w, literal(to))
			c.raiseReads(&w, literal(from))
			e = worse(e, w)
		case "--sqlmaster", "--sqlandworker", "--sqlworker":
			e = worse(e, net(airlock.ClassNetConnect, "records jobs in a database"))
		case "--ssh", "--limit", "--compress-program", "--decompress-program":
			c.runWords("parallel "+o.name, []arg{v}, input{})
		case "--rpl", "--filter", "--tagstring", "--tag-string":
			perl = perl || o.name != "--tagstring" && o.name != "--tag-string" || strings.Contains(v.val, "{=")
		case "-J", "--profile":
			e = worse(e, exec("takes options from profile "+v.text+", which may run commands"))
		}
	}
	for _, f := range inputs {
		c.raiseReads(&e, f)
	}
	if perl {
		e = worse(e, exec("runs Perl code given in its replacement strings"))
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
	if r, ok := p.value("-I"); ok {
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
	if !found {
		script += " ${PARALLEL_INPUT}" // without a replacement string, parallel appends the input
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
	// A name test narrows what {} stands for: find . -name '.env*' finds
	// environment files, which a command given {} reads.
	for j := i; j+1 < len(args); j++ {
		if t := args[j]; t.static && (t.val == "-name" || t.val == "-iname") && args[j+1].static &&
			found.static && c.cat.SecretName(args[j+1].val, true) {
			found = arg{val: strings.TrimSuffix(found.val, "/") + "/**/" + args[j+1].val, static: true, glob: true}
			break
		}
	}
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
		if _, ok := c.cat.Secret(p, s.glob); ok {
			return s
		}
		if _, ok := c.cat.SystemPlace(p, s.glob); ok {
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
		out[i].from = "a name only known at run time (" + marks[0] + ")"
		if found.static && w.val == marks[0] {
			// Exactly the placeholder: a file under found.
			out[i].path, out[i].glob, out[i].under = found.val, found.glob, true
		}
	}
	return out
}

// fd runs the command after -x or -X (--exec, --exec-batch) for the files
// it finds, up to ";".
func fd(c *call) effect {
	for i, a := range c.args {
		cmd, ok := fdExec(a)
		if !ok {
			continue
		}
		j := i + 1
		for j < len(c.args) && !(c.args[j].static && c.args[j].val == ";") {
			j++
		}
		cmd = append(cmd, c.args[i+1:j]...)
		ops := operands(c.args[:i], "-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth",
			"--min-depth", "--exact-depth", "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner",
			"-j", "--threads", "--max-results", "-c", "--color", "--base-directory", "--path-separator", "--ignore-file")
		var starts []arg
		if len(ops) > 1 {
			starts = ops[1:]
		}
		cmd = placeholder(cmd, c.representative(starts), "{}", "{/}", "{//}", "{.}", "{/.}")
		c.run("fd "+a.text, cmd, effect{})
		break
	}
	return read("finds files")
}

// fdExec reports whether a word of fd starts its command: -x, --exec,
// -X, --exec-batch, or a cluster ending in one ("-Hx"), and returns the
// command's first word when the option carries it ("--exec=rm", "-xrm").
func fdExec(a arg) ([]arg, bool) {
	v := a.val
	if !a.static || len(v) < 2 || v[0] != '-' {
		return nil, false
	}
	if strings.HasPrefix(v, "--") {
		name, _, eq := strings.Cut(v, "=")
		if name != "--exec" && name != "--exec-batch" {
			return nil, false
		}
		if eq {
			return []arg{valueArg(a, a.val[len(name)+1:])}, true
		}
		return nil, true
	}
	for j := 1; j < len(v); j++ {
		switch {
		case v[j] == 'x' || v[j] == 'X':
			if j+1 < len(v) {
				return []arg{valueArg(a, a.val[j+1:])}, true
			}
			return nil, true
		case strings.IndexByte("deEtSojc", v[j]) >= 0:
			return nil, false // an option that takes a value
		}
	}
	return nil, false
}

// bashLike reports whether a shell takes bash's (POSIX sh's) option
// letters.
func bashLike(name string) bool {
	switch name {
	case "bash", "sh", "dash", "rbash":
		return true
	}
	return false
}

// posixShell is sh, bash and their kin: -c STRING is parsed; a script file
// runs; no script means code from standard input. A start-up file named
// on the command line (--rcfile) runs too, and ksh93 -R writes a
// cross-reference file.
func posixShell(c *call) effect {
	args := c.args
	cmode, smode, xtrace := false, false, false
	e := effect{none: true}
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
		case v == "--version" || v == "--help":
			return read("prints the shell's version or help")
		case strings.HasPrefix(v, "--"):
			i++
			name, val, eq := strings.Cut(v, "=")
			switch name {
			case "--rcfile", "--init-file", "--profile":
				if !eq && i < len(args) {
					val, eq = args[i].val, args[i].static
					i++
				}
				if eq {
					e = worse(e, c.runsFile(literal(val), "shell", true))
				}
			case "--emulate":
				i++ // zsh: the next word is the shell to emulate
			}
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			i++
			for _, ch := range v[1:] {
				switch ch {
				case 'c':
					cmode = true
				case 'x':
					xtrace = v[0] == '-' // bash -x: traces every command
				case 's':
					smode = true
				case 'o', 'O':
					// The option's name is the next word; as with set and
					// shopt, one not known to leave how commands are read
					// as Airlock reads them is privileged.
					if i < len(args) && bashLike(c.name) && v[0] == '-' {
						n := args[i]
						if !n.static || ch == 'o' && !inertSetOptions[n.val] || ch == 'O' && !inertShoptOptions[n.val] {
							e = worse(e, env("starts a shell with option "+n.text+", which changes how it reads its commands"))
						}
					}
					i++
				case 'T':
					if c.name == "mksh" {
						i++ // the terminal to run on
					}
				default:
					// bash -k makes every NAME=VALUE word an environment
					// variable (see inertSetFlags); -i and -l read the
					// user's own start-up files (Codex runs bash -lc).
					if bashLike(c.name) && v[0] == '-' && !strings.ContainsRune(inertSetFlags+"ilrpD", ch) {
						e = worse(e, env("starts a shell with option -"+string(ch)+", which changes how it reads its commands"))
					}
				case 'R':
					if (c.name == "ksh" || c.name == "ksh93") && i < len(args) {
						e = worse(e, c.optWrite("writes a cross-reference database", args[i]))
						i++
					}
				}
			}
		default:
			break loop
		}
	}
	ops := args[min(i, len(args)):]
	if cmode {
		if len(ops) == 0 && c.xargs {
			return unknown("runs code named by its input (xargs)")
		}
		if len(ops) == 0 {
			return worse(read("runs no command"), e)
		}
		if !ops[0].static {
			return unknown("runs a " + c.name + " command only known at run time")
		}
		n := c.runScript(c.name+" -c", ops[0].val, c.in)
		n.xtrace = xtrace
		// sh -c SCRIPT NAME ARGS...: ARGS are the script's $1, $2...;
		// xargs may append more, only known at run time.
		n.setArgs = true
		if !c.xargs {
			n.params = []value{}
			if len(ops) > 2 {
				n.params = valuesOf(ops[2:])
			}
		}
		c.zshNullCommands(ops[0].val)
		return e
	}
	if smode || len(ops) == 0 {
		if text, ok := c.in.names(); ok {
			c.zshNullCommands(text)
		}
		if c.in.kind == inPipe && c.in.text != "" {
			// What echo or printf writes into the pipe is the script it
			// runs; what does not parse stays unknown.
			c.runScript("| "+c.name, c.in.text, input{}).lenient = true
			return e
		}
		return worse(c.stdinCode("shell", true), e)
	}
	return worse(c.runsFile(ops[0], "shell", true), e)
}

// zshNullCommands analyses the commands a zsh script puts in NULLCMD and
// READNULLCMD: zsh runs them for a redirection without a command ("<file"
// runs the pager READNULLCMD names), which bash, whose grammar Airlock
// parses, treats as no command at all.
func (c *call) zshNullCommands(script string) {
	if c.name != "zsh" || !strings.Contains(script, "NULLCMD") {
		return
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		return // the script itself is an error
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		as, ok := n.(*syntax.Assign)
		if !ok || as.Name == nil || as.Name.Value != "NULLCMD" && as.Name.Value != "READNULLCMD" {
			return true
		}
		if v, static, _ := wordValue(as.Value); static {
			c.runScript("zsh "+as.Name.Value, v, input{kind: inPipe})
		} else {
			c.runUnknown("zsh "+as.Name.Value, as.Name.Value, "sets a command only known at run time")
		}
		return true
	})
}

// foreignShell is a shell whose language Airlock does not parse: code
// given on its command line or read from its input runs unseen, a script
// file runs, and some options run start-up files, set the environment or
// write files.
func foreignShell(c *call) effect {
	if c.name == "pwsh" || c.name == "powershell" {
		return pwsh(c)
	}
	f := foreignShells[c.name]
	p := f.opts.split(c.args)
	ops := p.ops
	e := effect{none: true}
	for _, o := range p.opts {
		switch {
		case slices.Contains(f.code, o.name):
			return unknown("runs " + c.name + " code, which Airlock cannot parse")
		case !o.has:
		case slices.Contains(f.rc, o.name):
			e = worse(e, c.runsFile(o.val, c.name, false))
		case slices.Contains(f.writes, o.name):
			e = worse(e, c.optWrite("writes", o.val))
		case slices.Contains(f.env, o.name):
			e = worse(e, c.setsEnv(c.name+" "+o.name, []arg{o.val}))
		}
	}
	if len(ops) == 0 || p.has(f.stdin...) || ops[0].static && ops[0].val == "-" {
		return unknown("runs " + c.name + " code read from its input, which Airlock cannot parse")
	}
	return worse(c.runsFile(ops[0], c.name, false), e)
}

// foreignOpts are the options of a shell Airlock does not parse: those
// that run code given as their value, that read the code from standard
// input, that run a file at start-up, that write a file, that set an
// environment variable.
type foreignOpts struct {
	opts                         getopt
	code, stdin, rc, writes, env []string
}

var foreignShells = map[string]foreignOpts{
	"fish": {opts: getopt{short: "cCdfop", long: names("--command --init-command --debug --features --debug-output " +
		"--profile --profile-startup"), flags: names("--interactive --login --no-config --no-execute " +
		"--print-rusage-self --print-debug-categories --private --version --help")},
		code: []string{"-c", "--command", "-C", "--init-command"}, stdin: []string{"-i", "--interactive"},
		writes: []string{"-o", "--debug-output", "-p", "--profile", "--profile-startup"}},
	"csh":  {opts: getopt{}, code: []string{"-c"}, stdin: []string{"-s", "-t", "-i"}},
	"tcsh": {opts: getopt{}, code: []string{"-c"}, stdin: []string{"-s", "-t", "-i"}},
	"nu": {opts: getopt{short: "ceIm", long: names("--commands --execute --config --env-config --plugin-config " +
		"--plugins --log-level --log-target --log-include --log-exclude --table-mode --error-style " +
		"--include-path --experimental-options --ide-goto-def --ide-hover --ide-complete --ide-check")},
		code:  []string{"-c", "--commands", "-e", "--execute"},
		stdin: []string{"-i", "--interactive", "--stdin"},
		rc:    []string{"--config", "--env-config", "--plugin-config", "--plugins"}},
	// elvish spells its options as Go's flag package does ("-rc FILE").
	"elvish": {opts: goOptions("--rc", "--log", "--db", "--sock", "--deprecation-level"),
		code: []string{"-c", "--c"}, stdin: []string{"-i", "--i"}, rc: []string{"--rc"},
		writes: []string{"--log", "--db"}},
	"xonsh": {opts: getopt{short: "cD", long: names("--rc --shell-type --timings")},
		code: []string{"-c"}, stdin: []string{"-i", "--interactive"}, rc: []string{"--rc"}, env: []string{"-D"}},
}

// pwsh is PowerShell: its parameters are spelled in any case, after "-"
// or "--", and by any prefix ("-Comm" is -Command, "-f" is -File); a
// script given as an operand is a -File.
func pwsh(c *call) effect {
	e := effect{none: true}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !a.static {
			return unknown("runs PowerShell with an argument only known at run time")
		}
		if !strings.HasPrefix(a.val, "-") {
			return worse(c.runsFile(a, "PowerShell", false), e)
		}
		name, _, attached := strings.Cut(strings.ToLower(strings.TrimLeft(a.val, "-")), ":")
		var next arg
		if i+1 < len(c.args) {
			next = c.args[i+1]
		}
		switch {
		case name == "":
			return unknown("runs PowerShell code read from its input, which Airlock cannot parse")
		case abbreviation(name, "command", "commandwithargs", "encodedcommand") || name == "cwa" || name == "ec":
			return unknown("runs PowerShell code, which Airlock cannot parse")
		case abbreviation(name, "file"):
			if i+1 == len(c.args) || next.static && next.val == "-" {
				return unknown("runs PowerShell code read from its input, which Airlock cannot parse")
			}
			return worse(c.runsFile(next, "PowerShell", false), e)
		case attached:
		case abbreviation(name, "settingsfile", "configurationfile"):
			c.raiseReads(&e, next)
			i++
		case abbreviation(name, "configurationname", "custompipename", "executionpolicy", "inputformat",
			"outputformat", "windowstyle", "workingdirectory") || name == "ep" || name == "wd" || name == "if" || name == "of":
			i++
		}
	}
	return unknown("runs PowerShell code read from its input, which Airlock cannot parse")
}

// abbreviation reports whether name is one of words or a prefix of one.
func abbreviation(name string, words ...string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, name) {
			return true
		}
	}
	return false
}

// arch is macOS arch: "arch -x86_64 CMD" runs CMD, -e NAME=VALUE sets its
// environment; alone it prints the architecture.
func arch(c *call) effect {
	e := effect{none: true}
	i := 0
	for ; i < len(c.args) && c.args[i].static && strings.HasPrefix(c.args[i].val, "-"); i++ {
		switch c.args[i].val {
		case "-arch", "-d":
			i++
		case "-e":
			if i+1 < len(c.args) {
				i++
				e = worse(e, c.setsEnv("arch -e", c.args[i:i+1]))
			}
		}
	}
	if i >= len(c.args) {
		return worse(read("prints the architecture"), e)
	}
	c.run("arch", c.args[i:], effect{})
	return e
}

// busybox runs the applet its first word names: as the program of that
// name, or as one of busyboxApplets. --install links every applet into a
// directory (the system's by default).
func busybox(c *call) effect {
	if len(c.args) == 0 {
		return read("lists its commands")
	}
	applet := c.args[0]
	switch {
	case applet.static && applet.val == "--install":
		e := write(airlock.ClassFSWrite, "installs links to its applets")
		if ops := operands(c.args[1:]); len(ops) > 0 {
			c.raiseWrites(&e, ops[0])
		} else {
			c.raiseWrites(&e, literal("/bin"))
		}
		return e
	case applet.static && strings.HasPrefix(applet.val, "-"):
		return read("lists its commands")
	}
	if r := busyboxApplets[applet.val]; r != nil && applet.static {
		return c.delegate(c.args[1:], r)
	}
	c.run("busybox", c.args, effect{})
	return effect{none: true}
}

// busyboxApplets are the applets of busybox that no table has: shells,
// servers that give a program or files to whoever connects, programs that
// run others, and clients that move files over the network.
var busyboxApplets = map[string]rule{
	"hush": posixShell, "msh": posixShell, "lash": posixShell,
	"httpd":   httpd,
	"telnetd": telnetd,
	"tcpsvd":  svd, "udpsvd": svd,
	"inetd": fixed(admin("starts the network services of a configuration")),
	"ftpd":  fileServer("w", "serves files over FTP"), "tftpd": fileServer("c", "serves files over TFTP"),
	"dnsd": fixed(net(airlock.ClassNetConnect, "serves DNS")), "fakeidentd": fixed(net(airlock.ClassNetConnect, "serves ident")),
	"udhcpd": fixed(admin("serves DHCP")), "udhcpc": fixed(admin("configures the network by DHCP, running a script")),
	"ntpd": fixed(admin("sets the clock from the network")), "crond": fixed(admin("runs scheduled jobs")),
	"ifplugd": fixed(admin("runs a script when a network cable is plugged")), "zcip": fixed(admin("configures the network")),
	"acpid": fixed(admin("runs scripts on power events")), "devmem": fixed(admin("reads or writes physical memory")),
	"switch_root": fixed(admin("changes the root file system")), "pivot_root": fixed(admin("changes the root file system")),
	"conspy": fixed(admin("reads a virtual console")),
	"login":  fixed(unknown("opens a login shell")), "sulogin": fixed(unknown("opens a root shell")),
	"getty":      fixed(unknown("opens a login prompt")),
	"ssl_client": fixed(net(airlock.ClassNetConnect, "opens a TLS connection")),
	"ftpget":     ftpTransfer(false), "ftpput": ftpTransfer(true),
	"sendmail":   appletRunner("-H", "sends mail", net(airlock.ClassNetConnect, "sends mail")),
	"popmaildir": appletRunner("-F", "fetches mail", net(airlock.ClassNetConnect, "fetches mail")),
	"reformime":  appletRunner("-X", "parses mail", read("parses mail")),
	"inotifyd":   inotifyd,
	"run-parts":  fixed(exec("runs every program in a directory")),
	"runsv":      fixed(exec("runs a service")), "runsvdir": fixed(exec("runs the services of a directory")),
	"hexedit": fixed(write(airlock.ClassFSWrite, "edits a file")),
}

// httpd serves the files of a directory (-h, else the current one) over
// HTTP, and runs the CGI programs under it; -d, -e and -m only encode or
// hash a string.
func httpd(c *call) effect {
	p := getopt{short: "cpuhrmeid"}.split(c.args)
	if p.has("-d", "-e", "-m") {
		return read("encodes a string")
	}
	dir, ok := p.value("-h")
	if !ok {
		dir = literal(".")
	}
	e := net(airlock.ClassNetConnect, "serves the files of "+dir.text+" over HTTP, and runs its CGI programs")
	c.servesFiles(&e, dir)
	if conf, ok := p.value("-c"); ok {
		c.raiseReads(&e, conf)
	}
	return e
}

// servesFiles raises a server's effect when the directory it serves holds
// secrets: one of them, a home directory, the root, /etc.
func (c *call) servesFiles(e *effect, dir arg) {
	c.raiseReads(e, dir)
	if v, ok := dir.pathValue(); ok && e.tier < airlock.TierPrivileged {
		p := c.resolve(v)
		_, rest, home := sensitive.SplitHome(p)
		if p == "/" || p == "/etc" || p == "/home" || p == "/Users" || home && rest == "" {
			*e = readsSecret(p, "every file under it")
			e.reason = "serves " + e.reason[len("reads "):]
		}
	}
}

// fileServer is ftpd or tftpd, run by inetd or tcpsvd: it serves the files
// of a directory, and writes there with the write letter (ftpd -w).
func fileServer(writeOpt, reason string) rule {
	return func(c *call) effect {
		p := getopt{short: "tTuU"}.split(c.args)
		ops := p.ops
		dir := literal(".")
		if len(ops) > 0 {
			dir = ops[0]
		}
		e := net(airlock.ClassNetConnect, reason)
		c.servesFiles(&e, dir)
		if p.has("-" + writeOpt) {
			w := write(airlock.ClassFSWrite, "lets whoever connects write files")
			c.raiseWrites(&w, dir)
			if w.tier == airlock.TierPrivileged {
				e = worse(e, w)
			}
		}
		return e
	}
}

// telnetd gives its login program (-l, /bin/login by default) to whoever
// connects: the program reads their input.
func telnetd(c *call) effect {
	p := getopt{short: "lpbfS"}.split(c.args)
	prog, ok := p.value("-l")
	if !ok {
		prog = literal("/bin/login")
	}
	n := c.run("busybox telnetd", []arg{prog}, effect{})
	n.in = input{kind: inPipe}
	return net(airlock.ClassNetConnect, "gives a login program to whoever connects")
}

// svd is tcpsvd or udpsvd: "tcpsvd [options] IP PORT PROG ARGS" runs PROG
// for each connection, reading from it.
func svd(c *call) effect {
	ops := getopt{short: "cCbul"}.split(c.args).ops
	e := net(airlock.ClassNetConnect, "gives a program to whoever connects")
	if len(ops) < 3 {
		return e
	}
	n := c.run("busybox svd", ops[2:], effect{})
	n.in = input{kind: inPipe}
	return e
}

// ftpTransfer is ftpget (HOST [LOCAL] REMOTE: writes LOCAL) or ftpput
// (HOST REMOTE [LOCAL]: uploads LOCAL).
func ftpTransfer(upload bool) rule {
	return func(c *call) effect {
		ops := getopt{short: "upP"}.split(c.args).ops
		e := net(airlock.ClassNetHTTP, "downloads a file over FTP")
		if upload {
			e.reason = "uploads a file over FTP"
		}
		if len(ops) < 3 {
			return e
		}
		local := ops[1]
		if upload {
			local = ops[2]
			c.raiseReads(&e, local)
		} else {
			c.raiseWrites(&e, local)
		}
		return e
	}
}

// appletRunner is a mail applet whose option opt runs a helper program,
// given as one string.
func appletRunner(opt, reason string, e effect) rule {
	return func(c *call) effect {
		for _, v := range c.values(opt) {
			c.runWords("busybox "+reason+" "+opt, []arg{v}, input{})
		}
		return e
	}
}

// inotifyd runs "inotifyd PROG FILE[:MASK]..." on every event.
func inotifyd(c *call) effect {
	if len(c.args) == 0 {
		return read("runs no command")
	}
	c.run("inotifyd", c.args[:1], effect{})
	return effect{none: true}
}

var startStopOpts = getopt{short: "xapnugcrdNPIksRO",
	long: names("--exec --startas --pidfile --name --user --group --chuid --chroot --chdir --nicelevel --procsched " +
		"--iosched --umask --signal --retry --output --ppid --notify-timeout"), flags: names("--start --stop --status " +
		"--test --oknodo --quiet --verbose --background --no-close --make-pidfile --remove-pidfile --notify-await " +
		"--help --version")}

// startStopDaemon starts the program of -x (--exec) or -a (--startas),
// with the arguments after "--", and writes its output (-O) and its pid
// file (-m -p); -K stops it.
func startStopDaemon(c *call) effect {
	p := startStopOpts.parse(c.args)
	rest := p.ops
	switch {
	case p.has("-K", "--stop"):
		return kill("stops a daemon")
	case p.has("-T", "--status", "-t", "--test"):
		return read("shows a daemon's status")
	}
	e := effect{none: true}
	for _, o := range p.opts {
		if o.has && (o.name == "-O" || o.name == "--output" || (o.name == "-p" || o.name == "--pidfile") &&
			p.has("-m", "--make-pidfile")) {
			e = worse(e, c.optWrite("writes", o.val))
		}
	}
	prog, ok := p.value("-a", "--startas")
	if !ok {
		prog, ok = p.value("-x", "--exec")
	}
	if !ok {
		return worse(read("runs no command"), e)
	}
	c.run("start-stop-daemon", append([]arg{prog}, rest...), effect{})
	return e
}

// chpst runs a program with changed limits, user or environment: -e DIR
// sets variables from the files of DIR, which Airlock cannot see.
func chpst(c *call) effect {
	p := getopt{short: "uUe/nlLmdofpct"}.split(c.args)
	rest := p.ops
	e := effect{none: true}
	if d, ok := p.value("-e"); ok {
		e = env("sets environment variables from the files of " + d.text)
	}
	return c.wraps("chpst", rest, e)
}

// envdir runs "envdir DIR PROG": its variables come from the files of DIR.
func envdir(c *call) effect {
	if len(c.args) < 2 {
		return read("runs no command")
	}
	c.run("envdir", c.args[1:], effect{})
	return env("sets environment variables from the files of " + c.args[0].text)
}

// setarch runs "setarch [ARCH] [options] [PROG]" (linux32 and the like
// take no ARCH); without a program it opens a shell.
func setarch(named bool) rule {
	return func(c *call) effect {
		args := c.args
		if named && len(args) > 0 && !(args[0].static && strings.HasPrefix(args[0].val, "-")) {
			args = args[1:]
		}
		rest := getopt{short: "B"}.split(args).ops
		if len(rest) == 0 {
			if named && len(c.args) == 0 {
				return read("lists architectures")
			}
			return c.stdinCode("shell", true)
		}
		c.run("setarch", rest, effect{})
		return effect{none: true}
	}
}

// capsh runs bash (or the program of --shell) with the words after "--",
// and itself again with those after "=="; otherwise it shows
// capabilities.
func capsh(c *call) effect {
	shell := literal("/bin/bash")
	for i, a := range c.args {
		if !a.static {
			return unknown("runs capsh with an argument only known at run time")
		}
		if v, ok := strings.CutPrefix(a.val, "--shell="); ok {
			shell = literal(v)
		}
		switch a.val {
		case "--":
			c.run("capsh --", append([]arg{shell}, c.args[i+1:]...), effect{})
			return effect{none: true}
		case "==":
			c.run("capsh ==", append([]arg{literal("capsh")}, c.args[i+1:]...), effect{})
			return effect{none: true}
		}
	}
	return read("shows capabilities")
}

// sg runs "sg GROUP [-c] COMMAND" with "sh -c"; without a command it opens
// a shell.
func sg(c *call) effect {
	ops := c.args
	if len(ops) > 0 && ops[0].static && ops[0].val == "-" {
		ops = ops[1:]
	}
	if len(ops) < 2 {
		return unknown("opens a shell with another group")
	}
	cmd := ops[1:]
	if cmd[0].static && cmd[0].val == "-c" {
		cmd = cmd[1:]
	}
	c.runWords("sg", cmd, c.in)
	return effect{none: true}
}

var runconOpts = getopt{short: "urtl", long: names("--user --role --type --range"), flags: names("--compute --help " +
	"--version")}

// runcon runs "runcon CONTEXT COMMAND", or "runcon -t TYPE ... COMMAND".
func runcon(c *call) effect {
	p := runconOpts.split(c.args)
	rest := p.ops
	if !p.has("-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range") && len(rest) > 0 {
		rest = rest[1:]
	}
	return c.runs("runcon", rest, read("shows the security context"))
}

// ksu is Kerberos su: "ksu [USER] [options] -e COMMAND..." runs COMMAND
// as USER; "-a ARGS" passes ARGS to the shell, and without either it opens
// one.
func ksu(c *call) effect {
	floor := admin("runs as another user")
	for i, a := range c.args {
		if !a.static {
			continue
		}
		switch a.val {
		case "-e":
			c.run("ksu -e", c.args[i+1:], floor)
			return effect{none: true}
		case "-a":
			c.run("ksu -a", append([]arg{literal("sh")}, c.args[i+1:]...), floor)
			return effect{none: true}
		}
	}
	return unknown("opens an interactive shell as another user")
}

var prlimitOpts = getopt{short: "po", optShort: "cdefilmnqrstuvxy", long: names("--pid --output"),
	flags: names("--core --data --nice --fsize --sigpending --memlock --rss --nofile --msgqueue --rtprio --stack " +
		"--cpu --nproc --as --locks --rttime --noheadings --raw --verbose --help --version")}

// prlimit runs a command with resource limits, or changes those of a
// running process (--pid).
func prlimit(c *call) effect {
	p := prlimitOpts.split(c.args)
	rest := p.ops
	if _, ok := p.value("-p", "--pid"); ok {
		return exec("changes the resource limits of a running process")
	}
	return c.runs("prlimit", rest, read("shows resource limits"))
}

var cpulimitOpts = getopt{short: "lpePsc", long: names("--limit --pid --exe --path --signal --cpu"),
	flags: names("--lazy --include-children --verbose --foreground --quiet --kill --restore --monitor-forks " +
		"--background --help")}

// cpulimit runs a command with a CPU limit, or limits a running process
// (-p, -e, -P).
func cpulimit(c *call) effect {
	p := cpulimitOpts.split(c.args)
	rest := p.ops
	switch {
	case len(rest) > 0:
		c.run("cpulimit", rest, effect{})
		return effect{none: true}
	case p.has("-p", "-e", "-P", "--pid", "--exe", "--path"):
		return exec("limits the CPU of a running process")
	}
	return read("runs no command")
}

// choom runs "choom -n ADJ COMMAND", or with -p changes the OOM score of a
// running process.
func choom(c *call) effect {
	p := choomOpts.split(c.args)
	if p.has("-p", "--pid") {
		return exec("changes the OOM score of a running process")
	}
	return c.runs("choom", p.ops, read("runs no command"))
}

// logsave runs "logsave [-asv] LOGFILE COMMAND" and writes the command's
// output to LOGFILE.
func logsave(c *call) effect {
	rest := getopt{}.split(c.args).ops
	if len(rest) < 2 {
		return read("runs no command")
	}
	e := effect{none: true}
	if rest[0].val != "-" {
		e = c.optWrite("writes the output of a command to", rest[0])
	}
	c.run("logsave", rest[1:], effect{})
	return e
}

// setlock is daemontools' "setlock [-nNxX] FILE PROGRAM": it creates the
// lock file.
func setlock(c *call) effect {
	rest := getopt{}.split(c.args).ops
	if len(rest) == 0 {
		return read("takes a lock")
	}
	e := effect{none: true}
	if lock := c.optWrite("creates a lock file", rest[0]); lock.tier == airlock.TierPrivileged {
		e = lock
	}
	if len(rest) < 2 {
		return worse(read("takes a lock"), e)
	}
	c.run("setlock", rest[1:], effect{})
	return e
}

// rlwrap runs a command with line editing: -z runs a filter program, -H
// and -l write its history and log, -f reads words to complete from a file.
func rlwrap(c *call) effect {
	p := rlwrapOpts.split(c.args)
	rest := p.ops
	e := effect{none: true}
	for _, o := range p.opts {
		switch {
		case !o.has:
		case o.name == "-z" || o.name == "--filter":
			c.runWords("rlwrap -z", []arg{o.val}, input{kind: inPipe})
		case o.name == "-H" || o.name == "--history-filename" || o.name == "-l" || o.name == "--logfile":
			e = worse(e, c.optWrite("writes", o.val))
		case o.name == "-f" || o.name == "--file":
			c.raiseReads(&e, o.val)
		}
	}
	return c.wraps("rlwrap", rest, e)
}

var rlwrapOpts = getopt{short: "bCDefFgHlMOPqsStwz", optShort: "amp", long: names("--break-chars --command-name " +
	"--history-no-dupes --extra-char-after-completion --file --history-format --forget-matching " +
	"--history-filename --logfile --multi-line-ext --only-cook --pre-given --quote-characters --histsize " +
	"--substitute-prompt --set-term-name --wait-before-prompt --filter"), flags: names("--ansi-colour-aware " +
	"--always-readline --complete-filenames --case-insensitive --no-children --no-warnings --one-shot " +
	"--remember --renice --mirror-arguments --version --polling --help --password --multi-line --prompt-colour")}

// faketime runs "faketime [options] TIMESTAMP COMMAND"; --date-prog names
// the program that reads the timestamp.
func faketime(c *call) effect {
	p := faketimeOpts.split(c.args)
	rest := p.ops
	if prog, ok := p.value("--date-prog"); ok {
		c.run("faketime --date-prog", []arg{prog}, effect{})
	}
	return c.runs("faketime", rest[min(1, len(rest)):], read("runs no command"))
}

// fakeroot runs a command, or the user's shell, pretending to be root: -l
// loads a library into it, --faked runs another daemon, -s writes its
// state to a file and -i reads it.
func fakeroot(c *call) effect {
	p := fakerootOpts.split(c.args)
	rest := p.ops
	e := effect{none: true}
	for _, o := range p.opts {
		switch {
		case !o.has:
		case o.name == "-l" || o.name == "--lib":
			e = worse(e, env("loads library "+o.val.text+" into the command"))
		case o.name == "--faked":
			c.run("fakeroot --faked", []arg{o.val}, effect{})
		case o.name == "-s":
			e = worse(e, c.optWrite("saves its state to", o.val))
		case o.name == "-i":
			c.raiseReads(&e, o.val)
		}
	}
	if len(rest) == 0 {
		return worse(c.stdinCode("shell", true), e)
	}
	c.run("fakeroot", rest, effect{})
	return e
}

// bwrapArity is how many words each option of bubblewrap takes.
var bwrapArity = map[string]int{
	"--args": 1, "--argv0": 1, "--userns": 1, "--userns2": 1, "--pidns": 1, "--uid": 1, "--gid": 1,
	"--hostname": 1, "--chdir": 1, "--unsetenv": 1, "--lock-file": 1, "--sync-fd": 1, "--remount-ro": 1,
	"--exec-label": 1, "--file-label": 1, "--proc": 1, "--dev": 1, "--tmpfs": 1, "--mqueue": 1, "--dir": 1,
	"--seccomp": 1, "--add-seccomp-fd": 1, "--block-fd": 1, "--userns-block-fd": 1, "--info-fd": 1,
	"--json-status-fd": 1, "--cap-add": 1, "--cap-drop": 1, "--perms": 1, "--size": 1, "--overlay-src": 1,
	"--tmp-overlay": 1, "--ro-overlay": 1, "--setenv": 2, "--bind": 2, "--bind-try": 2, "--dev-bind": 2,
	"--dev-bind-try": 2, "--ro-bind": 2, "--ro-bind-try": 2, "--bind-fd": 2, "--ro-bind-fd": 2, "--file": 2,
	"--bind-data": 2, "--ro-bind-data": 2, "--symlink": 2, "--chmod": 2, "--overlay": 3,
}

// bwrap is bubblewrap: it runs a command in a sandbox its options build;
// --setenv sets the command's environment.
func bwrap(c *call) effect {
	e := effect{none: true}
	i := 0
	for i < len(c.args) {
		a := c.args[i]
		if !a.static || !strings.HasPrefix(a.val, "--") {
			break
		}
		i++
		if a.val == "--" {
			break
		}
		n := bwrapArity[a.val]
		if a.val == "--setenv" && i+1 < len(c.args) {
			name, val := c.args[i], c.args[i+1]
			assign := arg{val: name.val + "=" + val.val, text: name.text + "=" + val.text, static: name.static && val.static}
			e = worse(e, c.setsEnv("bwrap --setenv", []arg{assign}))
		}
		i += n
	}
	if i >= len(c.args) {
		return worse(read("runs no command"), e)
	}
	c.run("bwrap", c.args[i:], effect{})
	return e
}

// sshOpts are ssh's options: -F follows a configuration, -E writes a
// log, -I loads a library (see sshOptions).
var sshOpts = getopt{short: "BbcDeiJLlmOopQRSWw",
	roles: map[string]role{"-F": runsFile, "-E": writesFile, "-I": loadsLibrary}}

// ssh: the remote command is parsed (Via ssh); options that run local
// commands (ProxyCommand) are parsed too.
func ssh(c *call) effect {
	p := sshOpts.split(c.args)
	rest := p.ops
	// ssh takes options after the host too, unless "--" came before it.
	if n := len(c.args) - len(rest); len(rest) > 1 && !(n > 0 && c.args[n-1].static && c.args[n-1].val == "--") {
		more := sshOpts.split(rest[1:])
		p.opts, rest = append(p.opts, more.opts...), append(rest[:1:1], more.ops...)
	}
	host := "a host"
	if len(rest) > 0 {
		host = rest[0].text
	}
	e := net(airlock.ClassNetConnect, "connects to "+host+" over ssh")
	c.sshOptions(&e, p.opts, sshOpts.roles)
	if len(rest) == 0 || p.has("-N", "-O", "-G", "-V", "-Q") {
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

var scriptOpts = getopt{short: "BIOTEmoc", optShort: "t", long: names("--log-io --log-in --log-out --log-timing " +
	"--echo --logging-format --output-limit --command"), flags: names("--append --return --flush --force --quiet " +
	"--timing --help --version")}

// scriptRule is script, which records a session to its files (the
// operand, the log options) while it runs a command (-c; on BSD, the words
// after the file) or an interactive shell. What it reads from a pipe it
// types into that command's terminal: keystrokes, which a shell or an
// editor runs, whatever Airlock knows of the text.
func scriptRule(c *call) effect {
	p := scriptOpts.parse(c.args)
	ops := p.ops
	e := write(airlock.ClassFSWrite, "records a terminal session to a file")
	for _, o := range p.opts {
		switch o.name {
		case "-B", "-I", "-O", "-T", "-t", "--log-io", "--log-in", "--log-out", "--log-timing", "--timing":
			if o.has {
				c.raiseWrites(&e, o.val)
			}
		}
	}
	if len(ops) > 0 {
		c.raiseWrites(&e, ops[0])
	}
	in := c.in
	if in.kind == inPipe {
		in = input{kind: inPipe}
		e = unknown("types what it reads from a pipe into the command it runs, as keystrokes")
	}
	if cmd, ok := p.value("-c", "--command"); ok {
		if !cmd.static {
			return unknown("runs a command only known at run time")
		}
		c.runScript("script -c", cmd.val, in)
		return e
	}
	if len(ops) > 1 {
		c.run("script", ops[1:], effect{}).in = in
		return e
	}
	return unknown("opens an interactive shell and records it")
}

// direnv loads the .envrc of a directory (bash code) once it is allowed;
// edit runs the editor and then allows the file.
func direnv(c *call) effect {
	if len(c.args) == 0 {
		return read("shows direnv status")
	}
	switch c.args[0].val {
	case "exec":
		if len(c.args) >= 3 {
			n := c.run("direnv exec", c.args[2:], effect{})
			n.cwd, n.setCwd = cwdArg(c, c.args[1]), true
			return effect{none: true}
		}
	case "allow", "permit", "grant":
		return exec("allows a .envrc to run in this directory")
	case "edit":
		return exec("edits a .envrc with the editor and allows it to run")
	case "fetchurl":
		return net(airlock.ClassNetHTTP, "downloads a file")
	case "prune":
		return write(airlock.ClassFSWrite, "forgets allowed .envrc files that no longer exist")
	}
	return read("shows direnv status")
}

// nixShell builds an environment and runs a command in it (--run), or
// opens a shell, which runs what it reads.
func nixShell(c *call) effect {
	e := net(airlock.ClassPackageInstall, "builds or downloads a Nix environment")
	if cmd, ok := c.value("--run", "--command"); ok {
		if !cmd.static {
			c.runUnknown("nix-shell --run", cmd.text, "runs a command only known at run time")
		} else {
			c.runScript("nix-shell --run", cmd.val, c.in)
		}
		return e
	}
	return worse(e, c.stdinCode("shell", true))
}
