package shell

import (
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Files: programs that read, search, write, copy, link, archive, compress
// and edit files, and the stores that hold secrets.

// readOnly are programs that read the files they are given.
var readOnly = []string{
	"cat", "tac", "nl", "head", "tail", "less", "more", "most", "wc", "cut", "tr", "paste", "join",
	"fold", "fmt", "pr", "column", "expand", "unexpand", "comm", "diff", "diff3", "sdiff", "cmp",
	"colordiff", "strings", "od", "hexdump", "hd", "base64", "base32", "basenc", "md5sum", "sha1sum",
	"sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "md5",
	"rev", "tsort", "look", "zcat", "bzcat", "xzcat", "zstdcat", "lz4cat", "zless", "zmore", "zgrep",
	"zegrep", "zfgrep", "bzgrep", "xzgrep", "zdiff", "bat", "batcat", "view", "xmllint", "csvlook",
	"mlr", "jless", "diffstat", "gpg", "gpg2", "ssh-add",
}

// metadataOnly are the listing programs: their operands name files whose
// contents they do not read.
var metadataOnly = stringSet(listing...)

// listing are programs that show information about files, processes or
// the system without reading file contents.
var listing = []string{
	"ls", "dir", "vdir", "tree", "exa", "eza", "lsd", "stat", "du", "df", "locate", "mlocate",
	"plocate", "realpath", "readlink", "dirname", "basename", "which", "whereis", "file", "namei",
	"lsof", "ps", "pgrep", "pidof", "top", "htop", "btop", "atop", "free", "vmstat", "iostat",
	"mpstat", "uptime", "w", "who", "whoami", "id", "groups", "users", "last", "lastlog", "uname",
	"nproc", "lscpu", "lsblk", "lspci", "lsusb", "lshw", "lsmod", "modinfo", "blkid",
	"findmnt", "hostid", "getconf", "locale", "tty", "stty", "printenv", "cal", "ncal", "sleep",
	"seq", "expr", "bc", "dc", "factor", "numfmt", "yes", "uuidgen", "man", "info", "apropos",
	"whatis", "tldr", "nm", "objdump", "readelf", "ldd", "size", "systemd-analyze", "lsattr",
	"getfacl", "getcap", "sestatus", "getenforce", "quota", "clear", "reset", "tput", "tabs",
	"sw_vers", "lsb_release", "loginctl", "busctl",
	"nvidia-smi", "sensors", "pstree", "pwdx", "iotop", "nethogs", "iftop", "ss", "netstat",
	"logname",
}

var fileCommands = map[string]rule{
	"grep": grep, "egrep": grep, "fgrep": grep, "rg": rg, "ag": ag, "ack": ag,
	"sort": sortLines, "uniq": uniq, "shuf": outOpt("shuffles lines", "-o", "--output"),
	"iconv": outOpt("converts text", "-o", "--output"),
	"jq":    reads("processes JSON", "--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-L"),
	"yq":    yq,
	"awk":   awk, "gawk": awk, "mawk": awk, "nawk": awk,
	"sed": sed, "gsed": sed,
	"xxd":      xxd,
	"date":     date,
	"hostname": hostname,
	"kill":     killRule, "pkill": killRule, "killall": killRule, "skill": killRule, "xkill": killRule,
	"fuser":    fuser,
	"touch":    writes(airlock.ClassFSWrite, "creates or updates files", "-r", "--reference", "-d", "--date", "-t"),
	"mkdir":    writes(airlock.ClassFSMkdir, "creates directories", "-m", "--mode", "--context"),
	"mktemp":   mktemp,
	"cp":       copies(airlock.ClassFSCopy, "copies files"),
	"install":  installCmd,
	"mv":       writes(airlock.ClassFSMove, "moves files", "-t", "--target-directory", "-S", "--suffix"),
	"ln":       link,
	"tee":      writes(airlock.ClassFSWrite, "writes files", "--output-error"),
	"truncate": truncate,
	"dd":       dd,
	"rm":       fixed(remove("deletes files")), "rmdir": fixed(remove("deletes directories")),
	"unlink": fixed(remove("deletes a file")), "shred": fixed(remove("destroys file contents")),
	"srm": fixed(remove("destroys files")), "wipe": fixed(remove("destroys files")),
	"chmod": chmod, "chown": chown, "chgrp": chown, "setfacl": chown, "chflags": chown,
	"chattr": fixed(effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "changes file attributes"}),
	"patch":  patch,
	"split":  writes(airlock.ClassFSWrite, "splits files", "-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix", "--filter"),
	"csplit": writes(airlock.ClassFSWrite, "splits files", "-f", "--prefix", "-b", "--suffix-format", "-n", "--digits"),
	"tar":    tar, "bsdtar": tar, "gtar": tar,
	"unzip": unzip, "zip": zip, "7z": sevenZip, "7za": sevenZip, "7zr": sevenZip, "cpio": cpio,
	"gzip": compress, "gunzip": compress, "bzip2": compress, "bunzip2": compress, "xz": compress,
	"unxz": compress, "lzma": compress, "unlzma": compress, "zstd": compress, "unzstd": compress,
	"lz4": compress, "pigz": compress, "pbzip2": compress, "brotli": compress,
	"compress": compress, "uncompress": compress,
	"dos2unix": writes(airlock.ClassFSWrite, "converts files in place"), "unix2dos": writes(airlock.ClassFSWrite, "converts files in place"),
	"vim": editor, "vi": editor, "nvim": editor, "nano": editor, "emacs": editor, "ed": editor,
	"ex": editor, "pico": editor, "micro": editor, "hx": editor, "helix": editor, "kak": editor,
	"joe": editor, "mcedit": editor, "vimdiff": editor, "code": editor, "subl": editor,
	"gedit": editor, "kate": editor,
	"open": fixed(exec("opens files or URLs with other programs")), "xdg-open": fixed(exec("opens files or URLs with other programs")),
	"ssh-keygen": sshKeygen,
	"getent":     getent,
	"security":   security,
	"pass":       pass,
}

