package shell

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// System administration: services, the kernel, users and groups, the
// firewall and the network, disks, boot, and macOS settings.

var adminCommands = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"systemctl": systemctl, "service": service, "launchctl": launchctl,
		"mount": mount, "umount": fixed(admin("unmounts file systems")),
		"modprobe": fixed(admin("loads kernel modules")), "insmod": fixed(admin("loads kernel modules")),
		"rmmod": fixed(admin("unloads kernel modules")), "depmod": fixed(admin("updates kernel module data")),
		"iptables": firewall, "ip6tables": firewall, "iptables-restore": fixed(admin("replaces firewall rules")),
		"iptables-save": iptablesSave, "ip6tables-save": iptablesSave, "ip6tables-restore": fixed(admin("replaces firewall rules")),
		"nft": firewall, "ufw": firewall,
		"firewall-cmd": firewall, "pfctl": firewall,
		"useradd": fixed(admin("creates users")), "userdel": fixed(admin("deletes users")),
		"usermod": fixed(admin("changes users")), "groupadd": fixed(admin("creates groups")),
		"groupdel": fixed(admin("deletes groups")), "groupmod": fixed(admin("changes groups")),
		"adduser": fixed(admin("creates users")), "deluser": fixed(admin("deletes users")),
		"addgroup": fixed(admin("creates groups")), "delgroup": fixed(admin("deletes groups")),
		"passwd": fixed(admin("changes passwords")), "chpasswd": fixed(admin("changes passwords")),
		"chage": fixed(admin("changes password expiry")), "gpasswd": fixed(admin("changes groups")),
		"newusers": fixed(admin("creates users")), "chsh": fixed(admin("changes a login shell")),
		"chfn": fixed(admin("changes user information")), "vipw": fixed(admin("edits the password file")),
		"vigr": fixed(admin("edits the group file")), "visudo": visudo,
		"crontab": crontab, "at": fixed(admin("schedules a command to run later")),
		"batch": fixed(admin("schedules a command to run later")), "atrm": fixed(admin("removes scheduled commands")),
		"atq":      fixed(read("lists scheduled commands")),
		"shutdown": fixed(admin("shuts the machine down")), "reboot": fixed(admin("reboots the machine")),
		"halt": fixed(admin("halts the machine")), "poweroff": fixed(admin("powers the machine off")),
		"init": fixed(admin("changes the run level")), "telinit": fixed(admin("changes the run level")),
		"sysctl": sysctl, "ip": ipRoute, "ifconfig": ifconfig, "route": argsAdmin("changes routes", "-n", "-e", "-v"),
		"arp":    argsAdmin("changes the ARP table", "-a", "-n", "-e", "-v"),
		"setcap": fixed(admin("grants file capabilities")), "ldconfig": ldconfig,
		"setenforce": fixed(admin("changes SELinux enforcement")),
		"swapon":     argsAdmin("enables swap", "--show", "-s", "--summary"), "swapoff": fixed(admin("disables swap")),
		"hwclock": hwclock, "dmesg": dmesg, "journalctl": journalctl,
		"update-alternatives": updateAlternatives, "update-grub": fixed(admin("changes the boot loader")),
		"grub-install": fixed(admin("installs the boot loader")), "grub-mkconfig": fixed(admin("changes the boot loader")),
		"efibootmgr":       argsAdmin("changes boot entries", "-v"),
		"update-initramfs": fixed(admin("rebuilds the initramfs")), "dracut": fixed(admin("rebuilds the initramfs")),
		"mkinitcpio": fixed(admin("rebuilds the initramfs")),
		"tc":         fixed(admin("changes traffic control")), "ethtool": ethtool, "nmcli": nmcli,
		"timedatectl": ctl("changes time settings"), "hostnamectl": ctl("changes the host name"),
		"localectl": ctl("changes locale settings"),
		"fdisk":     disk("-l", "--list"), "sfdisk": sfdisk,
		"parted": parted, "gdisk": disk("-l"), "sgdisk": sgdisk,
		"cfdisk": disk(), "mkfs": disk(), "mke2fs": disk(), "fsck": disk("-n", "-N"), "wipefs": wipefs,
		"mkswap": disk(), "blkdiscard": disk(), "diskutil": diskutil,
		"defaults": defaults, "scutil": scutil,
		"networksetup":   prefixAdmin("changes network settings", "-get", "-list", "-print", "-show", "-version", "-help"),
		"pmset":          prefixAdmin("changes power settings", "-g"),
		"spctl":          prefixAdmin("changes Gatekeeper settings", "--status", "--assess", "-a"),
		"csrutil":        prefixAdmin("changes System Integrity Protection", "status"),
		"softwareupdate": softwareupdate,
		"dscl":           dscl,
	}
})

