package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Files: programs that read, search, write, copy, link, archive, compress
// and edit files, and the stores that hold secrets.

// readOnly are programs that read the files they are given.
var readOnly = []string{
	"cat", "tac", "nl", "head", "tail", "less", "more", "most", "cut", "tr", "paste", "join",
	"fold", "fmt", "pr", "column", "expand", "unexpand", "comm", "diff", "diff3", "sdiff", "cmp",
	"colordiff", "strings", "od", "hexdump", "hd", "base64", "base32", "basenc", "md5sum", "sha1sum",
	"sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "md5",
	"rev", "tsort", "look", "zcat", "bzcat", "xzcat", "zstdcat", "lz4cat", "zless", "zmore", "zgrep",
	"zegrep", "zfgrep", "bzgrep", "xzgrep", "zdiff", "bat", "batcat", "view", "xmllint", "csvlook",
	"mlr", "jless", "diffstat", "gpg", "gpg2", "ssh-add",
}

// metadataOnly are the listing programs: their operands name files whose
// contents they do not read.
var metadataOnly = stringSet(slices.Concat(listing, listingRules)...)

// listingRules are listing programs with a rule of their own.
var listingRules = []string{"du"}

// listing are programs that show information about files, processes or
// the system without reading file contents.
var listing = []string{
	"ls", "dir", "vdir", "tree", "exa", "eza", "lsd", "stat", "df", "locate", "mlocate",
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
	"sort": sortLines.rule, "uniq": uniq, "shuf": shuf.rule, "iconv": iconv.rule, "wc": wc.rule, "du": du.rule,
	"jq":  reads("processes JSON", "--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-L"),
	"yq":  yq,
	"awk": awk, "gawk": awk, "mawk": awk, "nawk": awk,
	"sed": sed, "gsed": sed,
	"xxd":      xxd,
	"date":     date,
	"hostname": hostname,
	"kill":     killRule, "pkill": killRule, "killall": killRule, "skill": killRule, "xkill": killRule,
	"fuser":    fuser,
	"touch":    touch,
	"mkdir":    mkdir,
	"mktemp":   mktemp,
	"cp":       copies,
	"install":  installCmd,
	"mv":       move,
	"ln":       link,
	"tee":      tee,
	"truncate": truncate,
	"dd":       dd,
	"rm":       fixed(remove("deletes files")), "rmdir": fixed(remove("deletes directories")),
	"unlink": fixed(remove("deletes a file")), "shred": shred("destroys file contents"),
	"srm": shred("destroys files"), "wipe": shred("destroys files"),
	"chmod": chmod, "chown": chown, "chgrp": chown, "setfacl": setfacl, "chflags": chflags,
	"chattr": fixed(effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "changes file attributes"}),
	"patch":  patch,
	"split":  split,
	"csplit": csplit,
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

var sortLines = tool{reason: "sorts lines",
	getopt: getopt{short: "kStTo", optLong: names("--check"), long: names("--random-source --sort --batch-size " +
		"--compress-program --files0-from --key --output --buffer-size --field-separator --temporary-directory --parallel")},
	writes: names("-o --output -T --temporary-directory"), reads: names("--random-source"), lists: names("--files0-from"),
	runs: names("--compress-program")}

var shuf = tool{reason: "shuffles lines", getopt: getopt{short: "ino", long: names("--input-range --head-count --output --random-source")},
	writes: names("-o --output"), reads: names("--random-source")}

var iconv = tool{reason: "converts text", getopt: getopt{short: "fto", long: names("--from-code --to-code --output")},
	writes: names("-o --output")}

var wc = tool{reason: "counts lines, words and bytes", getopt: getopt{long: names("--files0-from")}, lists: names("--files0-from")}

var du = tool{reason: "shows disk usage", meta: true,
	getopt: getopt{short: "BdtX", optLong: names("--time"),
		long: names("--block-size --max-depth --threshold --time-style --exclude-from --exclude --files0-from")},
	reads: names("-X --exclude-from"), lists: names("--files0-from")}