// outOpt is a reader that may write its output to a file.
func outOpt(reason string, opts ...string) rule {
	return func(c *call) effect {
		e := read(reason)
		c.raiseReads(&e, c.operands(opts...)...)
		if outs := c.values(opts...); len(outs) > 0 {
			w := write(airlock.ClassFSWrite, reason+" into a file")
			c.raiseWrites(&w, outs...)
			e = worse(e, w)
		}
		return e
	}
}

// grep: the first operand is the pattern unless -e or -f gives it.
func grep(c *call) effect {
	ops := c.operands("-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C", "--context",
		"-d", "--directories", "-D", "--devices", "--label", "--group-separator")
	if !c.has("-e", "--regexp", "-f", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 && c.has("-r", "-R", "--recursive", "--dereference-recursive") {
		ops = []arg{literal(".")}
	}
	e := read("searches files")
	c.raiseReads(&e, ops...)
	c.raiseReads(&e, c.values("-f", "--file")...)
	return e
}

func rg(c *call) effect {
	if pre, ok := c.value("--pre"); ok {
		return exec("runs " + pre.text + " on every file it searches")
	}
	ops := c.operands("-e", "--regexp", "-f", "--file", "-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not",
		"-m", "--max-count", "-A", "-B", "-C", "--context", "-j", "--threads", "-M", "--max-columns", "--max-depth",
		"-d", "-r", "--replace", "--type-add", "-E", "--encoding", "--ignore-file", "--sort", "--sortr",
		"--path-separator", "--color", "--colors", "--context-separator", "--max-filesize", "--dfa-size-limit",
		"--regex-size-limit", "--engine", "--field-context-separator", "--field-match-separator")
	if !c.has("-e", "--regexp", "-f", "--file", "--files", "--type-list") && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		ops = []arg{literal(".")}
	}
	e := read("searches files")
	c.raiseReads(&e, ops...)
	return e
}

func ag(c *call) effect {
	ops := c.operands("-A", "-B", "-C", "-G", "--file-search-regex", "-m", "--max-count", "--depth", "-p", "--path-to-ignore")
	if len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		ops = []arg{literal(".")}
	}
	e := read("searches files")
	c.raiseReads(&e, ops...)
	return e
}

