package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
)

// System administration: services, the kernel, users and groups, the
// firewall and the network, disks, boot, and macOS settings.

var adminCommands = map[string]rule{
	"systemctl": systemctl, "service": service, "launchctl": launchctl,
	"mount": mount, "umount": fixed(admin("unmounts file systems")),
	"modprobe": fixed(admin("loads kernel modules")), "insmod": fixed(admin("loads kernel modules")),
	"rmmod": fixed(admin("unloads kernel modules")), "depmod": fixed(admin("updates kernel module data")),
	"iptables": firewall, "ip6tables": firewall, "iptables-restore": fixed(admin("replaces firewall rules")),
	"iptables-save": fixed(read("prints firewall rules")), "nft": firewall, "ufw": firewall,
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
	"fdisk":     disk("-l", "--list"), "sfdisk": disk("-l", "--list", "-d", "--dump", "-s", "--show-size", "-V", "--verify"),
	"parted": parted, "gdisk": disk("-l"), "sgdisk": disk("-p", "--print", "-i", "--info", "-v", "--verify"),
	"cfdisk": disk(), "mkfs": disk(), "mke2fs": disk(), "fsck": disk("-n", "-N"), "wipefs": wipefs,
	"mkswap": disk(), "blkdiscard": disk(), "diskutil": diskutil,
	"defaults": defaults, "scutil": argsAdmin("changes system configuration", "--get", "--dns", "--proxy", "-r", "--nwi"),
	"networksetup":   prefixAdmin("changes network settings", "-get", "-list", "-print", "-show", "-version", "-help"),
	"pmset":          prefixAdmin("changes power settings", "-g"),
	"spctl":          prefixAdmin("changes Gatekeeper settings", "--status", "--assess", "-a"),
	"csrutil":        prefixAdmin("changes System Integrity Protection", "status"),
	"softwareupdate": prefixAdmin("installs system updates", "-l", "--list", "--history"),
	"dscl":           dscl,
}

func systemctl(c *call) effect {
	sub, _, ok := subcommand(c.args, optSpec{short: "tpHMno", long: []string{"--type", "--property",
		"--host", "--machine", "--lines", "--output", "--state", "--signal", "--kill-whom", "--root", "--job-mode"}})
	if !ok {
		return unknown("runs systemctl with a subcommand only known at run time")
	}
	switch sub {
	case "", "status", "show", "cat", "help", "is-active", "is-enabled", "is-failed", "is-system-running",
		"list-units", "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs",
		"list-machines", "list-automounts", "list-paths", "get-default", "show-environment", "--version":
		return read("shows services")
	}
	return admin("manages services (systemctl " + sub + ")")
}

func service(c *call) effect {
	ops := c.operands()
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
		"help", "managername", "manageruid", "managerpid", "getenv", "hostinfo", "resolveport", "examine":
		return read("shows launchd services")
	}
	return admin("manages launchd services")
}

func mount(c *call) effect {
	if len(c.operands("-t", "--types", "-o", "--options", "-O", "--test-opts", "-L", "--label", "-U", "--uuid")) == 0 &&
		!c.has("-a", "--all") {
		return read("lists mounted file systems")
	}
	return admin("mounts file systems")
}

func firewall(c *call) effect {
	switch c.name {
	case "iptables", "ip6tables":
		if c.has("-L", "--list", "-S", "--list-rules", "-C", "--check") && !c.has("-A", "-D", "-I", "-R",
			"-F", "-X", "-P", "-N", "-E", "-Z") {
			return read("lists firewall rules")
		}
	case "nft":
		if ops := c.operands("-f", "--file", "-I", "--includepath"); len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "describe") {
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
		if c.has("-s", "--show") && !c.has("-f", "-e", "-d", "-F", "-k", "-t") {
			return read("shows firewall settings")
		}
	}
	return admin("changes firewall rules")
}