// uniq reads its first operand and writes its second; any further operand
// is an error, but is taken as written in case an option was misread.
func uniq(c *call) effect {
	p := uniqOpts.parse(c.args)
	e := read("filters lines")
	if len(p.ops) > 0 {
		c.raiseReads(&e, p.ops[0])
	}
	if len(p.ops) > 1 {
		w := write(airlock.ClassFSWrite, "writes filtered lines into a file")
		c.raiseWrites(&w, p.ops[1:]...)
		e = worse(e, w)
	}
	return e
}

var uniqOpts = getopt{short: "fsw", long: names("--skip-fields --skip-chars --check-chars"), optLong: names("--all-repeated --group")}

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

var dateOpts = getopt{short: "dfrs", optShort: "I", long: names("--date --file --reference --set --rfc-3339"),
	optLong: names("--iso-8601")}

// date sets the clock with -s, or with an operand that is not a format.
func date(c *call) effect {
	p := dateOpts.parse(c.args)
	if p.has("-s", "--set") {
		return admin("sets the system clock")
	}
	for _, op := range p.ops {
		if !strings.HasPrefix(op.val, "+") {
			return admin("sets the system clock")
		}
	}
	e := read("prints the date")
	c.raiseReads(&e, p.values("-f", "--file")...)
	return e
}