func sortLines(c *call) effect {
	if prog, ok := c.value("--compress-program"); ok {
		return exec("runs " + prog.text + " to compress temporary files")
	}
	return outOpt("sorts lines", "-o", "--output")(c)
}

func uniq(c *call) effect {
	ops := c.operands("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars")
	e := read("filters lines")
	if len(ops) > 0 {
		c.raiseReads(&e, ops[0])
	}
	if len(ops) > 1 {
		w := write(airlock.ClassFSWrite, "writes filtered lines into a file")
		c.raiseWrites(&w, ops[1])
		e = worse(e, w)
	}
	return e
}

func yq(c *call) effect {
	if c.has("-i", "--inplace") {
		e := write(airlock.ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
	return reads("processes YAML")(c)
}

// awk: a program that calls system(), pipes or redirects runs commands or
// writes files.
func awk(c *call) effect {
	ops := c.operands("-F", "--field-separator", "-v", "--assign", "-f", "--file", "-i", "--include",
		"-l", "--load", "-E", "--exec", "-e", "--source")
	var progs []arg
	if c.has("-f", "--file", "-E", "--exec") {
		return exec("runs an awk program file, which Airlock cannot inspect")
	}
	progs = append(progs, c.values("-e", "--source")...)
	if len(progs) == 0 && len(ops) > 0 {
		progs, ops = ops[:1], ops[1:]
	}
	if inc, ok := c.value("-i", "--include"); ok && inc.val == "inplace" {
		e := write(airlock.ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, ops...)
		return e
	}
	if c.has("-l", "--load") {
		return exec("loads an awk extension library")
	}
	for _, p := range progs {
		if !p.static {
			return exec("runs an awk program only known at run time")
		}
		if awkRuns(p.val) {
			return exec("runs an awk program that runs commands or writes files")
		}
	}
	e := read("processes text")
	c.raiseReads(&e, ops...)
	return e
}

// awkRuns reports whether an awk program may run commands or write files:
// system(), a pipe, or print/printf redirected with ">".
func awkRuns(prog string) bool {
	if strings.Contains(prog, "system") || strings.Contains(prog, "|") {
		return true
	}
	for _, kw := range []string{"print", "printf"} {
		if i := strings.Index(prog, kw); i >= 0 && strings.Contains(prog[i:], ">") {
			return true
		}
	}
	return false
}

// sed edits text, in place with -i; its script may also run commands,
// write and read files (see sedScript).
func sed(c *call) effect {
	inPlace := false
	for _, a := range c.args {
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			continue
		}
		if v == "--" {
			break
		}
		if v == "--in-place" || strings.HasPrefix(v,
			"--in-place=") || v[1] != '-' && strings.ContainsRune(strings.SplitN(v, "e", 2)[0], 'i') {
			inPlace = true
		}
	}
	ops := c.operands("-e", "--expression", "-f", "--file", "-l", "--line-length")
	scripts := c.values("-e", "--expression")
	if !c.has("-e", "--expression", "-f", "--file") && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	e := read("edits text")
	c.raiseReads(&e, ops...)
	if inPlace {
		e = write(airlock.ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, ops...)
	}
	if c.has("--sandbox") {
		return e // e, r and w are refused
	}
	if files := c.values("-f", "--file"); len(files) > 0 {
		x := exec("runs a sed script file, which Airlock cannot inspect")
		c.raiseReads(&x, files...)
		return worse(e, x)
	}
	for _, s := range scripts {
		if !s.static {
			return worse(e, exec("runs a sed script only known at run time"))
		}
		e = worse(e, c.sedEffects(s.val))
	}
	return e
}

// sedEffects classifies what a sed script does beyond editing text, and
// asks for the commands it runs to be analysed.
func (c *call) sedEffects(script string) effect {
	ops, err := sedScript(script)
	if err != nil {
		return exec("runs a sed script Airlock cannot parse")
	}
	var e effect
	for _, cmd := range ops.commands {
		c.runScript("sed e", cmd, input{})
	}
	if ops.input {
		e = worse(e, unknown("runs the text it reads as commands (sed e)"))
	}
	for _, f := range ops.writes {
		if f == "/dev/stdout" || f == "/dev/stderr" {
			continue
		}
		w := write(airlock.ClassFSWrite, "writes a file from its script (sed w)")
		c.raiseWrites(&w, literal(f))
		e = worse(e, w)
	}
	for _, f := range ops.reads {
		r := read("reads a file into its output (sed r)")
		c.raiseReads(&r, literal(f))
		e = worse(e, r)
	}
	return e
}

func xxd(c *call) effect {
	ops := c.operands("-c", "-g", "-l", "-o", "-s", "-n", "--name")
	e := read("dumps bytes")
	if len(ops) > 0 {
		c.raiseReads(&e, ops[0])
	}
	if len(ops) > 1 {
		w := write(airlock.ClassFSWrite, "writes a file")
		c.raiseWrites(&w, ops[1])
		e = worse(e, w)
	}
	return e
}

func date(c *call) effect {
	if c.has("-s", "--set") {
		return admin("sets the system clock")
	}
	for _, op := range c.operands("-d", "--date", "-f", "--file", "-r", "--reference") {
		if !strings.HasPrefix(op.val, "+") {
			return admin("sets the system clock")
		}
	}
	return read("prints the date")
}

func hostname(c *call) effect {
	if c.has("-F", "--file") || len(c.operands()) > 0 {
		return admin("sets the host name")
	}
	return read("prints the host name")
}

func killRule(c *call) effect {
	if c.has("-l", "-L", "--list", "--table") && len(c.operands()) == 0 {
		return read("lists signals")
	}
	for _, a := range c.args {
		if a.static && (a.val == "-0" || a.val == "-s0" || a.val == "--signal=0") {
			return read("checks whether processes exist")
		}
		if a.static && !strings.HasPrefix(a.val, "-") {
			break
		}
	}
	if s, ok := c.value("-s", "-n", "--signal"); ok && s.val == "0" {
		return read("checks whether processes exist")
	}
	return kill("signals processes, usually to stop them")
}

func fuser(c *call) effect {
	if c.has("-k", "--kill") {
		return kill("kills the processes using files")
	}
	return read("shows which processes use files")
}

func mktemp(c *call) effect {
	e := write(airlock.ClassFSWrite, "creates a temporary file")
	c.raiseWrites(&e, c.values("-p", "--tmpdir")...)
	return e
}

// copies is a copy: sources are read, the destination written.
func copies(class airlock.Class, reason string) rule {
	return func(c *call) effect {
		e := write(class, reason)
		ops := c.operands("-t", "--target-directory", "-S", "--suffix")
		dests := c.values("-t", "--target-directory")
		if len(dests) == 0 && len(ops) > 1 {
			dests, ops = ops[len(ops)-1:], ops[:len(ops)-1]
		}
		c.raiseReads(&e, ops...)
		c.raiseWrites(&e, dests...)
		return e
	}
}

func installCmd(c *call) effect {
	if m, ok := c.value("-m", "--mode"); ok && setuidMode(m.val) {
		return admin("installs a setuid or setgid program")
	}
	if c.has("-d", "--directory") {
		e := write(airlock.ClassFSMkdir, "creates directories")
		c.raiseWrites(&e, c.operands("-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory")...)
		return e
	}
	e := write(airlock.ClassFSCopy, "installs files")
	ops := c.operands("-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory", "-S", "--suffix")
	dests := c.values("-t", "--target-directory")
	if len(dests) == 0 && len(ops) > 1 {
		dests, ops = ops[len(ops)-1:], ops[:len(ops)-1]
	}
	c.raiseReads(&e, ops...)
	c.raiseWrites(&e, dests...)
	return e
}

func link(c *call) effect {
	e := write(airlock.ClassFSWrite, "creates links")
	ops := c.operands("-t", "--target-directory", "-S", "--suffix")
	dests := c.values("-t", "--target-directory")
	if len(dests) == 0 && len(ops) > 0 {
		dests = ops[len(ops)-1:]
		if len(ops) == 1 {
			dests = []arg{literal(".")}
		}
	}
	c.raiseWrites(&e, dests...)
	return e
}

func truncate(c *call) effect {
	e := effect{class: airlock.ClassFSWrite, cap: airlock.CapWorkspaceWrite, tier: airlock.TierDestructive, reason: "destroys file contents"}
	c.raiseWrites(&e, c.operands("-s", "--size", "-r", "--reference")...)
	return e
}

func dd(c *call) effect {
	e := effect{class: airlock.ClassFSWrite, cap: airlock.CapWorkspaceWrite, tier: airlock.TierDestructive, reason: "copies raw data, overwriting its output"}
	for _, a := range c.args {
		if !a.static {
			continue
		}
		if v, ok := strings.CutPrefix(a.val, "of="); ok {
			c.raiseWrites(&e, arg{val: v, static: true, glob: a.glob})
		}
		if v, ok := strings.CutPrefix(a.val, "if="); ok {
			c.raiseReads(&e, arg{val: v, static: true, glob: a.glob})
		}
	}
	return e
}

// setuidMode reports whether a chmod mode sets the setuid or setgid bit:
// 4755, 2755, u+s, g=s.
func setuidMode(m string) bool {
	if m == "" {
		return false
	}
	if strings.Trim(m, "01234567") == "" {
		return len(m) >= 4 && (m[len(m)-4]-'0')&6 != 0
	}
	for _, clause := range strings.Split(m, ",") {
		op := byte(0)
		for i := 0; i < len(clause); i++ {
			switch ch := clause[i]; ch {
			case '+', '=', '-':
				op = ch
			case 's':
				if op == '+' || op == '=' {
					return true
				}
			}
		}
	}
	return false
}

// chmod: on a system path, recursively on / or a home directory, or
// setting setuid/setgid bits, permission changes are privileged.
func chmod(c *call) effect {
	e := perm("changes file permissions")
	ops := c.operands("--reference")
	targets := ops
	if _, ref := c.value("--reference"); !ref && len(ops) > 0 {
		targets = ops[1:]
		if setuidMode(ops[0].val) {
			return effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "sets the setuid or setgid bit"}
		}
	}
	for _, a := range c.args { // "chmod -x file": a mode may look like an option
		if a.static && strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val,
			"--") && setuidMode(a.val[1:]) && strings.ContainsRune(a.val, 's') {
			return effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "sets the setuid or setgid bit"}
		}
	}
	recursiveRoot(c, &e, targets)
	c.raiseWrites(&e, targets...)
	return e
}