func visudo(c *call) effect {
	if c.has("-c", "--check") {
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

func sysctl(c *call) effect {
	if c.has("-w", "--write", "-p", "--load", "--system") {
		return admin("changes kernel parameters")
	}
	for _, op := range c.operands() {
		if strings.Contains(op.val, "=") || !op.static {
			return admin("changes kernel parameters")
		}
	}
	return read("shows kernel parameters")
}

// ipRoute is iproute2's ip: "ip addr show" reads, "ip route add" changes the
// network. Objects and commands may be abbreviated.
func ipRoute(c *call) effect {
	ops := c.operands("-n", "-netns", "-f", "-family", "-l", "-loops", "-rc", "-rcvbuf", "-b", "-batch")
	if c.has("-b", "-batch", "-force") {
		return admin("changes network settings from a batch file")
	}
	if len(ops) == 0 {
		return read("shows network settings")
	}
	if (ops[0].val == "netns" || ops[0].val == "netn") && len(ops) > 2 && ops[1].val == "exec" {
		c.run("ip netns exec", ops[3:], admin("runs in a network namespace"))
		return effect{none: true}
	}
	if ops[0].val == "monitor" || ops[0].val == "help" {
		return read("shows network settings")
	}
	if len(ops) == 1 {
		return read("shows network settings")
	}
	cmd := ops[1].val
	for _, r := range []string{"show", "list", "lst", "get", "help"} {
		if strings.HasPrefix(r, cmd) && cmd != "" {
			return read("shows network settings")
		}
	}
	return admin("changes network settings")
}

func ifconfig(c *call) effect {
	if len(c.operands()) <= 1 {
		return read("shows network interfaces")
	}
	return admin("changes network interfaces")
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

func ldconfig(c *call) effect {
	if c.has("-p", "--print-cache", "-V", "--version") {
		return read("shows the library cache")
	}
	return admin("changes the library cache")
}

func hwclock(c *call) effect {
	if c.has("--set", "-w", "--systohc", "-s", "--hctosys", "--adjust", "-a", "--systz") {
		return admin("sets the clock")
	}
	return read("shows the hardware clock")
}

func dmesg(c *call) effect {
	if c.has("-C", "--clear", "-c", "--read-clear", "-D", "--console-off", "-E", "--console-on", "-n", "--console-level") {
		return admin("changes the kernel log")
	}
	return read("shows the kernel log")
}

func journalctl(c *call) effect {
	for _, a := range c.args {
		if strings.HasPrefix(a.val, "--vacuum") || a.val == "--rotate" || a.val == "--flush" || a.val == "--sync" ||
			a.val == "--relinquish-var" || a.val == "--setup-keys" {
			return admin("changes the system journal")
		}
	}
	return read("shows the system journal")
}

func updateAlternatives(c *call) effect {
	if c.has("--display", "--query", "--list", "--get-selections") {
		return read("shows alternatives")
	}
	return admin("changes system alternatives")
}

func ethtool(c *call) effect {
	for _, a := range c.args {
		if a.static && len(a.val) == 2 && a.val[0] == '-' && a.val[1] >= 'A' && a.val[1] <= 'Z' || a.val == "-s" || a.val == "-r" {
			return admin("changes network interface settings")
		}
	}
	return read("shows network interface settings")
}

func nmcli(c *call) effect {
	ops := c.operands("-f", "--fields", "-g", "--get-values", "-e", "--escape", "-c", "--colors", "-m", "--mode", "-w", "--wait")
	for _, op := range ops {
		switch op.val {
		case "up", "down", "add", "modify", "delete", "reload", "load", "import", "connect", "disconnect",
			"on", "off", "hotspot", "rescan", "set", "edit", "clone":
			return admin("changes network connections")
		}
	}
	return read("shows network connections")
}

// ctl is timedatectl and kin: status and list-* read, set-* changes.
func ctl(reason string) rule {
	return func(c *call) effect {
		ops := c.operands("-H", "--host", "-M", "--machine")
		if len(ops) == 0 || ops[0].val == "status" || ops[0].val == "show" || strings.HasPrefix(ops[0].val, "list") {
			return read("shows system settings")
		}
		return admin(reason)
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

func wipefs(c *call) effect {
	if c.has("-a", "--all", "-o", "--offset") && !c.has("-n", "--no-act") {
		return adminDestroy("wipes file system signatures")
	}
	return read("lists file system signatures")
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

func defaults(c *call) effect {
	ops := c.operands("-host")
	if len(ops) > 0 {
		switch ops[0].val {
		case "read", "read-type", "domains", "find", "help", "export":
			return read("reads preferences")
		}
	}
	return write(airlock.ClassFSWrite, "changes preferences")
}

func dscl(c *call) effect {
	for _, a := range c.args {
		switch strings.TrimPrefix(a.val, "-") {
		case "create", "append", "merge", "delete", "change", "changei", "passwd", "auth", "authonly", "mcxedit", "mcxset", "mcxdelete":
			return admin("changes directory services")
		}
	}
	return read("reads directory services")
}