func hostname(c *call) effect {
	p := getopt{short: "F", long: names("--file")}.parse(c.args)
	if p.has("-F", "--file") || len(p.ops) > 0 {
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
	if (getopt{short: "n", long: names("--namespace")}).parse(c.args).has("-k", "--kill") {
		return kill("kills the processes using files")
	}
	return read("shows which processes use files")
}

var touchOpts = getopt{short: "drt", long: names("--date --reference --time")}

func touch(c *call) effect {
	p := touchOpts.parse(c.args)
	e := write(airlock.ClassFSWrite, "creates or updates files")
	c.raiseWrites(&e, p.ops...)
	return e
}

var mkdirOpts = getopt{short: "m", long: names("--mode"), optLong: names("--context")}

func mkdir(c *call) effect {
	p := mkdirOpts.parse(c.args)
	e := write(airlock.ClassFSMkdir, "creates directories")
	c.raiseWrites(&e, p.ops...)
	return e
}

var mktempOpts = getopt{short: "p", long: names("--suffix"), optLong: names("--tmpdir")}

// mktemp creates a file from a template ("/etc/cron.d/jobXXXX"), in the
// directory -p or --tmpdir names.
func mktemp(c *call) effect {
	p := mktempOpts.parse(c.args)
	e := write(airlock.ClassFSWrite, "creates a temporary file")
	dirs := p.values("-p", "--tmpdir")
	c.raiseWrites(&e, dirs...)
	if len(dirs) == 0 {
		c.raiseWrites(&e, p.ops...)
	}
	return e
}

// A copy reads its sources and writes its destination: the directory -t
// names, or the last operand.
var copyOpts = getopt{short: "St", long: names("--suffix --target-directory --sparse --no-preserve"),
	optLong: names("--backup --preserve --reflink --context --update")}

func copies(c *call) effect { return copyLike(c, copyOpts, write(airlock.ClassFSCopy, "copies files")) }

func move(c *call) effect {
	e := write(airlock.ClassFSMove, "moves files")
	p := copyOpts.parse(c.args)
	c.raiseWrites(&e, p.ops...) // moving a file out of a system place changes it too
	c.raiseWrites(&e, p.values("-t", "--target-directory")...)
	return e
}

func copyLike(c *call, g getopt, e effect) effect {
	p := g.parse(c.args)
	dests := p.values("-t", "--target-directory")
	srcs := p.ops
	if len(dests) == 0 && len(srcs) > 1 {
		dests, srcs = srcs[len(srcs)-1:], srcs[:len(srcs)-1]
	}
	c.raiseReads(&e, srcs...)
	c.raiseWrites(&e, dests...)
	return e
}

var installOpts = getopt{short: "gmoSt", long: names("--group --mode --owner --strip-program --suffix --target-directory"),
	optLong: names("--backup --context")}

// installCmd is install: a copy that may set modes and owners, and strip
// the files it installs with the program --strip-program names.
func installCmd(c *call) effect {
	p := installOpts.parse(c.args)
	for _, prog := range p.values("--strip-program") {
		c.runWords("install --strip-program", []arg{prog}, input{})
	}
	if m, ok := p.value("-m", "--mode"); ok && setuidMode(m.val) {
		return admin("installs a setuid or setgid program")
	}
	if p.has("-d", "--directory") {
		e := write(airlock.ClassFSMkdir, "creates directories")
		c.raiseWrites(&e, p.ops...)
		return e
	}
	return copyLike(c, installOpts, write(airlock.ClassFSCopy, "installs files"))
}

var linkOpts = getopt{short: "St", long: names("--suffix --target-directory"), optLong: names("--backup")}

func link(c *call) effect {
	e := write(airlock.ClassFSWrite, "creates links")
	p := linkOpts.parse(c.args)
	dests := p.values("-t", "--target-directory")
	if len(dests) == 0 && len(p.ops) > 0 {
		dests = p.ops[len(p.ops)-1:]
		if len(p.ops) == 1 {
			dests = []arg{literal(".")}
		}
	}
	c.raiseWrites(&e, dests...)
	return e
}

// tee writes its operands; --output-error's value is optional, so the word
// after it is a file.
func tee(c *call) effect {
	p := getopt{optLong: names("--output-error")}.parse(c.args)
	e := write(airlock.ClassFSWrite, "writes files")
	c.raiseWrites(&e, p.ops...)
	return e
}

var truncateOpts = getopt{short: "rs", long: names("--reference --size")}

func truncate(c *call) effect {
	e := effect{class: airlock.ClassFSWrite, cap: airlock.CapWorkspaceWrite, tier: airlock.TierDestructive, reason: "destroys file contents"}
	c.raiseWrites(&e, truncateOpts.parse(c.args).ops...)
	return e
}

// shred overwrites the contents of its operands: overwriting ~/.bashrc or
// a file under /etc changes the system.
func shred(reason string) rule {
	return func(c *call) effect {
		p := getopt{short: "ns", long: names("--iterations --random-source --size"), optLong: names("--remove")}.parse(c.args)
		e := remove(reason)
		c.raiseWrites(&e, p.ops...)
		return e
	}
}

var splitArgs = getopt{short: "abCltn", optLong: names("--numeric-suffixes --hex-suffixes"),
	long: names("--suffix-length --additional-suffix --bytes --line-bytes --lines --number --separator --filter")}

// split writes its input in pieces named PREFIX followed by a suffix it
// makes up ("split -a1 x ~/.bashr" writes ~/.bashrc), or gives each piece
// to the shell command --filter names.
func split(c *call) effect {
	p := splitArgs.parse(c.args)
	e := read("splits a file")
	if len(p.ops) > 0 {
		c.raiseReads(&e, p.ops[0])
	}
	if filters := p.values("--filter"); len(filters) > 0 {
		for _, f := range filters {
			c.runWords("split --filter", []arg{f}, input{kind: inPipe})
		}
		return e
	}
	prefix := literal("x")
	if len(p.ops) > 1 {
		prefix = p.ops[1]
	}
	suffix := ""
	if s, ok := p.value("--additional-suffix"); ok {
		suffix = s.val
	}
	w := write(airlock.ClassFSWrite, "writes the pieces of a file")
	c.raiseWrites(&w, pieces(prefix, suffix))
	return worse(e, w)
}

// csplit writes the pieces of its input as PREFIX (-f) followed by a
// number its --suffix-format makes.
func csplit(c *call) effect {
	p := getopt{short: "bfn", long: names("--suffix-format --prefix --digits")}.parse(c.args)
	e := read("splits a file")
	if len(p.ops) > 0 {
		c.raiseReads(&e, p.ops[0])
	}
	prefix := literal("xx")
	if f, ok := p.value("-f", "--prefix"); ok {
		prefix = f
	}
	suffix := ""
	if b, ok := p.value("-b", "--suffix-format"); ok {
		suffix = b.val
	}
	w := write(airlock.ClassFSWrite, "writes the pieces of a file")
	c.raiseWrites(&w, pieces(prefix, suffix))
	return worse(e, w)
}

// pieces is the pattern of the files split and csplit write: the prefix,
// any suffix, and the made-up part (csplit's "%d" conversions) standing
// for any text.
func pieces(prefix arg, suffix string) arg {
	v, ok := prefix.pathValue()
	if !ok {
		return prefix
	}
	for {
		i := strings.IndexByte(suffix, '%')
		if i < 0 || i+1 >= len(suffix) {
			break
		}
		j := i + 1 + strings.IndexAny(suffix[i+1:], "diouxXc%")
		if j <= i {
			break
		}
		suffix = suffix[:i] + "*" + suffix[j+1:]
	}
	return arg{val: v + "*" + suffix, text: prefix.text, static: true, glob: true}
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
	p := getopt{long: names("--reference"), flags: names("--recursive")}.parse(c.args)
	targets := p.ops
	modeOpt := slices.ContainsFunc(c.args, func(a arg) bool { // "chmod -x file": a mode may look like an option
		return a.static && len(a.val) > 1 && a.val[0] == '-' && a.val[1] != '-' &&
			strings.Trim(a.val[1:], "rwxXstugoa+-=,01234567") == "" && strings.ContainsAny(a.val, "rwxXst")
	})
	for _, a := range c.args {
		if modeOpt && a.static && strings.HasPrefix(a.val, "-") && setuidMode(a.val[1:]) && strings.ContainsRune(a.val, 's') {
			return effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "sets the setuid or setgid bit"}
		}
	}
	if !modeOpt && !p.has("--reference") && len(p.ops) > 0 {
		targets = p.ops[1:]
		if setuidMode(p.ops[0].val) {
			return effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "sets the setuid or setgid bit"}
		}
	}
	recursiveRoot(c, &e, p, targets)
	c.raiseWrites(&e, targets...)
	return e
}