func chown(c *call) effect {
	e := perm("changes file ownership")
	if c.name == "setfacl" {
		e.reason = "changes file access lists"
	}
	if c.name == "chflags" {
		e.reason = "changes file flags"
	}
	ops := c.operands("--reference", "--from", "-m", "-x", "-M", "-X", "--modify", "--remove", "--set", "--set-file")
	targets := ops
	if _, ref := c.value("--reference"); !ref && len(ops) > 0 && c.name != "setfacl" {
		targets = ops[1:]
	}
	recursiveRoot(c, &e, targets)
	c.raiseWrites(&e, targets...)
	return e
}

// recursiveRoot raises a recursive change of / or of a home directory.
func recursiveRoot(c *call, e *effect, targets []arg) {
	if !c.has("-R", "--recursive") {
		return
	}
	for _, t := range targets {
		if !t.static {
			continue
		}
		p := sensitive.Clean(c.resolve(t.val), "")
		if _, rest, ok := sensitive.SplitHome(p); p == "/" || ok && rest == "" {
			e.tier, e.cap = airlock.TierPrivileged, airlock.CapHostAdmin
			e.reason = verbFor(e.class) + " recursively on " + p
			return
		}
	}
}

func patch(c *call) effect {
	e := write(airlock.ClassFSWrite, "patches files")
	dir := literal(".")
	if d, ok := c.value("-d", "--directory"); ok {
		dir = d
	}
	ops := c.operands("-p", "-d", "--directory", "-i", "--input", "-o", "--output", "-r", "--reject-file",
		"-B", "--prefix", "-D", "--ifdef", "-F", "--fuzz", "-V", "--version-control", "-Y", "--basename-prefix",
		"-z", "--suffix", "-g", "--get")
	c.raiseWrites(&e, dir)
	c.raiseWrites(&e, ops...)
	c.raiseWrites(&e, c.values("-o", "--output")...)
	return e
}