var systemctlOpts = getopt{short: "tpHMno",
	long:  names("--type --property --host --machine --lines --output --state --signal --kill-whom --root --job-mode"),
	exact: true}

// systemctl reads with the subcommands that show; -H runs it on another
// host over ssh.
func systemctl(c *call) effect {
	sub, _, ok := subcommand(c.args, systemctlOpts)
	if !ok {
		return unknown("runs systemctl with a subcommand only known at run time")
	}
	e := admin("manages services (systemctl " + sub + ")")
	switch sub {
	case "", "status", "show", "cat", "help", "is-active", "is-enabled", "is-failed", "is-system-running",
		"list-units", "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs",
		"list-machines", "list-automounts", "list-paths", "get-default", "show-environment", "--version":
		e = read("shows services")
	}
	return worse(e, remoteHost(c))
}

// systemdHost is the -H (--host) option of systemd's programs, which runs
// them on another host over ssh.
var systemdHost = getopt{short: "H", long: names("--host")}

// remoteHost is the effect of systemdHost: the program talks to another
// machine.
func remoteHost(c *call) effect {
	if systemdHost.has(c.args, "-H", "--host") {
		return net(airlock.ClassNetConnect, "runs on another host over ssh")
	}
	return effect{}
}

// service runs a script of /etc/init.d: a name with a "/" reaches a
// program anywhere.
func service(c *call) effect {
	ops := c.operands()
	switch {
	case len(ops) > 0 && !ops[0].static:
		return admin("manages a service only known at run time")
	case len(ops) > 0 && strings.Contains(ops[0].val, "/"):
		c.run("service", append([]arg{literal(path.Join("/etc/init.d", ops[0].val))}, ops[1:]...), effect{})
		return admin("runs a program outside /etc/init.d")
	}
	if c.has("--status-all") || len(ops) >= 2 && ops[1].val == "status" {
		return read("shows services")
	}
	return admin("manages services")
}

func launchctl(c *call) effect {
	if len(c.args) == 0 {
		return read("shows launchd help")
	}
	switch c.args[0].val {
	case "list", "print", "print-disabled", "print-cache", "blame", "dumpstate", "procinfo", "version",
		"help", "managername", "manageruid", "managerpid", "getenv", "hostinfo", "resolveport":
		return read("shows launchd services")
	}
	return admin("manages launchd services")
}

var mountOpts = getopt{short: "TtoOLUN", optShort: "m", long: names("--fstab --types --options --test-opts --label " +
	"--uuid --namespace --source --target --target-prefix --options-mode --options-source --map-users " +
	"--map-groups"), flags: names("--all --no-canonicalize --fake --fork --internal-only --show-labels --mkdir " +
	"--no-mtab --options-source-force --onlyonce --read-only --rw --read-write --verbose --help --version " +
	"--bind --move --rbind --make-shared --make-slave --make-private --make-unbindable --make-rshared " +
	"--make-rslave --make-rprivate --make-runbindable")}

// mount lists the mounted file systems when given no operand and only the
// options that filter or show the list; anything else mounts.
func mount(c *call) effect {
	p := mountOpts.parse(c.args)
	if len(p.ops) > 0 {
		return admin("mounts file systems")
	}
	for _, o := range p.opts {
		switch o.name {
		case "-l", "--show-labels", "-t", "--types", "-v", "--verbose", "-V", "--version", "-h", "--help":
		default:
			return admin("mounts file systems")
		}
	}
	return read("lists mounted file systems")
}

var iptablesOpts = getopt{short: "tjgiopsdm", long: names("--table --jump --goto --in-interface --out-interface " +
	"--protocol --source --src --destination --dst --match --modprobe --wait-interval"), flags: names("--append " +
	"--check --delete --insert --replace --list --list-rules --flush --zero --new-chain --delete-chain --policy " +
	"--rename-chain --fragment --numeric --verbose --wait --exact --line-numbers --set-counters --version " +
	"--help --ipv4 --ipv6")}

var nftOpts = getopt{short: "fIdD", long: names("--file --includepath --debug --define"), flags: names("--check " +
	"--interactive --handle --echo --json --numeric --service --stateless --reversedns --terse --optimize " +
	"--version --help --numeric-priority --numeric-protocol --numeric-time --guid")}