func chown(c *call) effect {
	e := perm("changes file ownership")
	p := getopt{long: names("--from --reference"), flags: names("--recursive")}.parse(c.args)
	targets := p.ops
	if !p.has("--reference") && len(p.ops) > 0 {
		targets = p.ops[1:]
	}
	recursiveRoot(c, &e, p, targets)
	c.raiseWrites(&e, targets...)
	return e
}

func chflags(c *call) effect {
	e := perm("changes file flags")
	p := getopt{}.parse(c.args)
	if len(p.ops) > 0 {
		p.ops = p.ops[1:]
	}
	recursiveRoot(c, &e, p, p.ops)
	c.raiseWrites(&e, p.ops...)
	return e
}

// setfacl changes the access lists of its operands, or with --restore of
// every file a backup names, which Airlock cannot see.
func setfacl(c *call) effect {
	p := getopt{short: "mMxX", long: names("--modify --modify-file --remove --remove-file --set --set-file --restore"),
		flags: names("--recursive")}.parse(c.args)
	if p.has("--restore") {
		e := effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged,
			reason: "restores the access lists of the files a backup names"}
		return e
	}
	e := perm("changes file access lists")
	c.raiseReads(&e, p.values("-M", "-X", "--modify-file", "--remove-file", "--set-file")...)
	recursiveRoot(c, &e, p, p.ops)
	c.raiseWrites(&e, p.ops...)
	return e
}