// tar: extracting or creating writes; options that run commands are
// parsed.
func tar(c *call) effect {
	for _, o := range []string{"--to-command", "--use-compress-program", "-I", "--info-script",
		"--new-volume-script", "-F", "--rsh-command"} {
		if v, ok := c.value(o); ok {
			c.runWords("tar "+o, []arg{v}, input{})
		}
	}
	for _, v := range c.values("--checkpoint-action") {
		if cmd, ok := strings.CutPrefix(v.val, "exec="); ok {
			c.runScript("tar --checkpoint-action", cmd, input{})
		}
	}
	mode := ""
	if len(c.args) > 0 && c.args[0].static && !strings.HasPrefix(c.args[0].val, "-") {
		mode = c.args[0].val // old style: tar xzf a.tgz
	}
	has := func(short byte, long ...string) bool {
		return strings.IndexByte(mode, short) >= 0 || c.has(append([]string{"-" + string(short)}, long...)...)
	}
	valueOpts := []string{"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b",
		"-H", "--format", "-K", "-L", "-N", "-V", "-g", "-I"}
	ops := c.operands(valueOpts...)
	if mode != "" && len(ops) > 0 {
		ops = ops[1:]
	}
	files := c.values("-f", "--file")
	if mode != "" && strings.IndexByte(mode, 'f') >= 0 && len(ops) > 0 && len(files) == 0 {
		files, ops = ops[:1], ops[1:]
	}
	switch {
	case has('x', "--extract", "--get"):
		e := write(airlock.ClassFSWrite, "extracts an archive")
		if has('P', "--absolute-names") {
			return admin("extracts an archive with absolute paths")
		}
		dirs := c.values("-C", "--directory")
		if len(dirs) == 0 {
			dirs = []arg{literal(".")}
		}
		c.raiseWrites(&e, dirs...)
		return e
	case has('c', "--create") || has('r', "--append") || has('u', "--update") || has('A', "--catenate", "--concatenate") || c.has("--delete"):
		e := write(airlock.ClassFSWrite, "writes an archive")
		c.raiseReads(&e, ops...)
		c.raiseWrites(&e, files...)
		return e
	}
	e := read("lists an archive")
	c.raiseReads(&e, files...)
	return e
}