// firewall reads when it only lists rules. iptables runs the program of
// --modprobe to load kernel modules, and nft applies the rules of a file
// (-f) or of its input (-i).
func firewall(c *call) effect {
	switch c.name {
	case "iptables", "ip6tables":
		p := iptablesOpts.parse(c.args)
		if m, ok := p.value("--modprobe"); ok {
			c.run(c.name+" --modprobe", []arg{m}, admin("loads kernel modules for the firewall"))
		}
		if p.has("-L", "--list", "-S", "--list-rules", "-C", "--check") && !p.has("-A", "-D",
			"-I", "-R", "-F", "-X", "-P", "-N", "-E", "-Z", "--append", "--delete", "--insert", "--replace", "--flush",
			"--delete-chain", "--policy", "--new-chain", "--rename-chain", "--zero") {
			return read("lists firewall rules")
		}
	case "nft":
		p := nftOpts.parse(c.args)
		if ops := p.ops; len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "describe") && !p.has("-f", "--file", "-i", "--interactive") {
			return read("lists firewall rules")
		}
	case "ufw":
		if ops := c.operands(); len(ops) == 0 || ops[0].val == "status" || ops[0].val == "show" || ops[0].val == "version" || ops[0].val == "app" && len(ops) > 1 && ops[1].val == "list" {
			return read("shows firewall status")
		}
	case "firewall-cmd":
		inspects := true
		for _, a := range c.args {
			v := a.val
			if !(strings.HasPrefix(v, "--list") || strings.HasPrefix(v, "--get") || strings.HasPrefix(v, "--query") ||
				v == "--state" || strings.HasPrefix(v, "--zone") || v == "--permanent" || strings.HasPrefix(v, "--info")) {
				inspects = false
			}
		}
		if inspects {
			return read("shows firewall settings")
		}
	case "pfctl":
		// -S and -L store and load the state table in a file.
		if c.has("-s", "--show") && !c.has("-f", "-e", "-d", "-F", "-k", "-K", "-t", "-T", "-L", "-S", "-z", "-x",
			"-D", "-R", "-A", "-N", "-O") {
			return read("shows firewall settings")
		}
	}
	return admin("changes firewall rules")
}

var iptablesSaveOpts = getopt{short: "fMt", long: names("--file --modprobe --table"), flags: names("--counters " +
	"--dump --help --version")}

// iptablesSave prints the firewall rules, or writes them to the file of
// -f; -M names the program that loads kernel modules.
func iptablesSave(c *call) effect {
	p := iptablesSaveOpts.parse(c.args)
	if m, ok := p.value("-M", "--modprobe"); ok {
		c.run(c.name+" -M", []arg{m}, admin("loads kernel modules for the firewall"))
	}
	if f, ok := p.value("-f", "--file"); ok {
		return c.optWrite("writes the firewall rules to", f)
	}
	return read("prints firewall rules")
}

var visudoOpts = getopt{short: "fx", long: names("--file --export"), flags: names("--check --help --owner --perms " +
	"--quiet --strict --version")}

// visudo edits the sudoers file; -c only checks it, unless -x exports it
// to a file.
func visudo(c *call) effect {
	if p := visudoOpts.parse(c.args); p.has("-c", "--check") && !p.has("-x", "--export") {
		return read("checks the sudoers file")
	}
	return admin("edits the sudoers file")
}

func crontab(c *call) effect {
	if c.has("-l") && !c.has("-r", "-e") {
		return read("lists scheduled jobs")
	}
	return admin("changes scheduled jobs (crontab)")
}

var sysctlOpts = getopt{short: "r", optShort: "p", long: names("--pattern"), flags: names("--all --deprecated " +
	"--dry-run --binary --ignore --names --values --load --system --quiet --write --help --version")}