// recursiveRoot raises a recursive change of / or of a home directory.
func recursiveRoot(c *call, e *effect, p parsed, targets []arg) {
	if !p.has("-R", "--recursive") {
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

var patchOpts = getopt{short: "pdiorBDFVYzg", optLong: names("--merge"),
	long: names("--strip --directory --input --output --reject-file --prefix --ifdef --fuzz --version-control " +
		"--basename-prefix --suffix --get --quoting-style --reject-format --read-only")}

// patch writes the files its diff names, under -d's directory, and its
// output, reject and backup files; -i is the diff it reads.
func patch(c *call) effect {
	p := patchOpts.parse(c.args)
	e := write(airlock.ClassFSWrite, "patches files")
	if p.has("--dry-run") {
		e = read("checks that a patch applies")
	}
	dir := literal(".")
	if d, ok := p.value("-d", "--directory"); ok {
		dir = d
	}
	c.raiseWrites(&e, dir)
	c.raiseWrites(&e, p.ops...)
	c.raiseWrites(&e, p.values("-o", "--output", "-r", "--reject-file", "-B", "--prefix")...)
	c.raiseReads(&e, p.values("-i", "--input")...)
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

// Options: most programs of this family parse their options with
// getopt_long, which accepts more spellings than a list of exact words
// catches: clusters ("-mo FILE", "-moFILE"), values attached or not
// ("--output=FILE", "--output FILE"), options after operands, and long
// names cut to any unambiguous prefix ("--outp", "--compress-prog"). A
// rule that looks for a dangerous option parses the command line with the
// program's getopt, so that every spelling is the same option.

// getopt says how a program parses its options.
type getopt struct {
	short    string   // letters that take a value
	optShort string   // letters whose optional value is only attached ("-iSUFFIX")
	long     []string // long names that take a value
	optLong  []string // long names whose optional value is only given with "="
	flags    []string // long names without a value, so that abbreviations resolve
}

// parsed is a command line split into options and operands.
type parsed struct {
	opts []option // each with its full name: "-o", "--output"
	ops  []arg
	dyn  bool // a word only known at run time may hold options
}

// names splits a space-separated list, to keep tables short.
func names(s string) []string { return strings.Fields(s) }

type optKind uint8

const (
	noValue optKind = iota
	needsValue
	optionalValue
)

// resolve returns the long option a word names: itself, or the one
// option it abbreviates. An ambiguous abbreviation is an error for the
// program, so it names nothing.
func (g getopt) resolve(name string) (string, optKind) {
	lists := []struct {
		names []string
		kind  optKind
	}{{g.long, needsValue}, {g.optLong, optionalValue}, {g.flags, noValue}}
	found, kind, n := name, noValue, 0
	for _, l := range lists {
		for _, o := range l.names {
			if o == name {
				return o, l.kind
			}
			if len(name) > 2 && strings.HasPrefix(o, name) {
				found, kind = o, l.kind
				n++
			}
		}
	}
	if n != 1 {
		return name, noValue
	}
	return found, kind
}

// parse splits args as getopt_long would. Everything after "--" is an
// operand. A word only known at run time is an operand, unless its known
// start makes it an option ("--output=$F", "-o$F"): then its value is
// dynamic, and a path it starts with is kept for path checks.
func (g getopt) parse(args []arg) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		if !a.static {
			v = staticPrefix(a.text)
			if len(v) < 2 || v[0] != '-' {
				p.ops = append(p.ops, a)
				continue
			}
		}
		if len(v) < 2 || v[0] != '-' {
			p.ops = append(p.ops, a)
			continue
		}
		if v == "--" && a.static {
			p.ops = append(p.ops, args[i+1:]...)
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v, "=")
			full, kind := g.resolve(name)
			o := option{name: full}
			switch {
			case eq:
				o.val, o.has = valueArg(a, val), true
			case !a.static:
				p.dyn = true
			case kind == needsValue && i+1 < len(args):
				i++
				o.val, o.has = args[i], true
			}
			p.opts = append(p.opts, o)
			continue
		}
		i = g.cluster(&p, args, i, v)
	}
	return p
}

// cluster parses a word of short options ("-nf", "-oFILE"), whose known
// part is v, and returns the index of the last word it used.
func (g getopt) cluster(p *parsed, args []arg, i int, v string) int {
	a := args[i]
	for j := 1; j < len(v); j++ {
		o := option{name: "-" + v[j:j+1]}
		value := strings.IndexByte(g.short, v[j]) >= 0
		optional := strings.IndexByte(g.optShort, v[j]) >= 0
		switch {
		case (value || optional) && (j+1 < len(v) || !a.static):
			o.val, o.has = valueArg(a, v[j+1:]), true
		case value && i+1 < len(args):
			i++
			o.val, o.has = args[i], true
		}
		p.opts = append(p.opts, o)
		if value || optional {
			return i
		}
	}
	if !a.static {
		p.dyn = true // more letters may follow
	}
	return i
}