func unzip(c *call) effect {
	if c.has("-l", "-v", "-t", "-Z", "-z") {
		return read("lists an archive")
	}
	e := write(airlock.ClassFSWrite, "extracts an archive")
	dir := literal(".")
	if d, ok := c.value("-d"); ok {
		dir = d
	}
	c.raiseWrites(&e, dir)
	return e
}

func zip(c *call) effect {
	e := write(airlock.ClassFSWrite, "writes an archive")
	ops := c.operands("-b", "-n", "-t", "-tt", "-x", "-i", "-P", "--password", "-s", "-O", "--output-file", "-TT", "--unzip-command")
	if cmd, ok := c.value("-TT", "--unzip-command"); ok {
		c.runWords("zip -TT", []arg{cmd}, input{})
	}
	if len(ops) > 0 {
		c.raiseWrites(&e, ops[0])
		c.raiseReads(&e, ops[1:]...)
	}
	return e
}

func sevenZip(c *call) effect {
	if len(c.args) == 0 {
		return read("shows help")
	}
	switch c.args[0].val {
	case "l", "t", "i", "h", "b":
		return read("lists or tests an archive")
	case "x", "e":
		e := write(airlock.ClassFSWrite, "extracts an archive")
		dir := literal(".")
		for _, a := range c.args {
			if v, ok := strings.CutPrefix(a.val, "-o"); ok && a.static {
				dir = arg{val: v, static: true, glob: a.glob}
			}
		}
		c.raiseWrites(&e, dir)
		return e
	}
	e := write(airlock.ClassFSWrite, "writes an archive")
	ops := c.operands()
	if len(ops) > 1 {
		c.raiseWrites(&e, ops[1])
		c.raiseReads(&e, ops[2:]...)
	}
	return e
}