// sysctl shows kernel parameters, which are files under /proc/sys: a key
// may climb out of it (kernel/../../etc/shadow). A value sets one; the
// kernel runs the program some of them name, as root.
func sysctl(c *call) effect {
	p := sysctlOpts.parse(c.args)
	if p.has("-w", "--write", "-p", "-f", "--load", "--system") {
		return admin("changes kernel parameters")
	}
	e := read("shows kernel parameters")
	for _, op := range p.ops {
		key, val, set := strings.Cut(op.val, "=")
		if !op.static {
			return admin("changes kernel parameters")
		}
		p := sysctlPath(key)
		if !set {
			c.raiseReads(&e, literal(p))
			continue
		}
		e = admin("changes kernel parameters")
		switch path.Base(p) {
		case "core_pattern", "modprobe", "hotplug", "poweroff_cmd", "uevent_helper":
			if prog, ok := strings.CutPrefix(val, "|"); ok || path.Base(p) != "core_pattern" {
				c.run("sysctl "+key, literalArgs(strings.Fields(prog)), admin("runs as root when the kernel asks"))
			}
		}
	}
	return e
}

// sysctlPath is the file under /proc/sys that a sysctl key names: its
// separator is "/" when the first one is, else "." (and a "/" stands for
// a dot).
func sysctlPath(key string) string {
	if i := strings.IndexAny(key, "./"); i >= 0 && key[i] == '.' {
		key = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, key)
	}
	return path.Join("/proc/sys", key)
}

// literalArgs makes words into literal arguments.
func literalArgs(words []string) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = literal(w)
	}
	return out
}

// ipOptions are ip's options in the order it tries them: a word names the
// first one it is a prefix of ("-b" is -batch, "-br" -brief), after one
// dash or two; value marks those that take the next word.
var ipOptions = []struct {
	name  string
	value bool
	exact bool
}{
	{"-loops", true, false}, {"-family", true, false}, {"-4", false, true}, {"-6", false, true},
	{"-0", false, true}, {"-M", false, true}, {"-B", false, true}, {"-human", false, false},
	{"-human-readable", false, false}, {"-iec", false, false}, {"-stats", false, false},
	{"-statistics", false, false}, {"-details", false, false}, {"-resolve", false, false},
	{"-oneline", false, false}, {"-timestamp", false, false}, {"-tshort", false, false},
	{"-Version", false, false}, {"-force", false, false}, {"-batch", true, false}, {"-brief", false, false},
	{"-json", false, false}, {"-pretty", false, false}, {"-rcvbuf", true, false}, {"-color", false, false},
	{"-help", false, false}, {"-netns", true, false}, {"-Numeric", false, false}, {"-all", false, false},
	{"-c", false, true}, {"-echo", false, false},
}

// ipObjects are ip's objects in the order it tries them: a word names the
// first one it is a prefix of ("n" is neighbor, "net" netns).
var ipObjects = []string{"address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour", "ntable",
	"ntbl", "link", "l2tp", "fou", "ila", "macsec", "tunnel", "tuntap", "tap", "token", "tcpmetrics", "tcp_metrics",
	"monitor", "xfrm", "mroute", "mrule", "netns", "netconf", "vrf", "sr", "nexthop", "mptcp", "ioam", "stats",
	"help"}

// ipChanges are the commands of ip's objects that change something; a
// prefix of one of them may be it.
var ipChanges = []string{"add", "append", "attach", "change", "del", "delete", "exec", "flush", "prepend",
	"replace", "restore", "save", "set", "update", "test", "reset"}

// ipRoute is iproute2's ip: "ip addr show" reads, "ip route add" changes the
// network, -batch runs the commands of a file, and "ip netns exec NS CMD"
// and "ip vrf exec VRF CMD" run a command. Options, objects and commands
// may be abbreviated to any prefix.
func ipRoute(c *call) effect {
	args := c.args
	all := false
	i := 0
options:
	for ; i < len(args); i++ {
		v := args[i].val
		if !args[i].static || len(v) < 2 || v[0] != '-' {
			break
		}
		if v == "--" {
			i++
			break
		}
		v = strings.TrimPrefix(v, "-")
		if v[0] != '-' {
			v = "-" + v
		}
		for _, o := range ipOptions {
			if o.exact && v != o.name || !o.exact && !strings.HasPrefix(o.name, v) {
				continue
			}
			switch o.name {
			case "-batch", "-force":
				return admin("changes network settings from a batch file")
			case "-all":
				all = true
			}
			if o.value {
				i++
			}
			continue options
		}
	}
	ops := args[min(i, len(args)):]
	if len(ops) == 0 {
		return read("shows network settings")
	}
	object := ""
	for _, o := range ipObjects {
		if ops[0].static && ops[0].val != "" && strings.HasPrefix(o, ops[0].val) {
			object = o
			break
		}
	}
	if len(ops) > 1 && (object == "netns" || object == "vrf") && ops[1].static && strings.HasPrefix("exec", ops[1].val) {
		cmd := ops[2:]
		if !all || object == "vrf" {
			cmd = cmd[min(1, len(cmd)):]
		}
		c.run("ip "+object+" exec", cmd, admin("runs in a network namespace"))
		return effect{none: true}
	}
	if object == "xfrm" && len(ops) > 1 && firstAbbreviated(ops[1], []string{"state", "policy", "monitor"}) == "state" &&
		(len(ops) == 2 || abbreviation(ops[2].val, "show", "list", "get") && ops[2].val != "") {
		return showsSecret("shows IPsec keys")
	}
	if len(ops) == 1 || object == "monitor" || object == "help" {
		return read("shows network settings")
	}
	cmd := ops[1].val
	if ops[1].static && cmd != "" && !abbreviation(cmd, ipChanges...) && abbreviation(cmd, "show", "list", "lst", "get", "help") {
		return read("shows network settings")
	}
	return admin("changes network settings")
}