// valueArg is the value attached to an option word, whose known part is
// v. A dynamic value that starts with a path is a pattern of that path,
// for path checks ("--output=/etc/$F" may be any file under /etc).
func valueArg(a arg, v string) arg {
	if a.static {
		return arg{val: v, text: quote(v), static: true, glob: a.glob}
	}
	out := arg{text: a.text}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") {
		out.path, out.glob = v+"*", true
	}
	return out
}

// staticPrefix is the start of a word as written, unquoted, up to its
// first expansion.
func staticPrefix(text string) string {
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				b.WriteByte(ch)
			}
		case strings.HasPrefix(text[i:], "${HOME}"):
			b.WriteByte('~') // as knownPrefixPath does for a whole word
			i += len("${HOME}") - 1
		case strings.HasPrefix(text[i:], "$HOME") && !syntaxValidName("HOME"+text[i+5:min(i+6, len(text))]):
			b.WriteByte('~')
			i += len("$HOME") - 1
		case ch == '$' || ch == '`':
			return b.String()
		case ch == '\\' && i+1 < len(text):
			i++
			b.WriteByte(text[i])
		case ch == '"':
			if quote == '"' {
				quote = 0
			} else {
				quote = '"'
			}
		case ch == '\'':
			quote = '\''
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// values returns the values given to names, in order.
func (p parsed) values(names ...string) []arg {
	var out []arg
	for _, o := range p.opts {
		if o.has && slices.Contains(names, o.name) {
			out = append(out, o.val)
		}
	}
	return out
}

func (p parsed) value(names ...string) (arg, bool) {
	for _, o := range p.opts {
		if o.has && slices.Contains(names, o.name) {
			return o.val, true
		}
	}
	return arg{}, false
}

// tool is a program known by what its options do: it reads its operands
// (or only shows information about them, with meta), and the values of
// some options are files it writes, files it reads and may print (a
// configuration, a list of file names), or commands it runs.
type tool struct {
	reason string
	getopt
	meta   bool
	writes []string // options whose value is a file it writes
	reads  []string // options whose value is a file it reads
	lists  []string // options whose value is a file of names of files it reads
	runs   []string // options whose value is a command it runs
}

func (t tool) rule(c *call) effect { return t.classify(c, t.parse(c.args)) }

func (t tool) classify(c *call, p parsed) effect {
	e := read(t.reason)
	if !t.meta {
		c.raiseReads(&e, p.ops...)
	}
	c.raiseReads(&e, p.values(t.reads...)...)
	for _, l := range p.values(t.lists...) {
		c.raiseReads(&e, l)
		c.raiseReads(&e, c.stdinNames(l)...)
	}
	for _, o := range p.opts {
		switch {
		case !o.has:
		case slices.Contains(t.writes, o.name):
			w := write(airlock.ClassFSWrite, "writes the file given to "+o.name)
			c.raiseWrites(&w, o.val)
			e = worse(e, w)
		case slices.Contains(t.runs, o.name):
			c.runWords(c.name+" "+o.name, []arg{o.val}, input{kind: inPipe})
		}
	}
	if p.dyn && len(t.runs) > 0 {
		e = worse(e, exec("takes options only known at run time, which may run commands"))
	}
	return e
}

// stdinNames returns the file names a list holds when the list is the
// command's standard input and Airlock knows it (a here-document): the
// names a program reads with --files0-from=- or -T -.
func (c *call) stdinNames(list arg) []arg {
	if !list.static || list.val != "-" && list.val != "/dev/stdin" || c.in.kind != inText {
		return nil
	}
	var out []arg
	for _, n := range strings.FieldsFunc(c.in.text, func(r rune) bool { return r == '\n' || r == 0 }) {
		out = append(out, literal(n))
	}
	return out
}