func cpio(c *call) effect {
	switch {
	case c.has("-t", "--list"):
		return read("lists an archive")
	case c.has("-i", "--extract"):
		e := write(airlock.ClassFSWrite, "extracts an archive")
		dir := literal(".")
		if d, ok := c.value("-D", "--directory"); ok {
			dir = d
		}
		c.raiseWrites(&e, dir)
		return e
	case c.has("-p", "--pass-through"):
		e := write(airlock.ClassFSCopy, "copies files")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
	return write(airlock.ClassFSWrite, "writes an archive")
}

func compress(c *call) effect {
	if c.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") {
		return reads("reads compressed files")(c)
	}
	e := write(airlock.ClassFSWrite, "replaces files with their (de)compressed form")
	c.raiseWrites(&e, c.operands("-S", "--suffix", "-o", "--output", "-b", "-T", "--threads", "-p", "--processes")...)
	c.raiseWrites(&e, c.values("-o", "--output")...)
	return e
}

func editor(c *call) effect {
	if c.has("-R") || c.name == "view" {
		return reads("shows files")(c)
	}
	e := write(airlock.ClassFSWrite, "edits files")
	c.raiseWrites(&e, c.operands("-c", "-S", "-u", "-U", "-i", "-T", "-t", "-q", "-r", "-w", "-W", "-s", "--cmd")...)
	return e
}

func sshKeygen(c *call) effect {
	file, hasFile := c.value("-f")
	switch {
	case c.has("-y", "-e"):
		e := read("exports a key")
		if hasFile {
			c.raiseReads(&e, file)
		}
		return e
	case c.has("-l", "-L", "-F", "-H", "-B"):
		return read("shows key fingerprints or known hosts")
	case c.has("-R"):
		return write(airlock.ClassFSWrite, "removes a host from known_hosts")
	}
	e := write(airlock.ClassFSWrite, "creates or changes a key")
	if !hasFile {
		file = literal("~/.ssh/id")
	}
	c.raiseWrites(&e, file)
	return e
}

func getent(c *call) effect {
	for _, op := range c.operands("-s", "--service") {
		if op.val == "shadow" || op.val == "gshadow" {
			return readsSecret("/etc/"+op.val, "credentials")
		}
	}
	return read("looks up system databases")
}

func security(c *call) effect {
	if len(c.args) == 0 {
		return read("shows help")
	}
	sub := c.args[0].val
	switch {
	case strings.HasPrefix(sub, "find-") && strings.HasSuffix(sub, "-password"), sub == "dump-keychain", sub == "export":
		if sub == "export" || c.has("-w", "-g") || sub == "dump-keychain" {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads secrets from the keychain"}
		}
		return read("looks up keychain items")
	case strings.HasPrefix(sub, "add-"), strings.HasPrefix(sub, "delete-"), strings.HasPrefix(sub, "set-"),
		strings.HasPrefix(sub, "import"), strings.HasPrefix(sub, "create-"), strings.HasPrefix(sub, "unlock"):
		return admin("changes the keychain or trust settings")
	}
	return read("shows keychain information")
}

func pass(c *call) effect {
	sub := ""
	if len(c.args) > 0 {
		sub = c.args[0].val
	}
	switch sub {
	case "ls", "list", "find", "search", "grep", "version", "help", "--help", "--version":
		return read("lists stored passwords")
	case "insert", "add", "edit", "generate", "init", "mv", "rename", "cp", "copy", "git":
		return write(airlock.ClassFSWrite, "changes the password store")
	case "rm", "remove", "delete":
		return remove("deletes stored passwords")
	}
	return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads a stored password"}
}