func ifconfig(c *call) effect {
	if len(c.operands()) <= 1 {
		return read("shows network interfaces")
	}
	return admin("changes network interfaces")
}

// scutil shows system configuration with --get, --dns, --proxy, -r and
// --nwi; with no option it reads commands from its input.
func scutil(c *call) effect {
	if len(c.args) > 0 && c.args[0].static {
		switch c.args[0].val {
		case "--get", "--dns", "--proxy", "-r", "--nwi", "-w":
			return read("shows system configuration")
		}
	}
	return admin("changes system configuration")
}

// softwareupdate installs system updates; --list asks Apple's servers
// which there are.
func softwareupdate(c *call) effect {
	if len(c.args) == 0 || c.args[0].val == "--history" {
		return read("shows installed updates")
	}
	if c.args[0].val == "-l" || c.args[0].val == "--list" {
		return net(airlock.ClassNetHTTP, "asks Apple's servers for updates")
	}
	return admin("installs system updates")
}

// argsAdmin reads when called with no operands (or only the given
// options), and administers the system otherwise.
func argsAdmin(reason string, readOpts ...string) rule {
	return func(c *call) effect {
		for _, a := range c.args {
			if !slices.Contains(readOpts, a.val) {
				return admin(reason)
			}
		}
		return read("shows system settings")
	}
}

// prefixAdmin reads when its first word starts with one of readPrefixes.
func prefixAdmin(reason string, readPrefixes ...string) rule {
	return func(c *call) effect {
		if len(c.args) == 0 {
			return read("shows system settings")
		}
		for _, p := range readPrefixes {
			if strings.HasPrefix(c.args[0].val, p) {
				return read("shows system settings")
			}
		}
		return admin(reason)
	}
}

var ldconfigOpts = getopt{short: "cCfr", long: names("--format"), flags: names("--print-cache --verbose --version " +
	"--help --usage")}

// ldconfig rebuilds the library cache, which every program loads from,
// unless it only prints it.
func ldconfig(c *call) effect {
	if ldconfigOpts.has(c.args, "-p", "--print-cache", "-V", "--version", "--help", "--usage") {
		return read("shows the library cache")
	}
	return admin("changes the library cache")
}

var hwclockOpts = getopt{short: "f", long: names("--rtc --date --delay --adjfile --param-get --param-set --epoch"),
	flags: names("--show --get --set --hctosys --systohc --systz --adjust --predict --utc --localtime --directisa " +
		"--update-drift --noadjfile --test --verbose --help --version --getepoch --setepoch --debug")}

// hwclock shows the hardware clock, or sets a clock.
func hwclock(c *call) effect {
	if hwclockOpts.has(c.args, "--set", "-w", "--systohc", "-s", "--hctosys", "--adjust", "-a", "--systz",
		"--param-set", "--setepoch", "--update-drift") {
		return admin("sets the clock")
	}
	return read("shows the hardware clock")
}

var dmesgOpts = getopt{short: "Fflns", optShort: "L", long: names("--file --facility --level --console-level " +
	"--buffer-size --time-format --since --until"), flags: names("--clear --read-clear --console-off --console-on " +
	"--human --json --kernel --color --nopager --force-prefix --raw --noescape --syslog --userspace --follow " +
	"--follow-new --decode --show-delta --reltime --ctime --notime --help --version")}

// dmesg shows the kernel log (or, with -F, a file), unless it clears it or
// changes what reaches the console.
func dmesg(c *call) effect {
	if dmesgOpts.has(c.args, "-C", "--clear", "-c", "--read-clear", "-D", "--console-off", "-E", "--console-on",
		"-n", "--console-level") {
		return admin("changes the kernel log")
	}
	return read("shows the kernel log")
}

var journalctlOpts = getopt{short: "MDSUcutpgonF", long: names("--machine --directory --file --root --image " +
	"--image-policy --namespace --since --until --cursor --after-cursor --cursor-file --unit --user-unit " +
	"--identifier --exclude-identifier --priority --facility --grep --output --output-fields --field --interval " +
	"--verify-key --vacuum-size --vacuum-files --vacuum-time --invocation"),
	flags: names("--system --user --merge --boot --case-sensitive --dmesg --lines --reverse --show-cursor --utc " +
		"--catalog --no-hostname --no-full --full --all --follow --no-tail --quiet --no-pager --pager-end --force " +
		"--help --version --fields --list-boots --disk-usage --verify --sync --relinquish-var " +
		"--smart-relinquish-var --flush --rotate --header --list-catalog --dump-catalog --update-catalog " +
		"--setup-keys --new-id128 --list-namespaces --list-invocations --synchronize-on-exit")}

// journalctl shows the system journal, unless it vacuums, rotates or
// moves it; --cursor-file writes the cursor it reached to a file.
func journalctl(c *call) effect {
	p := journalctlOpts.parse(c.args)
	if p.has("--vacuum-size", "--vacuum-files", "--vacuum-time", "--rotate", "--flush", "--sync",
		"--relinquish-var", "--smart-relinquish-var", "--setup-keys", "--update-catalog") {
		return admin("changes the system journal")
	}
	if f, ok := p.value("--cursor-file"); ok {
		return c.optWrite("writes the journal cursor to", f)
	}
	return read("shows the system journal")
}

// updateAlternatives changes which program a command name runs, unless it
// only shows them; --log names the file it logs to.
func updateAlternatives(c *call) effect {
	e := admin("changes system alternatives")
	if c.has("--display", "--query", "--list", "--get-selections") {
		e = read("shows alternatives")
	}
	if f, ok := c.value("--log"); ok {
		e = worse(e, c.optWrite("logs to", f))
	}
	return e
}

// ethtoolChanges are the long options of ethtool that change an interface,
// besides --set-... and --change...: they reset it, flash its firmware or
// test it.
var ethtoolChanges = stringSet("--flash", "--reset", "--negotiate", "--test", "--pause", "--coalesce", "--features",
	"--offload", "--config-ntuple", "--config-nfc", "--per-queue", "--cable-test", "--cable-test-tdr",
	"--module-fw-flash")

// ethtool shows a network interface's settings; its upper-case short
// options (and -s, -r, -f, -t) change it.
func ethtool(c *call) effect {
	for _, a := range c.args {
		v := a.val
		if a.static && len(v) == 2 && v[0] == '-' && (v[1] >= 'A' && v[1] <= 'Z' || strings.IndexByte("srft", v[1]) >= 0) ||
			ethtoolChanges[v] || strings.HasPrefix(v, "--set-") || strings.HasPrefix(v, "--change") {
			return admin("changes network interface settings")
		}
	}
	return read("shows network interface settings")
}

// nmcliObjects are nmcli's objects, with their commands, in the order
// nmcli tries them: a word names the first one it is a prefix of
// ("c d" is "connection down").
var nmcliObjects = []struct {
	name     string
	commands []string
}{
	{"general", []string{"status", "hostname", "permissions", "logging", "reload"}},
	{"networking", []string{"on", "off", "connectivity"}},
	{"radio", []string{"all", "wifi", "wwan"}},
	{"connection", []string{"show", "up", "down", "add", "modify", "clone", "edit", "delete", "monitor", "reload",
		"load", "import", "export", "migrate"}},
	{"device", []string{"status", "show", "set", "connect", "reapply", "modify", "disconnect", "delete", "monitor",
		"wifi", "lldp", "up", "down"}},
	{"agent", []string{"secret", "polkit", "all"}},
	{"monitor", nil},
	{"help", nil},
}

// firstAbbreviated is the first of words that w is a prefix of, or "".
func firstAbbreviated(w arg, words []string) string {
	for _, n := range words {
		if w.static && w.val != "" && strings.HasPrefix(n, w.val) {
			return n
		}
	}
	return ""
}

// showsSecret is a program's printing a password it keeps.
func showsSecret(reason string) effect {
	return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
		reason: reason}
}

// nmcli shows network connections, or changes them. Its options, objects
// and commands may be abbreviated; -s (--show-secrets) and "device wifi
// show-password" print passwords.
func nmcli(c *call) effect {
	args := c.args
	secrets := false
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") {
		name := strings.TrimLeft(args[0].val, "-")
		secrets = secrets || name != "" && strings.HasPrefix("show-secrets", name)
		if name != "" && abbreviation(name, "fields", "get-values", "escape", "colors", "mode", "wait") {
			args = args[1:]
		}
		args = args[min(1, len(args)):]
	}
	if len(args) == 0 {
		return read("shows network connections")
	}
	if !args[0].static || len(args) > 1 && !args[1].static {
		return unknown("runs nmcli with a command only known at run time")
	}
	object, cmd := "", ""
	for _, o := range nmcliObjects {
		if n := firstAbbreviated(args[0], []string{o.name}); n != "" {
			object = n
			if len(args) > 1 {
				cmd = firstAbbreviated(args[1], o.commands)
			}
			break
		}
	}
	rest := args[min(2, len(args)):]
	for _, r := range rest {
		secrets = secrets || r.static && (r.val == "-s" || len(r.val) > 3 && strings.HasPrefix("--show-secrets", r.val))
	}
	switch object + " " + cmd {
	case "connection show":
		if secrets {
			return showsSecret("shows the passwords of network connections")
		}
		return read("shows network connections")
	case "device wifi":
		w := "list"
		if len(rest) > 0 {
			w = firstAbbreviated(rest[0], []string{"list", "connect", "hotspot", "rescan", "show-password"})
		}
		switch w {
		case "list":
			return read("shows Wi-Fi networks")
		case "show-password":
			return showsSecret("shows the Wi-Fi password")
		}
	case "connection export":
		if len(rest) > 1 {
			return c.optWrite("writes a connection's settings to", rest[1])
		}
		return read("shows a connection's settings")
	case "general hostname", "general logging":
		if len(rest) == 0 {
			return read("shows network settings")
		}
	case "radio all", "radio wifi", "radio wwan":
		if len(rest) == 0 {
			return read("shows radio settings")
		}
	case "general ", "general status", "general permissions", "networking ", "radio ", "connection ",
		"connection monitor", "device ", "device status", "device show", "device monitor", "device lldp",
		"monitor ", "help ":
		return read("shows network connections")
	}
	return admin("changes network connections")
}

// ctl is timedatectl and kin: status and list-* read, set-* changes; -H
// runs them on another host over ssh.
func ctl(reason string) rule {
	return func(c *call) effect {
		ops := c.operands("-H", "--host", "-M", "--machine")
		e := admin(reason)
		if len(ops) == 0 || ops[0].val == "status" || ops[0].val == "show" || strings.HasPrefix(ops[0].val, "list") {
			e = read("shows system settings")
		}
		return worse(e, remoteHost(c))
	}
}

// disk is a partitioning or formatting tool: destructive unless it only
// lists (readOpts).
func disk(readOpts ...string) rule {
	return func(c *call) effect {
		if len(readOpts) > 0 && c.has(readOpts...) {
			return read("lists partitions")
		}
		return adminDestroy("partitions or formats disks")
	}
}

func parted(c *call) effect {
	ops := c.operands("-a", "--align")
	if c.has("-l", "--list") || len(ops) == 2 && (ops[1].val == "print" || ops[1].val == "p") {
		return read("lists partitions")
	}
	return adminDestroy("partitions disks")
}

var wipefsOpts = getopt{short: "oOt", long: names("--offset --output --types"),
	flags: names("--all --backup --force --noheadings --json --no-act --parsable --quiet --help --version --lock")}

// wipefs lists file system signatures, or erases them (-a, -o).
func wipefs(c *call) effect {
	if p := wipefsOpts.parse(c.args); p.has("-a", "--all", "-o", "--offset") && !p.has("-n", "--no-act") {
		return adminDestroy("wipes file system signatures")
	}
	return read("lists file system signatures")
}

var sfdiskOpts = getopt{short: "NoOuXYwW", long: names("--partno --backup-file --backup-pt-sectors --move-data " +
	"--color --output --label --label-nested --lock --unit --wipe --wipe-partitions --sector-size"),
	flags: names("--activate --dump --json --show-geometry --list --list-free --reorder --show-size --list-types " +
		"--verify --delete --part-label --part-type --part-uuid --part-attrs --disk-id --relocate --append --backup " +
		"--bytes --force --move-use-fsync --no-act --no-reread --no-tell-kernel --quiet --help --version")}

// sfdisk does what its last command option says; without one it writes
// the partition table its input describes. -n changes nothing.
func sfdisk(c *call) effect {
	p := sfdiskOpts.parse(c.args)
	reads := false
	for _, o := range p.opts {
		switch o.name {
		case "-d", "--dump", "-J", "--json", "-g", "--show-geometry", "-l", "--list", "-F", "--list-free", "-s",
			"--show-size", "-T", "--list-types", "-V", "--verify", "-v", "--version", "-h", "--help":
			reads = true
		case "-A", "--activate", "-r", "--reorder", "--delete", "--part-label", "--part-type", "--part-uuid",
			"--part-attrs", "--disk-id", "--relocate", "-N", "--partno":
			reads = false
		case "-n", "--no-act":
			return read("shows what it would do to partitions")
		}
	}
	e := adminDestroy("partitions disks")
	if reads {
		e = read("lists partitions")
	}
	for _, o := range p.opts {
		if o.has && (o.name == "-O" || o.name == "--backup-file") {
			e = worse(e, c.optWrite("backs up the sectors it overwrites to", o.val))
		}
	}
	return e
}

// sgdiskReads are the options of sgdisk that only show; sgdisk does what
// each of its options says, in turn, so it reads only when all of them
// read, or with -P (--pretend).
var sgdiskReads = stringSet("-p", "--print", "-i", "--info", "-v", "--verify", "-O", "--print-mbr", "-L",
	"--list-types", "-V", "--version", "-?", "--help", "-D", "--display-alignment", "-E", "--end-of-largest",
	"-F", "--first-in-largest", "-f", "--first-aligned-in-largest", "-P", "--pretend")

// sgdisk edits GPT partition tables; -b writes a backup to a file.
func sgdisk(c *call) effect {
	reads, pretends := true, false
	for _, a := range c.args {
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(v, "=")
		switch {
		case strings.HasPrefix(v, "--"):
			reads = reads && sgdiskReads[name]
			pretends = pretends || name == "--pretend"
		case v[1] == 'i':
			// -i1: a value, not a cluster
		default:
			for _, ch := range v[1:] {
				reads = reads && sgdiskReads["-"+string(ch)]
				pretends = pretends || ch == 'P'
			}
		}
	}
	e := adminDestroy("partitions disks")
	if reads || pretends {
		e = read("lists partitions")
	}
	for _, f := range c.values("-b", "--backup") {
		e = worse(e, c.optWrite("writes a backup of the partition table to", f))
	}
	return e
}

func diskutil(c *call) effect {
	if len(c.args) == 0 {
		return read("shows disks")
	}
	switch c.args[0].val {
	case "list", "info", "information", "activity", "listFilesystems", "apfs":
		if c.args[0].val != "apfs" || len(c.args) > 1 && strings.HasPrefix(c.args[1].val, "list") {
			return read("shows disks")
		}
	}
	return adminDestroy("changes disks")
}

// defaults reads and writes preferences; export writes them to a file.
func defaults(c *call) effect {
	ops := c.operands("-host")
	if len(ops) > 0 {
		switch ops[0].val {
		case "export":
			if len(ops) > 2 && ops[2].val != "-" {
				return c.optWrite("exports preferences to", ops[2])
			}
			return read("reads preferences")
		case "read", "read-type", "domains", "find", "help":
			return read("reads preferences")
		}
	}
	return write(airlock.ClassFSWrite, "changes preferences")
}

// dscl reads directory services, or changes them; with no command it reads
// commands from its input. Password hashes are secrets.
func dscl(c *call) effect {
	commands := 0
	for _, a := range c.args {
		v := strings.TrimPrefix(a.val, "-")
		switch v {
		case "create", "append", "merge", "delete", "change", "changei", "passwd", "auth", "authonly", "mcxedit",
			"mcxset", "mcxdelete":
			return admin("changes directory services")
		case "read", "readall", "readpl", "readpli", "list", "search", "diff", "cd", "ls":
			commands++
		}
		if strings.Contains(strings.ToLower(a.val), "shadowhashdata") {
			return showsSecret("shows password hashes")
		}
	}
	if commands == 0 {
		return admin("runs directory service commands read from its input")
	}
	return read("reads directory services")
}
