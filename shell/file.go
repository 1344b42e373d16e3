package shell

import (
	"errors"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Files: programs that read, search, write, copy, link, archive, compress
// and edit files, and the stores that hold secrets.

// readOnly are programs that read the files they are given, with no
// option that runs, writes or reads anything else.
var readOnly = []string{
	"cat", "tac", "nl", "head", "tail", "more", "most", "zmore", "cut", "tr", "paste", "join", "fold", "fmt",
	"pr", "column", "expand", "unexpand", "comm", "diff", "zdiff", "colordiff", "cmp", "strings", "od",
	"hexdump", "hd", "base64", "base32", "basenc", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
	"sha512sum", "b2sum", "cksum", "sum", "shasum", "md5", "rev", "tsort", "look", "csvlook", "jless",
}

// metadataOnly are the listing programs: their operands name files whose
// contents they do not read.
var metadataOnly = stringSet(slices.Concat(listing, listingRules)...)

// listing are programs that show information about files, processes or
// the system without reading file contents, with no option that runs,
// writes or reads anything else.
var listing = []string{
	"ls", "dir", "vdir", "exa", "eza", "lsd", "stat", "df", "locate", "mlocate", "plocate", "realpath",
	"readlink", "dirname", "basename", "which", "whereis", "namei", "lsof", "pgrep", "pidof", "top", "htop",
	"btop", "free", "vmstat", "iostat", "mpstat", "uptime", "w", "whoami", "id", "groups", "uname", "nproc",
	"lscpu", "lsblk", "lsusb", "lsmod", "modinfo", "hostid", "getconf", "locale", "tty", "cal",
	"ncal", "sleep", "seq", "expr", "factor", "numfmt", "yes", "uuidgen", "lsattr", "getfacl", "getcap",
	"sestatus", "getenforce", "quota", "clear", "reset", "tput", "tabs", "sw_vers", "lsb_release", "pstree",
	"pwdx", "iotop", "nethogs", "netstat", "logname",
}

// listingRules are listing programs with a rule of their own.
var listingRules = []string{"du", "file", "tree", "last", "lastb", "lastlog", "ss", "busctl", "loginctl",
	"systemd-analyze", "ps", "lshw", "nvidia-smi", "sensors", "blkid", "findmnt", "atop", "stty", "apropos",
	"whatis", "lspci", "iftop"}

var fileCommands = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"printenv": printenv,
		// Search and text processing.
		"grep": grep, "egrep": grep, "fgrep": grep, "zgrep": grep, "zegrep": grep, "zfgrep": grep, "bzgrep": grep,
		"xzgrep": grep, "rg": rg, "ag": ag, "ack": ack,
		"sort": sortLines.rule, "uniq": uniq, "shuf": shuf.rule, "iconv": iconv.rule, "wc": wc.rule,
		"jq":  jq,
		"yq":  yq,
		"awk": awk, "gawk": awk, "mawk": awk, "nawk": awk, "sed": sed, "gsed": sed, "xxd": xxd, "bc": bc.rule, "dc": dc,
		"diff3": diff3.rule, "sdiff": diff3.rule, "diffstat": diffstat.rule, "xmllint": xmllint, "mlr": mlr,

		// Pagers and manuals.
		"less": less, "zless": less, "man": man, "info": info, "bat": bat, "batcat": bat, "tldr": tldr,
		"apropos": manConfig.rule, "whatis": manConfig.rule,

		// Listing programs with options that read, write, run or change.
		"du": du.rule, "file": file, "tree": tree, "last": lastRecords.rule, "lastb": lastRecords.rule,
		"who": whoRecords.rule, "users": whoRecords.rule, "lastlog": lastlog, "ss": ss, "busctl": busctl,
		"loginctl": loginctl, "systemd-analyze": systemdAnalyze, "ps": ps, "lshw": lshw, "nvidia-smi": nvidiaSMI,
		"sensors": sensors, "blkid": blkid.rule, "findmnt": findmnt.rule, "atop": atop.rule, "stty": stty,
		"ldd": ldd, "nm": binutils, "objdump": binutils, "readelf": binutils, "size": binutils, "lspci": lspci.rule,
		"iftop": iftop.rule, "date": date, "hostname": hostname,
		"kill": killRule, "pkill": killRule, "killall": killRule, "skill": killRule, "xkill": killRule, "fuser": fuser,

		// Writing, copying, linking, deleting, permissions.
		"touch": writer(write(airlock.ClassFSWrite, "creates or updates files"),
			getopt{short: "drt", long: names("--date --reference --time")}),
		"mkdir": writer(write(airlock.ClassFSMkdir, "creates directories"),
			getopt{short: "m", long: names("--mode"), optLong: names("--context")}),
		// --output-error's value is optional: the word after it is a file.
		"tee": writer(write(airlock.ClassFSWrite, "writes files"), getopt{optLong: names("--output-error")}),
		"truncate": writer(effect{class: airlock.ClassFSWrite, cap: airlock.CapWorkspaceWrite, tier: airlock.TierDestructive,
			reason: "destroys file contents"}, getopt{short: "rs", long: names("--reference --size")}),
		"mktemp": mktemp, "cp": copies, "install": installCmd, "mv": move, "ln": link, "dd": dd,
		"rm": fixed(remove("deletes files")), "rmdir": fixed(remove("deletes directories")),
		"unlink": fixed(remove("deletes a file")), "shred": writer(remove("destroys file contents"), shredOpts),
		"srm": writer(remove("destroys files"), shredOpts), "wipe": writer(remove("destroys files"), shredOpts),
		"chmod": chmod, "chown": chown, "chgrp": chown, "setfacl": setfacl, "chflags": chflags,
		"chattr": fixed(effect{class: airlock.ClassFSPermissions, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged,
			reason: "changes file attributes"}),
		"patch": patch, "split": split, "csplit": csplit, "dos2unix": dos2unix, "unix2dos": dos2unix,

		// Archives and compressors.
		"tar": tar, "bsdtar": tar, "gtar": tar, "unzip": unzip, "zip": zip, "7z": sevenZip, "7za": sevenZip,
		"7zr": sevenZip, "cpio": cpio,
		"gzip": compress, "gunzip": compress, "zcat": compress, "pigz": compress, "unpigz": compress,
		"bzip2": compress, "bunzip2": compress, "bzcat": compress, "pbzip2": compress, "xz": compress,
		"unxz": compress, "xzcat": compress, "lzma": compress, "unlzma": compress, "lzcat": compress,
		"zstd": compress, "unzstd": compress, "zstdcat": compress, "lz4": compress, "unlz4": compress,
		"lz4cat": compress, "brotli": compress, "compress": compress, "uncompress": compress,

		// Editors, and programs that open files with others.
		"vim": vim, "vi": vim, "nvim": vim, "view": vim, "vimdiff": vim, "ex": vim,
		"nano": nano, "pico": nano, "emacs": emacs, "ed": ed, "kak": kak, "micro": micro, "hx": helix, "helix": helix,
		"code": code, "subl": subl, "joe": editor, "mcedit": editor, "gedit": editor, "kate": editor,
		"open": fixed(exec("opens files or URLs with other programs")), "xdg-open": fixed(exec("opens files or URLs with other programs")),

		// Keys and the stores that hold secrets.
		"gpg": gpg, "gpg2": gpg, "ssh-add": sshAdd, "ssh-keygen": sshKeygen, "getent": getent, "security": security,
		"pass": pass,
	}
})

var grepOpts = getopt{short: "efmABCdDX",
	long: names("--regexp --file --max-count --after-context --before-context --context --directories --devices " +
		"--label --group-separator --binary-files --include --exclude --exclude-from --exclude-dir"),
	optLong: names("--color --colour"), flags: names("--recursive --dereference-recursive")}

// grep: the first operand is the pattern unless -e or -f gives it; a
// recursive search without operands searches the working directory.
func grep(c *call) effect {
	p := grepOpts.parse(c.args)
	recursive := p.has("-r", "-R", "--recursive", "--dereference-recursive")
	for _, d := range p.values("-d", "--directories") {
		recursive = recursive || d.val == "recurse"
	}
	return searchOps(c, p, p.has("-e", "--regexp", "-f", "--file"), recursive, p.values("-f", "--file", "--exclude-from"))
}

var rgOpts = getopt{short: "ABCdEefgjMmrtT", long: names("--after-context --before-context --color --colors " +
	"--context --context-separator --dfa-size-limit --encoding --engine --field-context-separator " +
	"--field-match-separator --file --glob --iglob --ignore-file --max-columns --max-count --max-depth " +
	"--max-filesize --path-separator --pre --pre-glob --regex-size-limit --regexp --replace --sort --sortr " +
	"--threads --type --type-add --type-clear --type-not --hostname-bin --hyperlink-format --generate")}

// rg runs --pre's program on every file it searches (a path, no shell).
func rg(c *call) effect {
	p := rgOpts.parse(c.args)
	for _, o := range p.opts {
		if o.has && (o.name == "--pre" || o.name == "--hostname-bin") {
			c.runWords("rg "+o.name, []arg{o.val}, input{})
		}
	}
	return searchOps(c, p, p.has("-e", "--regexp", "-f", "--file", "--files", "--type-list"), true,
		p.values("-f", "--file", "--ignore-file"))
}

var agOpts = getopt{short: "ABCGgmpW", long: names("--after --before --context --file-search-regex --max-count " +
	"--depth --path-to-ignore --pager --ignore --ignore-dir --width --workers --color-line-number --color-match " +
	"--color-path --ackmate-dir-filter"), roles: map[string]role{"--pager": runsFilter}}

// ag: -g searches file names; the pattern is the first operand unless -g
// gives one. --pager names a command it runs.
func ag(c *call) effect {
	p := agOpts.parse(c.args)
	e := searchOps(c, p, p.has("-g"), true, p.values("-p", "--path-to-ignore"))
	c.useOptions(&e, p.opts, agOpts.roles)
	return e
}

var ackOpts = getopt{short: "ABCgmt",
	long: names("--pager --ackrc --files-from --output --max-count --after-context --before-context --context " +
		"--type-set --type-add --type-del --ignore-dir --noignore-dir --ignore-file --match --range-start " +
		"--range-end --color-filename --color-match --color-lineno --color-colno --type"),
	roles: map[string]role{"--pager": runsFilter}}

// ack runs --pager's command; an --ackrc file may set one, out of sight.
func ack(c *call) effect {
	p := ackOpts.parse(c.args)
	e := searchOps(c, p, p.has("-g", "-f", "--match"), true, p.values("--files-from"))
	c.useOptions(&e, p.opts, ackOpts.roles)
	if rc := p.values("--ackrc"); len(rc) > 0 {
		x := exec("reads options from an ackrc file, which may name a pager to run")
		c.raiseReads(&x, rc...)
		e = worse(e, x)
	}
	return e
}

// searchOps classifies a search of the files named after the pattern
// (unless noPattern, the options give it), or of the working directory
// when none is and the search is recursive, and of lists of files.
func searchOps(c *call, p parsed, noPattern, recursive bool, lists []arg) effect {
	ops := p.ops
	if !noPattern && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 && recursive {
		ops = []arg{literal(".")}
	}
	e := read("searches files")
	c.raiseReads(&e, ops...)
	c.raiseReads(&e, lists...)
	if recursive {
		c.raiseReadTree(&e, ops...)
	}
	return e
}

var sortLines = tool{reason: "sorts lines",
	getopt: getopt{short: "kStTo",
		long: names("--random-source --sort --batch-size --compress-program --files0-from --key --output " +
			"--buffer-size --field-separator --temporary-directory --parallel"), optLong: names("--check"),
		roles: map[string]role{"-o": writesFile, "--output": writesFile, "-T": writesFile, "--temporary-directory": writesFile, "--random-source": sendsFile, "--files0-from": listsFiles, "--compress-program": runsCommand}}}

var shuf = tool{reason: "shuffles lines", getopt: getopt{short: "ino", long: names("--input-range --head-count " +
	"--output --random-source"),
	roles: map[string]role{"-o": writesFile, "--output": writesFile, "--random-source": sendsFile}}}

var iconv = tool{reason: "converts text", getopt: getopt{short: "fto", long: names("--from-code --to-code --output"),
	roles: map[string]role{"-o": writesFile, "--output": writesFile}}}

var wc = tool{reason: "counts lines, words and bytes", getopt: getopt{long: names("--files0-from"),
	roles: map[string]role{"--files0-from": listsFiles}}}

var du = tool{reason: "shows disk usage", meta: true,
	getopt: getopt{short: "BdtX", long: names("--block-size --max-depth --threshold --time-style --exclude-from " +
		"--exclude --files0-from"), optLong: names("--time"),
		roles: map[string]role{"-X": sendsFile, "--exclude-from": sendsFile, "--files0-from": listsFiles}}}

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

var uniqOpts = getopt{short: "fsw", long: names("--skip-fields --skip-chars --check-chars"),
	optLong: names("--all-repeated --group")}

// yq edits files in place with -i, and writes one file per document with
// -s, named by an expression.
// jqValueOpts are jq's options that take a value.
var jqValueOpts = []string{"--arg", "--argjson", "--slurpfile", "--rawfile", "--argfile", "--indent", "-L", "--library-path"}

// jq processes JSON; its program may read the environment (env, $ENV).
func jq(c *call) effect {
	e := read("processes JSON")
	ops := c.operands(jqValueOpts...)
	c.raiseReads(&e, ops...)
	if len(ops) > 0 && !c.has("-f", "--from-file") {
		c.raiseEnvCode(&e, ops[0], jqEnv)
	}
	return e
}

// Code that reads the environment, where agents' and programs' tokens
// live: jq's env and $ENV, yq's env() and strenv(), awk's ENVIRON.
var (
	jqEnv  = regexp.MustCompile(`\benv\b|\$ENV\b|\$__prog_env\b`)
	yqEnv  = regexp.MustCompile(`\b(?:env|strenv|envsubst)\b|\$ENV\b`)
	awkEnv = regexp.MustCompile(`\bENVIRON\b|\bPROCINFO\b`)
)

// raiseEnvCode makes e a possible secret read when the program code in
// word reads the environment (or is only known at run time).
func (c *call) raiseEnvCode(e *effect, code arg, env *regexp.Regexp) {
	switch {
	case e.tier >= airlock.TierPrivileged:
	case !code.static:
		if !code.lenient && code.path == "" {
			*e = maySecret("runs " + c.name + " code only known at run time (" + code.text + "), which may read the environment")
		}
	case env.MatchString(code.val):
		*e = maySecret("runs " + c.name + " code that reads the environment, where tokens and keys live")
	}
}

func yq(c *call) effect {
	p := getopt{short: "Iops", long: names("--indent --output-format --input-format --split-exp --expression " +
		"--from-file --front-matter")}.parse(c.args)
	switch {
	case p.has("-i", "--inplace"):
		e := write(airlock.ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, p.ops...)
		return e
	case p.has("-s", "--split-exp"):
		return write(airlock.ClassFSWrite, "writes a file for each document")
	}
	e := read("processes YAML")
	c.raiseReads(&e, p.ops...)
	if len(p.ops) > 0 {
		c.raiseEnvCode(&e, p.ops[0], yqEnv)
	}
	for _, x := range p.values("--expression") {
		c.raiseEnvCode(&e, x, yqEnv)
	}
	return e
}

var awkOpts = getopt{short: "fFvmeEilW", optShort: "dDopL",
	long:    names("--file --field-separator --assign --source --exec --include --load"),
	optLong: names("--dump-variables --debug --pretty-print --profile --lint"), flags: names("--sandbox")}

// awk is classified by its program (see awkProgram): the commands it runs
// with system() and pipes, the files it writes with print > and reads with
// getline <, gawk's network files. Program files, extensions and the
// debugger are code Airlock cannot see; gawk's --sandbox forbids all of it.
func awk(c *call) effect {
	p := awkOpts.parse(c.args)
	ops := p.ops
	progs := p.values("-e", "--source")
	var progFiles []arg
	for _, f := range p.values("-f", "--file", "-E", "--exec") {
		if f.static && (f.val == "-" || f.val == "/dev/stdin") && c.in.kind == inText {
			progs = append(progs, literal(c.in.text)) // a program in a here-document
		} else {
			progFiles = append(progFiles, f)
		}
	}
	if len(progs) == 0 && !p.has("-f", "--file", "-E", "--exec") && len(ops) > 0 {
		progs, ops = ops[:1], ops[1:]
	}
	vars := awkAssigns(p.values("-v", "--assign"))
	var files []arg
	for _, op := range ops {
		if name, _, ok := strings.Cut(op.val, "="); ok && op.static && syntaxValidName(name) {
			vars = awkAssigns([]arg{op}, vars)
			continue
		}
		files = append(files, op)
	}
	e := read("processes text")
	c.raiseReads(&e, files...)
	for _, prog := range progs {
		c.raiseEnvCode(&e, prog, awkEnv)
	}
	if p.has("-S", "--sandbox") {
		return e // no system(), no redirections, no extensions
	}
	inPlace := false
	for _, inc := range p.values("-i", "--include") {
		if strings.TrimSuffix(inc.val, ".awk") == "inplace" {
			inPlace = true
		} else {
			e = worse(e, exec("includes an awk source file, which Airlock cannot inspect"))
		}
	}
	switch {
	case len(progFiles) > 0:
		x := exec("runs an awk program file, which Airlock cannot inspect")
		c.raiseReads(&x, progFiles...)
		e = worse(e, x)
	case p.has("-l", "--load"):
		e = worse(e, loadsNative("loads an awk extension library, which runs any code with awk's rights"))
	case p.has("-D", "--debug"):
		e = worse(e, exec("runs gawk's debugger, whose commands Airlock cannot see"))
	}
	for _, w := range p.values("-W") {
		if opt, _, _ := strings.Cut(w.val, "="); !w.static || !slices.Contains(names(awkSafeW), opt) {
			e = worse(e, exec("takes -W "+w.text+", which may run a program file"))
		}
	}
	for _, o := range p.opts {
		if out, ok := awkReports[o.name]; ok {
			w := write(airlock.ClassFSWrite, "writes a report of the program")
			if o.has {
				out = o.val
			}
			c.raiseWrites(&w, out)
			e = worse(e, w)
		}
	}
	for _, prog := range progs {
		if !prog.static {
			return worse(e, exec("runs an awk program only known at run time"))
		}
		ops, err := awkProgram(prog.val, vars)
		if err != nil {
			return worse(e, exec("runs an awk program Airlock cannot parse"))
		}
		inPlace = inPlace || ops.inPlace
		e = worse(e, c.awkEffects(ops))
	}
	if inPlace {
		w := write(airlock.ClassFSWrite, "edits files in place")
		c.raiseWrites(&w, files...)
		e = worse(e, w)
	}
	return e
}

// awkSafeW are the -W options (mawk's, and gawk's names for its long
// options) that neither run code nor write.
const awkSafeW = "version usage help dump interactive posix_space random sprintf sandbox traditional posix lint " +
	"characters-as-bytes re-interval non-decimal-data use-lc-numeric bignum optimize no-optimize copyright"

// awkReports are gawk's options that write a report, with the file each
// writes by default.
var awkReports = map[string]arg{
	"-d": literal("awkvars.out"), "--dump-variables": literal("awkvars.out"),
	"-o": literal("awkprof.out"), "--pretty-print": literal("awkprof.out"),
	"-p": literal("awkprof.out"), "--profile": literal("awkprof.out"),
}

// awkAssigns adds the static values of "name=value" assignments (-v, or
// operands) to vars, so that system(cmd) finds what cmd holds.
func awkAssigns(words []arg, into ...map[string][]string) map[string][]string {
	vars := map[string][]string{}
	if len(into) > 0 {
		vars = into[0]
	}
	for _, w := range words {
		if name, val, ok := strings.Cut(w.val, "="); ok && w.static {
			vars[name] = append(vars[name], val)
		}
	}
	return vars
}

// awkEffects classifies what an awk program does beyond printing, and
// asks for the commands it runs to be analysed.
func (c *call) awkEffects(ops awkOps) effect {
	e := read("processes text")
	for _, cmd := range ops.commands {
		c.runsLine("awk system", cmd)
	}
	if ops.dynamic {
		e = worse(e, exec("runs commands it builds at run time"))
		if ops.network {
			return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged,
				reason: "runs commands while connected to the network (gawk /inet), as a remote shell does"}
		}
	}
	if ops.network {
		e = worse(e, net(airlock.ClassNetConnect, "opens network connections (gawk /inet)"))
	}
	if ops.code {
		e = worse(e, loadsNative("loads awk code or an extension library, which Airlock cannot inspect"))
	}
	return c.scriptFiles(e, "awk program", ops.writes, ops.reads)
}

// scriptFiles adds to e the files a program's script writes and reads (""
// for one it names at run time).
func (c *call) scriptFiles(e effect, script string, writes, reads []string) effect {
	for _, f := range writes {
		w := write(airlock.ClassFSWrite, "writes a file from its "+script)
		if f != "" {
			c.raiseWrites(&w, literal(f))
		}
		e = worse(e, w)
	}
	for _, f := range reads {
		r := read("reads a file from its " + script)
		c.raiseReads(&r, literal(f))
		e = worse(e, r)
	}
	return e
}

// sedOpts: -i's suffix is optional, so "-ie" is in place with suffix "e".
var sedOpts = getopt{short: "efl", optShort: "i", long: names("--expression --file --line-length"),
	optLong: names("--in-place"),
	flags: names("--quiet --silent --debug --posix --sandbox --separate --unbuffered --null-data --zero-terminated " +
		"--regexp-extended --follow-symlinks --binary")}

// sed edits text, in place with -i; its script may also run commands,
// write and read files (see sedScript).
func sed(c *call) effect {
	p := sedOpts.parse(c.args)
	ops := p.ops
	scripts := p.values("-e", "--expression")
	files := p.values("-f", "--file")
	if len(scripts) == 0 && len(files) == 0 && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	e := read("edits text")
	c.raiseReads(&e, ops...)
	if p.has("-i", "--in-place") {
		e = write(airlock.ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, ops...)
		for _, suffix := range p.values("-i", "--in-place") {
			if strings.Contains(suffix.val, "/") { // a backup directory
				for _, op := range ops {
					c.raiseWrites(&e, literal(strings.ReplaceAll(suffix.val, "*", path.Base(op.val))))
				}
			}
		}
	}
	if p.has("--sandbox") {
		return e // e, r and w are refused
	}
	for _, f := range files {
		if f.static && (f.val == "-" || f.val == "/dev/stdin") && c.in.kind == inText {
			scripts = append(scripts, literal(c.in.text))
			continue
		}
		x := exec("runs a sed script file, which Airlock cannot inspect")
		c.raiseReads(&x, f)
		e = worse(e, x)
	}
	if len(scripts) == 0 {
		return e
	}
	// sed joins its -e scripts with newlines: "a\" in one continues in the next.
	lines := make([]string, len(scripts))
	for i, s := range scripts {
		if !s.static {
			return worse(e, exec("runs a sed script only known at run time"))
		}
		lines[i] = s.val
	}
	return worse(e, c.sedEffects(strings.Join(lines, "\n")))
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
	writes := slices.DeleteFunc(slices.Clone(ops.writes), func(f string) bool { return stream(literal(f)) })
	return c.scriptFiles(e, "sed script", writes, ops.reads)
}

// awkOps is what an awk program does beyond reading its input and printing.
type awkOps struct {
	commands []string // commands it runs, given as strings
	dynamic  bool     // runs commands it builds at run time
	writes   []string // files it writes ("" for one named at run time)
	reads    []string // files it reads with getline
	network  bool     // opens gawk's /inet special files
	code     bool     // @load or @include of a file other than inplace
	inPlace  bool     // @include "inplace"
}

var errAwkSyntax = errors.New("awk program does not scan")

type awkToken struct {
	kind byte // 's' string, 'r' regex, 'w' word, 'n' newline, else the punctuation itself ('|' for |&)
	text string
}

// awkProgram finds, in an awk program, the commands it runs (system(),
// "cmd" | getline, print | "cmd", |& coprocesses), the files it writes
// (print > file) and reads (getline < file), and gawk's network files. A
// command or file held in a variable is found when the program or an
// assignment (vars) gives the variable a string; otherwise it is built at
// run time.
func awkProgram(prog string, vars map[string][]string) (awkOps, error) {
	toks, err := awkTokens(prog)
	if err != nil {
		return awkOps{}, err
	}
	strs := map[string][]string{}
	for k, v := range vars {
		strs[k] = v
	}
	built := map[string]bool{} // variables given a value built at run time
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].kind != 'w' || toks[i+1].kind != '=' {
			continue
		}
		if toks[i+2].kind == 's' && (i+3 == len(toks) || strings.IndexByte(";n}", toks[i+3].kind) >= 0) {
			strs[toks[i].text] = append(strs[toks[i].text], toks[i+2].text) // name = "string"
		} else {
			built[toks[i].text] = true
		}
	}
	// operand returns the strings a single-token operand stands for; ok is
	// false when it is an expression built at run time.
	operand := func(t awkToken) ([]string, bool) {
		switch t.kind {
		case 's':
			return []string{t.text}, true
		case 'w':
			v, ok := strs[t.text]
			return v, ok && !built[t.text]
		}
		return nil, false
	}
	var ops awkOps
	inPrint, depth := false, 0
	for i, t := range toks {
		next := awkToken{}
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case t.kind == '@' && next.kind == 'w' && next.text != "load" && next.text != "include" && next.text != "namespace":
			// gawk's indirect call, @f(): the function is named at run
			// time, and may be system().
			ops.dynamic = true
		case t.kind == 's' && awkNetFile(t.text):
			ops.network = true
		case t.kind == '@' && next.kind == 'w' && (next.text == "include" || next.text == "load"):
			if i+2 < len(toks) && toks[i+2].kind == 's' && next.text == "include" && strings.TrimSuffix(toks[i+2].text, ".awk") == "inplace" {
				ops.inPlace = true
			} else {
				ops.code = true
			}
		case t.kind == 'w' && (t.text == "print" || t.text == "printf"):
			inPrint, depth = true, 0
		case t.kind == 'w' && t.text == "system" && next.kind == '(':
			if i+3 < len(toks) && toks[i+3].kind == ')' {
				if cmds, ok := operand(toks[i+2]); ok {
					ops.commands = append(ops.commands, cmds...)
					continue
				}
			}
			ops.dynamic = true
		case t.kind == '|' && next.kind == 'w' && next.text == "getline": // cmd | getline
			cmds, ok := awkOperand(toks, i-1, operand)
			ops.add(cmds, ok)
		case t.kind == '|': // print | cmd
			cmds, ok := awkOperand(toks, i+1, operand)
			ops.add(cmds, ok)
		case t.kind == '<' && i > 0 && (toks[i-1].text == "getline" || i > 1 && toks[i-2].text == "getline"):
			files, ok := awkOperand(toks, i+1, operand)
			if !ok {
				files = []string{""}
			}
			for _, f := range files {
				if awkNetFile(f) {
					ops.network = true
				} else if f != "" && f != "-" && f != "/dev/stdin" {
					ops.reads = append(ops.reads, f)
				}
			}
		case inPrint && depth == 0 && (t.kind == '>' || t.kind == 'A'):
			files, ok := awkOperand(toks, i+1, operand)
			if !ok {
				files = []string{""}
			}
			for _, f := range files {
				switch {
				case awkNetFile(f):
					ops.network = true
				case stream(literal(f)):
				default:
					ops.writes = append(ops.writes, f)
				}
			}
		case t.kind == '(':
			depth++
		case t.kind == ')':
			depth--
		case t.kind == ';' || t.kind == 'n' || t.kind == '}' || t.kind == '{':
			inPrint = false
		}
	}
	return ops, nil
}

// awkOperand returns what the token at i stands for, when it is a whole
// operand: a string, or a variable given one.
func awkOperand(toks []awkToken, i int, operand func(awkToken) ([]string, bool)) ([]string, bool) {
	if i < 0 || i >= len(toks) {
		return nil, false
	}
	if i+1 < len(toks) && i > 0 && toks[i-1].kind == '|' { // print | "cmd" ; — nothing may follow
		if k := toks[i+1].kind; k != ';' && k != 'n' && k != '}' && k != ')' {
			return nil, false
		}
	}
	return operand(toks[i])
}

func (ops *awkOps) add(cmds []string, ok bool) {
	if !ok {
		ops.dynamic = true
		return
	}
	for _, c := range cmds {
		if awkNetFile(c) {
			ops.network = true
		} else {
			ops.commands = append(ops.commands, c)
		}
	}
}

// awkNetFile reports whether a file name is one of gawk's network
// connections: /inet/tcp/lport/host/rport and the like.
func awkNetFile(f string) bool {
	return strings.HasPrefix(f, "/inet/") || strings.HasPrefix(f, "/inet4/") || strings.HasPrefix(f, "/inet6/")
}

// awkTokens splits an awk program into the tokens awkProgram looks at:
// strings (unescaped), regular expressions, words, and punctuation, with
// ">>" as 'A' and "|&" as '|'; "||" is dropped. Comments are skipped.
func awkTokens(prog string) ([]awkToken, error) {
	var toks []awkToken
	// regexOK reports whether a "/" here starts a regular expression
	// rather than dividing.
	regexOK := func() bool {
		if len(toks) == 0 {
			return true
		}
		t := toks[len(toks)-1]
		switch t.kind {
		case 'w':
			return t.text == "print" || t.text == "printf" || t.text == "return" || t.text == "in"
		case 's', 'r', ')', ']', '$':
			return false
		}
		return true
	}
	for i := 0; i < len(prog); i++ {
		ch := prog[i]
		if n := len(toks); n > 1 && toks[n-1].kind == 's' && toks[n-2].kind == 's' { // "a" "b" is "ab"
			toks[n-2].text += toks[n-1].text
			toks = toks[:n-1]
		}
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
		case ch == '\\' && i+1 < len(prog) && prog[i+1] == '\n':
			i++
		case ch == '\n':
			toks = append(toks, awkToken{kind: 'n'})
		case ch == '#':
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
			i--
		case ch == '"':
			var b strings.Builder
			i++
			for ; i < len(prog) && prog[i] != '"'; i++ {
				if prog[i] == '\\' && i+1 < len(prog) {
					i++
					b.WriteByte(awkEscape(prog[i]))
					continue
				}
				if prog[i] == '\n' {
					return nil, errAwkSyntax
				}
				b.WriteByte(prog[i])
			}
			if i >= len(prog) {
				return nil, errAwkSyntax
			}
			toks = append(toks, awkToken{kind: 's', text: b.String()})
		case ch == '/' && regexOK():
			i++
			for ; i < len(prog) && prog[i] != '/'; i++ {
				if prog[i] == '\\' {
					i++
				} else if prog[i] == '[' { // a bracket expression may hold "/"
					for i++; i < len(prog) && prog[i] != ']'; i++ {
					}
				}
			}
			if i >= len(prog) {
				return nil, errAwkSyntax
			}
			toks = append(toks, awkToken{kind: 'r'})
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(prog) && (prog[j] == '_' || prog[j] >= 'a' && prog[j] <= 'z' || prog[j] >= 'A' && prog[j] <= 'Z' ||
				prog[j] >= '0' && prog[j] <= '9') {
				j++
			}
			toks = append(toks, awkToken{kind: 'w', text: prog[i:j]})
			i = j - 1
		case ch >= '0' && ch <= '9' || ch == '.':
			toks = append(toks, awkToken{kind: '0'})
			for i+1 < len(prog) && (prog[i+1] >= '0' && prog[i+1] <= '9' || prog[i+1] == '.') {
				i++
			}
		case ch == '|' && i+1 < len(prog) && prog[i+1] == '|':
			i++
			toks = append(toks, awkToken{kind: '&'})
		case ch == '|' && i+1 < len(prog) && prog[i+1] == '&':
			i++
			toks = append(toks, awkToken{kind: '|'})
		case ch == '>' && i+1 < len(prog) && prog[i+1] == '>':
			i++
			toks = append(toks, awkToken{kind: 'A'})
		case ch == '>' && i+1 < len(prog) && prog[i+1] == '=', ch == '=' && i+1 < len(prog) && prog[i+1] == '=',
			ch == '<' && i+1 < len(prog) && prog[i+1] == '=', ch == '!' && i+1 < len(prog) && prog[i+1] == '=':
			i++
			toks = append(toks, awkToken{kind: 'c'}) // a comparison
		default:
			toks = append(toks, awkToken{kind: ch})
		}
	}
	return toks, nil
}

func awkEscape(ch byte) byte {
	switch ch {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return ch
}

// xxd dumps its first operand into its second, and with -r turns a dump
// back into bytes. Its options are single words it matches by prefix:
// "-c 8", "-c8", "-cols 8" and "--cols 8" are the same; whatever is misread
// as an operand, the file it writes is the last one.
func xxd(c *call) effect {
	var ops []arg
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !a.static || len(a.val) < 2 || a.val[0] != '-' {
			ops = append(ops, a)
			continue
		}
		if a.val == "--" {
			ops = append(ops, c.args[i+1:]...)
			break
		}
		v := a.val[1:]
		if len(v) > 1 && v[0] == '-' {
			v = v[1:]
		}
		if xxdNextValue(v) {
			i++
		}
	}
	e := read("dumps bytes")
	if len(ops) > 0 {
		c.raiseReads(&e, ops[:len(ops)-1]...)
	}
	if len(ops) > 1 {
		w := write(airlock.ClassFSWrite, "writes a file")
		c.raiseWrites(&w, ops[len(ops)-1])
		e = worse(e, w)
	} else if len(ops) == 1 {
		c.raiseReads(&e, ops[0])
	}
	return e
}

// xxdNextValue reports whether an xxd option word ("c8", "cols",
// "capitalize") takes its value from the next word: it is the letter alone
// or spelled out ("c", "cols"); "c8" carries its value.
func xxdNextValue(v string) bool {
	for _, long := range names("cols groupsize len offset seek name R") {
		if v == long[:1] || strings.HasPrefix(v, long) {
			return true
		}
	}
	return false
}

// bc runs the programs in the files it is given, and prints them, in part,
// when they do not parse.
var bc = tool{reason: "calculates", getopt: getopt{short: "ef", long: names("--expression --file"),
	roles: map[string]role{"-f": sendsFile, "--file": sendsFile}}}

// dc runs its scripts (-e, -f, operands, or its input), whose "!" command
// runs the rest of the line as a shell command.
func dc(c *call) effect {
	p := getopt{short: "ef", long: names("--expression --file")}.parse(c.args)
	e := read("calculates")
	files := append(p.values("-f", "--file"), p.ops...)
	scripts := p.values("-e", "--expression")
	if len(files) > 0 {
		x := exec("runs dc scripts from files, which Airlock cannot inspect")
		c.raiseReads(&x, files...)
		e = worse(e, x)
	}
	if len(files) == 0 && len(scripts) == 0 {
		switch c.in.kind {
		case inText:
			scripts = append(scripts, literal(c.in.text))
		case inNull:
		default:
			return worse(e, exec("runs dc code read from its input, which Airlock cannot see"))
		}
	}
	for _, s := range scripts {
		if !s.static {
			return worse(e, exec("runs dc code only known at run time"))
		}
		for _, cmd := range dcCommands(s.val) {
			c.runsLine("dc !", cmd)
		}
		if strings.ContainsRune(s.val, '?') && c.in.kind != inText && c.in.kind != inNull {
			e = worse(e, exec("runs dc code read from its input (?), which Airlock cannot see"))
		}
	}
	return e
}

// dcCommands returns the shell commands a dc script runs: "!" followed by
// the rest of the line, unless it is the negation of a comparison ("!<r").
// Inside a string, which a macro may run, the command ends with the string.
func dcCommands(script string) []string {
	var cmds []string
	depth := 0
	for i := 0; i < len(script); i++ {
		switch script[i] {
		case '[':
			depth++
		case ']':
			depth = max(depth-1, 0)
		case '!':
			if i+1 < len(script) && strings.IndexByte("<>=", script[i+1]) >= 0 {
				continue
			}
			end := strings.IndexByte(script[i+1:], '\n')
			if end < 0 {
				end = len(script) - i - 1
			}
			cmd := script[i+1 : i+1+end]
			if depth > 0 {
				cmd, _, _ = strings.Cut(cmd, "]")
			}
			cmds = append(cmds, cmd)
			i += end
		}
	}
	return cmds
}

// Pagers and manuals.

var lessOpts = getopt{short: `bDhjkoOpPtTxyz"#`, long: names("--buffers --color --max-back-scroll --jump-target " +
	"--lesskey-file --lesskey-src --lesskey-content --log-file --LOG-FILE --pattern --prompt --tag --tag-file " +
	"--tabs --max-forw-scroll --window --quotes --shift --line-num-width --rscroll --status-col-width " +
	"--wheel-lines --header --intr --search-options --match-shift")}

// less shows files. Besides what LESSOPEN, VISUAL and the like make it run
// (vars.go), it copies what it shows into -o's file, takes key bindings
// (which can set LESSOPEN) from -k's, and runs the commands of "+cmd"
// operands as if typed, among them "!cmd" and "|mcmd", which run a shell
// command, "s file", which saves its input, and ":e file".
func less(c *call) effect {
	p := lessOpts.parse(c.args)
	e := read("shows files")
	var files []arg
	for _, op := range p.ops {
		if op.static && strings.HasPrefix(op.val, "+") {
			e = worse(e, c.lessCommands(op.val))
			continue
		}
		files = append(files, op)
	}
	c.raiseReads(&e, files...)
	c.raiseReads(&e, p.values("-T", "--tag-file")...)
	for _, o := range p.opts {
		switch {
		case !o.has:
		case o.name == "-o" || o.name == "-O" || o.name == "--log-file" || o.name == "--LOG-FILE":
			w := write(airlock.ClassFSWrite, "copies what it shows into a file")
			c.raiseWrites(&w, o.val)
			e = worse(e, w)
		case o.name == "-k" || o.name == "--lesskey-file" || o.name == "--lesskey-src" || o.name == "--lesskey-content":
			x := exec("takes key bindings from " + o.name + ", which can make it run commands")
			if o.name != "--lesskey-content" {
				c.raiseReads(&x, o.val)
			}
			e = worse(e, x)
		}
	}
	return e
}

// lessCommands classifies the commands of a "+cmd" operand: a search or a
// move is harmless; anything else may run, read or write, and the shell
// commands among it are analysed.
func (c *call) lessCommands(v string) effect {
	v = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(v, "+"), "+"), "0123456789")
	switch {
	case v == "", len(v) == 1 && strings.Contains("gGFpP%jkeyfbduRrqQ", v),
		strings.IndexByte("/?&", v[0]) >= 0 && !strings.ContainsAny(v, "\n\r"):
		return read("shows files")
	}
	for i := 0; i < len(v); i++ {
		start := -1
		switch {
		case v[i] == '!':
			start = i + 1
		case v[i] == '|' && i+2 <= len(v):
			start = i + 2 // after the mark
		}
		if start < 0 {
			continue
		}
		end := strings.IndexAny(v[start:], "\n\r")
		if end < 0 {
			end = len(v) - start
		}
		c.runsLine("less "+v[i:i+1], v[start:start+end])
		i = start + end
	}
	return exec("runs the less commands given with +, which can run shell commands, read and write files")
}

var manOpts = getopt{short: "CRLmMSsepPr", optShort: "THX", long: names("--config-file --recode --locale --systems " +
	"--manpath --sections --extension --pager --prompt --encoding --preprocessor"), optLong: names("--warnings " +
	"--troff-device --html --gxditview"), roles: map[string]role{"-P": runsFilter, "--pager": runsFilter}}

// man shows manual pages: the pager -P names and the browser -H names are
// commands it runs; a page given as a path (or with -l) is a file it
// reads; -C's configuration can name the programs it runs.
func man(c *call) effect {
	p := manOpts.parse(c.args)
	e := read("shows manual pages")
	c.useOptions(&e, p.opts, manOpts.roles)
	for _, o := range p.opts {
		if o.name != "-H" && o.name != "--html" || !o.has {
			continue
		}
		if !o.val.static {
			c.runUnknown("man "+o.name, o.val.text, "runs a browser only known at run time")
			continue
		}
		c.runScript("man "+o.name, commandScript("BROWSER", o.val.val), input{})
	}
	if cfg := p.values("-C", "--config-file"); len(cfg) > 0 {
		x := exec("takes a configuration file, which can name the programs it runs")
		c.raiseReads(&x, cfg...)
		e = worse(e, x)
	}
	local := p.has("-l", "--local-file")
	for _, op := range p.ops {
		if local || strings.Contains(op.val, "/") || !op.static {
			c.raiseReads(&e, op)
		}
	}
	return e
}

var infoOpts = getopt{short: "dfnoI", long: names("--directory --dribble --file --index-search --init-file --node " +
	"--output --restore")}

// info writes the nodes it shows with -o and the keys typed with
// --dribble; --restore replays keys from a file.
func info(c *call) effect {
	p := infoOpts.parse(c.args)
	t := tool{reason: "shows manuals", getopt: getopt{roles: map[string]role{"-o": writesFile, "--output": writesFile, "--dribble": writesFile, "-f": sendsFile, "--file": sendsFile, "--init-file": sendsFile}}}
	e := t.classify(c, p)
	if r := p.values("--restore"); len(r) > 0 {
		x := exec("replays keys from a file, which can run its print command")
		c.raiseReads(&x, r...)
		e = worse(e, x)
	}
	return e
}

var batOpts = getopt{short: "lHmr", long: names("--language --highlight-line --file-name --diff-context --tabs " +
	"--wrap --terminal-width --color --italic-text --decorations --paging --pager --map-syntax --ignored-suffix " +
	"--theme --theme-dark --theme-light --style --line-range --squeeze-limit --nonprintable-notation --binary " +
	"--completion --source --target --strip-ansi"), roles: map[string]role{"--pager": runsFilter}}

// bat shows files through the pager --pager names; "bat cache" builds its
// cache from --source into --target.
func bat(c *call) effect {
	p := batOpts.parse(c.args)
	e := read("shows files")
	c.raiseReads(&e, p.ops...)
	if len(p.ops) > 0 && p.ops[0].val == "cache" {
		e = write(airlock.ClassFSWrite, "builds or clears its cache")
		c.raiseWrites(&e, p.values("--target")...)
	}
	c.useOptions(&e, p.opts, batOpts.roles)
	return e
}

// tldr fetches the pages it shows, and its page index, from the network;
// --render shows a local file.
func tldr(c *call) effect {
	p := getopt{short: "fpLsr", long: names("--render --platform --language --source --config-path")}.parse(c.args)
	if p.has("--help", "-h", "--version", "-v") {
		return read("shows its usage")
	}
	if r := p.values("-f", "--render"); len(r) > 0 {
		e := read("shows a page file")
		c.raiseReads(&e, r...)
		return e
	}
	e := net(airlock.ClassNetHTTP, "fetches pages from the network")
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
	if (getopt{short: "n", long: []string{"--namespace"}}).has(c.args, "-k", "--kill") {
		return kill("kills the processes using files")
	}
	return read("shows which processes use files")
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
	if p.has("-r", "-R", "--recursive", "-a", "--archive") {
		c.raiseReadTree(&e, srcs...)
	}
	c.raiseWrites(&e, dests...)
	return e
}

var installOpts = getopt{short: "gmoSt", long: names("--group --mode --owner --strip-program --suffix " +
	"--target-directory"), optLong: names("--backup --context")}

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

// writer is a program that writes its operands: touch, mkdir, tee,
// truncate, and shred, whose overwriting ~/.bashrc or a file under /etc
// changes the system.
func writer(e effect, g getopt) rule {
	return func(c *call) effect {
		w := e
		c.raiseWrites(&w, g.parse(c.args).ops...)
		return w
	}
}

var shredOpts = getopt{short: "ns", long: names("--iterations --random-source --size"), optLong: names("--remove")}

var splitArgs = getopt{short: "abCltn", long: names("--suffix-length --additional-suffix --bytes --line-bytes " +
	"--lines --number --separator --filter"), optLong: names("--numeric-suffixes --hex-suffixes")}

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

var patchOpts = getopt{short: "pdiorBDFVYzg", long: names("--strip --directory --input --output --reject-file " +
	"--prefix --ifdef --fuzz --version-control --basename-prefix --suffix --get --quoting-style --reject-format " +
	"--read-only"), optLong: names("--merge")}

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

// Archives and compressors.

// raiseWriteTree raises the effect of writing files of unknown names (the
// members of an archive) under dir: privileged when dir is a system place,
// or holds places where a written file runs code or grants access (the
// home directory holds ~/.bashrc and ~/.ssh).
func (c *call) raiseWriteTree(e *effect, dir arg) {
	c.raiseWrites(e, dir)
	v, ok := dir.pathValue()
	if !ok || e.tier >= airlock.TierPrivileged {
		return
	}
	p := sensitive.Clean(c.resolve(v), "")
	// ([.]* is any hidden name, without saying which: the catalogue
	// counts it against its places under p, not against hidden names
	// that may be anywhere, as it would ".*".)
	for _, pat := range []string{p + "/*", p + "/[.]*"} {
		if c.cat.Persists(pat, true) {
			e.tier, e.cap, e.generic = airlock.TierPrivileged, airlock.CapHostAdmin, false
			e.reason += " into " + p + ", where files run at login or grant access"
			return
		}
	}
}

var tarOpts = getopt{short: "bCfFgHIKLNTVX", long: names("--listed-incremental --hole-detection --level " +
	"--sparse-version --add-file --directory --exclude --exclude-ignore --exclude-ignore-recursive " +
	"--exclude-tag --exclude-tag-all --exclude-tag-under --files-from --exclude-from --to-command --group " +
	"--group-map --mode --mtime --owner --owner-map --sort --xattrs-exclude --xattrs-include --file " +
	"--info-script --new-volume-script --tape-length --rmt-command --rsh-command --volno-file --blocking-factor " +
	"--record-size --format --pax-option --label --use-compress-program --starting-file --newer-mtime --newer " +
	"--after-date --suffix --strip-components --transform --xform --checkpoint-action --index-file " +
	"--no-quote-chars --quote-chars --quoting-style --warning --options"), optLong: names("--occurrence " +
	"--one-top-level --atime-preserve --backup --checkpoint --totals"), flags: names("--extract --get --create " +
	"--append --update --catenate --concatenate --delete --list --diff --compare --to-stdout --absolute-names " +
	"--remove-files --force-local --recursive-unlink")}

// tarValueLetters are the letters of tar's traditional first word ("xzf")
// that take the next words as values, in order.
const tarValueLetters = "bCfFgHIKLNTVX"

// tar: extracting or creating writes; options that run commands are
// parsed, an archive on another host (host:file) is a network transfer.
func tar(c *call) effect {
	g := tarOpts
	if c.name == "bsdtar" {
		g.short += "s" // a substitution, like --transform
	}
	p := g.parse(tarArgs(c.args))
	for _, o := range p.opts {
		switch {
		case !o.has:
		case o.name == "-I" && c.name == "bsdtar":
		case slices.Contains(names("--to-command --use-compress-program -I --info-script --new-volume-script -F "+
			"--rsh-command"), o.name):
			c.runWords("tar "+o.name, []arg{o.val}, input{})
		case o.name == "--checkpoint-action":
			if cmd, ok := strings.CutPrefix(o.val.val, "exec="); ok {
				c.runScript("tar --checkpoint-action", cmd, input{})
			} else if !o.val.static {
				c.runUnknown("tar --checkpoint-action", o.val.text, "runs an action only known at run time")
			}
		}
	}
	lists := p.values("-T", "--files-from")
	if c.name == "bsdtar" {
		lists = append(lists, p.values("-I")...)
	}
	archives := p.values("-f", "--file")
	e := c.tarMode(p, archives, lists)
	for _, a := range archives {
		if isRemote(a) && !p.has("--force-local") {
			n := net(airlock.ClassNetConnect, "reads or writes an archive on another host")
			c.raiseReads(&n, p.ops...)
			e = worse(e, n)
		}
	}
	if p.has("--rmt-command") {
		e = worse(e, net(airlock.ClassNetConnect, "runs a command on the host that holds the archive"))
	}
	w := write(airlock.ClassFSWrite, "writes tar's index, snapshot or volume file")
	if outs := p.values("--index-file", "-g", "--listed-incremental", "--volno-file"); len(outs) > 0 {
		c.raiseWrites(&w, outs...)
		e = worse(e, w)
	}
	return e
}

func (c *call) tarMode(p parsed, archives, lists []arg) effect {
	switch {
	case p.has("-x", "--extract", "--get"):
		if p.has("-O", "--to-stdout") || p.has("--to-command") {
			return read("prints the members of an archive")
		}
		if p.has("-P", "--absolute-names") {
			return admin("extracts an archive with absolute paths")
		}
		e := write(airlock.ClassFSWrite, "extracts an archive")
		if p.has("--recursive-unlink") {
			e = remove("extracts an archive, deleting the directories in its way")
		}
		dirs := p.values("-C", "--directory")
		if len(dirs) == 0 {
			dirs = []arg{literal(".")}
		}
		c.raiseWriteTree(&e, dirs[len(dirs)-1])
		return e
	case p.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate", "--delete"):
		e := write(airlock.ClassFSWrite, "writes an archive")
		if p.has("--remove-files") {
			e = remove("archives files, then deletes them")
			c.raiseWrites(&e, p.ops...)
		}
		c.raiseReads(&e, p.ops...)
		c.raiseReads(&e, p.values("--add-file")...)
		if !p.has("--no-recursion") {
			c.raiseReadTree(&e, p.ops...)
		}
		for _, l := range lists {
			c.raiseReads(&e, l)
			c.raiseReads(&e, c.stdinNames(l)...)
		}
		c.raiseWrites(&e, archives...)
		return e
	}
	e := read("lists an archive")
	c.raiseReads(&e, archives...)
	return e
}

// tarArgs turns tar's traditional first word ("xzvf a.tgz", "cIf prog
// a.tar") into options, each letter taking its value from the words that
// follow, in order.
func tarArgs(args []arg) []arg {
	if len(args) == 0 || !args[0].static || args[0].val == "" || strings.HasPrefix(args[0].val, "-") {
		return args
	}
	for _, ch := range args[0].val {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			return args
		}
	}
	var out []arg
	rest := args[1:]
	for _, ch := range args[0].val {
		out = append(out, literal("-"+string(ch)))
		if strings.ContainsRune(tarValueLetters, ch) && len(rest) > 0 {
			out = append(out, rest[0])
			rest = rest[1:]
		}
	}
	return append(out, rest...)
}

// unzip extracts into -d's directory; -p and -c print members, -l, -v, -t,
// -z and -Z list; -K keeps setuid bits and -: lets member names climb out
// of the directory.
func unzip(c *call) effect {
	p := getopt{short: "dP"}.parse(c.args)
	switch {
	case p.has("-p", "-c", "-l", "-v", "-t", "-z", "-Z"):
		e := read("lists or prints an archive")
		c.raiseReads(&e, p.ops...)
		return e
	case p.has("-K"):
		return admin("extracts an archive keeping its setuid and setgid bits")
	case p.has("-:"):
		return admin("extracts an archive whose member names may leave the directory (-:)")
	}
	e := write(airlock.ClassFSWrite, "extracts an archive")
	dir := literal(".")
	if d, ok := p.value("-d"); ok {
		dir = d
	}
	c.raiseWriteTree(&e, dir)
	return e
}

// zipValue are zip's options that take a value: zip spells some short
// options with two letters.
var zipValue = names("-b --temp-path -n --suffixes -t --from-date -tt --before-date -P --password -s --split-size " +
	"-O --output-file -TT --unzip-command -lf --logfile-path -Z --compression-method -sp -x -i -ds")

// zip writes its first operand, an archive of the others; -TT names the
// command that tests it, -lf a log file, -m deletes what it archives, -@
// reads names from its input.
func zip(c *call) effect {
	e := write(airlock.ClassFSWrite, "writes an archive")
	var ops, outs []arg
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		name, val, eq := strings.Cut(a.val, "=")
		if !a.static || !strings.HasPrefix(a.val, "-") || a.val == "-" {
			ops = append(ops, a)
			continue
		}
		if a.val == "--" {
			ops = append(ops, c.args[i+1:]...)
			break
		}
		if !slices.Contains(zipValue, name) {
			if a.val == "-m" || a.val == "--move" {
				e = remove("archives files, then deletes them")
			}
			continue
		}
		value := literal(val)
		if !eq {
			if i+1 >= len(c.args) {
				break
			}
			i++
			value = c.args[i]
		}
		switch name {
		case "-TT", "--unzip-command":
			c.runWords("zip -TT", []arg{value}, input{})
		case "-lf", "--logfile-path", "-O", "--output-file":
			outs = append(outs, value)
		case "-x", "-i": // a list of patterns, to the end or "@"
			for i+1 < len(c.args) && !strings.HasPrefix(c.args[i+1].val, "-") {
				i++
			}
		}
	}
	if len(ops) > 0 {
		outs = append(outs, ops[0])
		c.raiseReads(&e, ops[1:]...)
		if slices.ContainsFunc(c.args, func(a arg) bool {
			return a.static && (a.val == "--recurse-paths" || a.val == "-R" || a.val == "--recurse-patterns" ||
				len(a.val) > 1 && a.val[0] == '-' && a.val[1] != '-' && strings.ContainsRune(a.val, 'r'))
		}) {
			c.raiseReadTree(&e, ops[1:]...)
		}
	}
	if slices.ContainsFunc(c.args, func(a arg) bool { return a.static && a.val == "-@" }) {
		c.raiseReads(&e, c.stdinNames(literal("-"))...)
	}
	c.raiseWrites(&e, outs...)
	return e
}

// sevenZip: "7z COMMAND [switches] archive files"; switches may come
// anywhere: -o{dir} is where x and e extract, -so prints, -spf keeps
// absolute paths, -sdel deletes what it archives, @list and -i@list read
// names from a file.
func sevenZip(c *call) effect {
	var cmd string
	var ops, lists []arg
	dir := literal(".")
	sw := map[string]bool{}
	for _, a := range c.args {
		switch a = known(a); {
		case !a.static:
			ops = append(ops, a)
		case cmd == "" && !strings.HasPrefix(a.val, "-"):
			cmd = a.val
		case strings.HasPrefix(a.val, "-o"):
			dir = arg{val: a.val[2:], text: quote(a.val[2:]), static: true, glob: a.glob}
		case strings.HasPrefix(a.val, "-i@"), strings.HasPrefix(a.val, "-x@"):
			lists = append(lists, literal(a.val[3:]))
		case strings.HasPrefix(a.val, "@"):
			lists = append(lists, literal(a.val[1:]))
		case strings.HasPrefix(a.val, "-"):
			sw[strings.ToLower(a.val)] = true
		default:
			ops = append(ops, a)
		}
	}
	switch strings.ToLower(cmd) {
	case "", "l", "t", "i", "h", "b":
		e := read("lists, tests or hashes an archive")
		c.raiseReads(&e, ops...)
		return e
	case "x", "e":
		switch {
		case sw["-so"]:
			e := read("prints the members of an archive")
			c.raiseReads(&e, ops...)
			return e
		case sw["-spf"] || sw["-spf2"]:
			return admin("extracts an archive with absolute paths")
		}
		e := write(airlock.ClassFSWrite, "extracts an archive")
		c.raiseWriteTree(&e, dir)
		return e
	}
	e := write(airlock.ClassFSWrite, "writes an archive")
	if sw["-sdel"] {
		e = remove("archives files, then deletes them")
	}
	files := ops
	if !sw["-an"] && len(ops) > 0 {
		if !sw["-so"] {
			c.raiseWrites(&e, ops[0])
		}
		files = ops[1:]
	}
	if sw["-sdel"] {
		c.raiseWrites(&e, files...)
	}
	c.raiseReads(&e, files...)
	c.raiseReads(&e, lists...)
	c.raiseReadTree(&e, files...)
	return e
}

var cpioOpts = getopt{short: "CDEFHIMOR", long: names("--io-size --directory --pattern-file --file --format " +
	"--message --owner --rsh-command --block-size"), flags: names("--extract --create --pass-through --list " +
	"--to-stdout --no-absolute-filenames --make-directories --force-local")}

// cpio: -o archives the files its input names, -i extracts (keeping
// absolute member names unless --no-absolute-filenames), -p copies the
// files its input names into a directory. --rsh-command runs a command to
// reach an archive on another host (-F host:file).
func cpio(c *call) effect {
	p := cpioOpts.parse(c.args)
	for _, cmd := range p.values("--rsh-command") {
		c.runWords("cpio --rsh-command", []arg{cmd}, input{})
	}
	archives := p.values("-F", "--file", "-O", "-I")
	var e effect
	switch {
	case p.has("-t", "--list"):
		e = read("lists an archive")
	case p.has("-i", "--extract"):
		switch {
		case p.has("--to-stdout"):
			e = read("prints the members of an archive")
		case !p.has("--no-absolute-filenames"):
			e = admin("extracts an archive, keeping its absolute member names")
		default:
			e = write(airlock.ClassFSWrite, "extracts an archive")
			dir := literal(".")
			if d, ok := p.value("-D", "--directory"); ok {
				dir = d
			}
			c.raiseWriteTree(&e, dir)
		}
	case p.has("-p", "--pass-through"):
		e = write(airlock.ClassFSCopy, "copies the files its input names")
		for _, d := range p.ops {
			c.raiseWriteTree(&e, d)
		}
		c.raiseReads(&e, c.stdinNames(literal("-"))...)
	default:
		e = write(airlock.ClassFSWrite, "writes an archive of the files its input names")
		c.raiseReads(&e, c.stdinNames(literal("-"))...)
		c.raiseWrites(&e, p.values("-F", "--file", "-O")...)
	}
	c.raiseReads(&e, p.values("-E", "--pattern-file")...)
	for _, a := range archives {
		if isRemote(a) && !p.has("--force-local") {
			e = worse(e, net(airlock.ClassNetConnect, "reads or writes an archive on another host"))
		}
	}
	return e
}

// compressors: the options of each (a letter that takes a value for one is
// a flag for another), and the suffix it adds.
var compressors = map[string]struct {
	getopt
	suffix string
}{
	"gzip":  {getopt{short: "S", long: names("--suffix")}, ".gz"},
	"pigz":  {getopt{short: "bpSIJ", long: names("--blocksize --processes --suffix --iterations --maxsplits")}, ".gz"},
	"bzip2": {getopt{}, ".bz2"},
	"xz": {getopt{short: "SFCTM",
		long: names("--suffix --format --check --threads --memlimit --memory --block-size --block-list " +
			"--flush-timeout --memlimit-compress --memlimit-decompress --memlimit-mt --filters"),
		optLong: names("--files --files0")}, ".xz"},
	"zstd": {getopt{short: "oD", long: names("--output-dir-flat --output-dir-mirror --filelist --patch-from --trace")}, ".zst"},
	"lz4":  {getopt{}, ".lz4"},
	"brotli": {getopt{short: "oSqwD", long: names("--output --suffix --quality --lgwin --large_window --dictionary")},
		".br"},
	"compress": {getopt{short: "b"}, ".Z"},
}

// compressorOf maps each program to its compressor.
var compressorOf = map[string]string{
	"gzip": "gzip", "gunzip": "gzip", "zcat": "gzip", "pigz": "pigz", "unpigz": "pigz",
	"bzip2": "bzip2", "bunzip2": "bzip2", "bzcat": "bzip2", "pbzip2": "bzip2",
	"xz": "xz", "unxz": "xz", "xzcat": "xz", "lzma": "xz", "unlzma": "xz", "lzcat": "xz",
	"zstd": "zstd", "unzstd": "zstd", "zstdcat": "zstd", "lz4": "lz4", "unlz4": "lz4", "lz4cat": "lz4",
	"brotli": "brotli", "compress": "compress", "uncompress": "compress",
}

// compress replaces each file it is given with its (de)compressed form,
// next to it or where -o says; to standard output (-c, the *cat
// programs) it only reads.
func compress(c *call) effect {
	spec := compressors[compressorOf[c.name]]
	p := spec.parse(c.args)
	outs := p.values("-o", "--output", "--output-dir-flat", "--output-dir-mirror", "--trace")
	lists := p.values("--filelist", "--files", "--files0")
	e := read("reads compressed files")
	c.raiseReads(&e, p.values("-D", "--dictionary", "--patch-from")...)
	for _, l := range lists {
		c.raiseReads(&e, l)
	}
	toStdout := strings.HasSuffix(c.name, "cat") || p.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test")
	if len(outs) == 0 && (toStdout || len(p.ops) == 0 && len(lists) == 0) {
		c.raiseReads(&e, p.ops...)
		return e
	}
	w := write(airlock.ClassFSWrite, "replaces files with their (de)compressed form")
	suffix := spec.suffix
	if s, ok := p.value("-S", "--suffix"); ok {
		suffix = s.val
	}
	for _, op := range p.ops {
		c.raiseWrites(&w, op)
		if v, ok := op.pathValue(); ok {
			c.raiseWrites(&w, arg{val: v + suffix, static: true, glob: op.glob},
				arg{val: strings.TrimSuffix(v, suffix), static: true, glob: op.glob},
				arg{val: strings.TrimSuffix(v, path.Ext(v)), static: true, glob: op.glob})
		}
	}
	c.raiseWrites(&w, outs...)
	c.raiseReads(&w, p.ops...)
	return worse(e, w)
}

// dos2unix converts files in place, or into new files (-n IN OUT); with -O
// it prints, with -i it only reports.
func dos2unix(c *call) effect {
	p := getopt{short: "c", long: names("--convmode"), optLong: names("--info")}.parse(c.args)
	if p.has("-O", "--to-stdout", "-i", "--info") {
		e := read("prints converted text")
		c.raiseReads(&e, p.ops...)
		return e
	}
	e := write(airlock.ClassFSWrite, "converts files in place")
	c.raiseWrites(&e, p.ops...)
	return e
}

// Editors. An editor's own commands (vim's -c, emacs's --eval, ed's
// input) are code Airlock cannot fully parse: at least process.exec. The
// shell commands among them that it can see (vim's ":!cmd", emacs's
// shell-command, ed's "!cmd") are analysed, an interactive shell started
// with no visible input (":shell", (term "sh")) is unknown, and the paths
// the commands name are checked as files they may write.

// editorCode is the effect of editor commands Airlock cannot fully parse:
// the system paths they name may be written.
func (c *call) editorCode(reason, text string) effect {
	e := exec(reason)
	eachPath(text, func(tok string) bool {
		raiseWrite(c.cat, &e, c.resolve(tok), false)
		return e.tier >= airlock.TierPrivileged
	})
	return e
}

var vimOpts = getopt{short: "cSsuUiwWTtq", optShort: "VopO", long: names("--cmd --startuptime --log --servername " +
	"--remote-send --remote-expr --socketid --windowid --listen --server"),
	flags: names("--remote --remote-silent --remote-wait --remote-wait-silent --remote-tab --remote-tab-silent " +
		"--remote-tab-wait --remote-tab-wait-silent --serverlist --clean --noplugin --not-a-term --ttyfail " +
		"--headless --embed --api-info --version --help")}

// vim, vi, nvim, view, vimdiff and ex. Commands come from -c, --cmd and
// "+cmd" operands, from files (-S, -u, -s, nvim's -l), and in Ex mode (ex,
// -e, -E) from standard input; vim also takes keys from its input when it
// is not a terminal. -w, -W, -V, --log and --startuptime write files;
// --remote-send and --remote-expr make another vim run keys or code;
// nvim's --listen on a network address lets a peer do the same.
func vim(c *call) effect {
	exMode := c.name == "ex" || slices.ContainsFunc(c.args, func(a arg) bool {
		return a.static && len(a.val) > 1 && a.val[0] == '-' && a.val[1] != '-' && strings.ContainsAny(a.val, "eE")
	})
	g := vimOpts
	if exMode {
		g.short = strings.ReplaceAll(g.short, "s", "") // -s is silent mode
	}
	p := g.parse(c.args)
	e := write(airlock.ClassFSWrite, "edits files")
	if c.name == "view" || p.has("-R") {
		e = read("shows files")
	}
	var files, cmds []arg
	stdinText := false
	for _, op := range p.ops {
		switch {
		case op.static && op.val == "-":
			stdinText = true
		case op.static && strings.HasPrefix(op.val, "+"):
			if v := strings.TrimPrefix(op.val, "+"); strings.Trim(v, "0123456789") != "" && !strings.HasPrefix(v, "/") {
				cmds = append(cmds, arg{val: v, text: op.text, static: true})
			}
		default:
			files = append(files, op)
		}
	}
	if e.tier >= airlock.TierWrite {
		c.raiseWrites(&e, files...)
	}
	c.raiseReads(&e, files...)
	cmds = append(cmds, p.values("-c", "--cmd")...)
	for _, cmd := range cmds {
		e = worse(e, c.vimCommands(cmd))
	}
	for _, o := range p.opts {
		switch {
		case !o.has:
		case o.name == "--remote-expr":
			e = worse(e, c.vimCommands(arg{val: "echo " + o.val.val, static: o.val.static}))
		case o.name == "-S" || o.name == "-s" ||
			(o.name == "-u" || o.name == "-U") && !slices.Contains(names("NONE NORC DEFAULTS"), o.val.val):
			x := exec("runs editor commands from " + o.name + ", which Airlock cannot inspect")
			c.raiseReads(&x, o.val)
			e = worse(e, x)
		case o.name == "--remote-send":
			e = worse(e, c.vimKeys(o.val))
		case o.name == "-w" || o.name == "-W" || o.name == "--log" || o.name == "--startuptime" || o.name == "-i" ||
			o.name == "-V" && strings.TrimLeft(o.val.val, "0123456789") != "":
			w := write(airlock.ClassFSWrite, "writes a file given to "+o.name)
			c.raiseWrites(&w, arg{val: strings.TrimLeft(o.val.val, "0123456789"), static: o.val.static, text: o.val.text})
			e = worse(e, w)
		case o.name == "--listen" && netAddress(o.val.val):
			return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged,
				reason: "lets anyone who reaches " + o.val.text + " control the editor, and so run commands"}
		case o.name == "--server" && netAddress(o.val.val):
			e = worse(e, net(airlock.ClassNetConnect, "connects to an editor at "+o.val.text))
		}
	}
	if c.name == "nvim" && p.has("-l") && len(files) > 0 {
		x := exec("runs a Lua script, which Airlock cannot inspect")
		c.raiseReads(&x, files[0])
		e = worse(e, x)
	}
	if stdinText {
		return e
	}
	switch c.in.kind {
	case inText:
		if exMode {
			return worse(e, c.vimCommands(literal(c.in.text)))
		}
		return worse(e, c.vimKeys(literal(c.in.text)))
	case inPipe, inDynamic:
		return worse(e, unknown("runs editor commands read from its input, which can run shell commands"))
	case inFile:
		return worse(e, exec("runs editor commands from "+c.in.text+", which Airlock cannot inspect"))
	case inUnknown:
		if exMode && len(cmds) == 0 {
			return worse(e, unknown("runs editor commands read from standard input, which can run shell commands"))
		}
	}
	return e
}

// netAddress reports whether an address a program listens on or connects
// to is a network one (host:port) rather than a socket file.
func netAddress(v string) bool {
	return strings.Contains(v, ":") && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~")
}

// vimKeys classifies keys typed into vim: the Ex commands among them
// (":" up to the end of a line or <CR>) are classified as such.
func (c *call) vimKeys(keys arg) effect {
	if !keys.static {
		return exec("types keys only known at run time into the editor")
	}
	e := c.editorCode("types keys into the editor, which can run commands", keys.val)
	text := strings.NewReplacer("<CR>", "\n", "<cr>", "\n", "<Enter>", "\n", "\r", "\n").Replace(keys.val)
	for {
		i := strings.IndexByte(text, ':')
		if i < 0 {
			return e
		}
		text = text[i+1:]
		line, rest, _ := strings.Cut(text, "\n")
		e = worse(e, c.vimCommands(literal(line)))
		text = rest
	}
}

// vimCommands classifies vim Ex commands, one a line or separated by "|".
func (c *call) vimCommands(cmds arg) effect {
	if !cmds.static {
		return exec("runs editor commands only known at run time")
	}
	e := c.editorCode("runs editor commands, which Airlock cannot fully inspect", cmds.val)
	for _, line := range strings.Split(cmds.val, "\n") {
		e = worse(e, c.vimLine(line, 0))
	}
	return e
}

// vimLine classifies one line of Ex commands.
func (c *call) vimLine(line string, depth int) effect {
	var e effect
	if depth > 4 {
		return exec("runs nested editor commands")
	}
	for line != "" {
		cmd := strings.TrimLeft(line, " \t:")
		cmd = vimSkipRange(cmd)
		if strings.HasPrefix(cmd, "!") { // :!cmd, :{range}!filter: the rest of the line
			c.runsLine("vim", strings.TrimPrefix(cmd[1:], "!"))
			return e
		}
		name := cmd
		for i := 0; i < len(cmd); i++ {
			if ch := cmd[i]; !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
				name = cmd[:i]
				break
			}
		}
		if vimModifier(name) { // :silent !cmd, :sil! call system(...)
			line = strings.TrimLeft(strings.TrimPrefix(cmd[len(name):], "!"), " \t")
			continue
		}
		raw := cmd[len(name):]
		args := strings.TrimLeft(strings.TrimPrefix(raw, "!"), " \t")
		rest := ""
		if i := vimBar(args); i >= 0 && !vimTakesBar(name) {
			args, rest = args[:i], args[i+1:]
		}
		switch {
		case abbrev(name, "sh", "shell"):
			e = worse(e, unknown("starts an interactive shell"))
		case abbrev(name, "ter", "terminal"):
			for strings.HasPrefix(args, "++") {
				_, args, _ = strings.Cut(args, " ")
			}
			if strings.TrimSpace(args) == "" {
				e = worse(e, unknown("starts an interactive shell in a terminal window"))
			} else {
				c.runsLine("vim", args)
			}
		case abbrev(name, "r", "read") && strings.HasPrefix(strings.TrimLeft(raw, " \t"), "!"): // :r!cmd too
			c.runsLine("vim", strings.TrimLeft(raw, " \t")[1:])
		case abbrev(name, "w", "write"), abbrev(name, "up", "update"): // ":w !cmd"; ":w!cmd" writes file cmd
			if strings.HasPrefix(args, "!") {
				c.runsLine("vim", args[1:])
			}
		case abbrev(name, "mak", "make"), abbrev(name, "lmak", "lmake"):
			c.runsLine("vim", "make "+args)
		case abbrev(name, "gr", "grep"), abbrev(name, "lgr", "lgrep"):
			c.runsLine("vim", "grep "+args)
		case abbrev(name, "g", "global"), abbrev(name, "v", "vglobal"):
			if len(args) > 1 {
				if end := strings.IndexByte(args[1:], args[0]); end >= 0 {
					e = worse(e, c.vimLine(args[end+2:], depth+1))
				}
			}
		case abbrev(name, "norm", "normal"):
			e = worse(e, c.vimKeys(literal(args)))
		case abbrev(name, "exe", "execute"):
			if s, ok := vimStrings(args); ok {
				e = worse(e, c.vimLine(s, depth+1))
			}
		case abbrev(name, "se", "set"), abbrev(name, "setl", "setlocal"), abbrev(name, "setg", "setglobal"):
			for _, opt := range strings.Fields(strings.ReplaceAll(args, `\ `, "\x00")) {
				key, val, _ := strings.Cut(opt, "=")
				if slices.Contains(names(vimProgramOptions), strings.TrimRight(key, "+-^")) && val != "" {
					c.runsLine("vim", strings.ReplaceAll(val, "\x00", " "))
				}
			}
		case abbrev(name, "au", "autocmd"):
			if f := strings.Fields(args); len(f) > 2 {
				e = worse(e, c.vimLine(strings.Join(f[2:], " ")+"|"+rest, depth+1))
				rest = ""
			}
		}
		for _, s := range vimSystemCalls(args) {
			c.runsLine("vim", s)
		}
		for _, argv := range vimSystemLists(args) {
			c.run("vim system", argv, effect{})
		}
		line = rest
	}
	return e
}

// vimProgramOptions are the options that name a program vim runs.
const vimProgramOptions = "shell sh makeprg mp grepprg gp keywordprg kp equalprg ep formatprg fp"

// runsLine analyses a shell command line that a program runs from its own
// language (vim's ":!cmd", ed's "!cmd", awk's system("cmd")). What does
// not parse is an unknown command rather than an error: the program's
// quoting is not the shell's.
func (c *call) runsLine(via, cmd string) {
	n := c.runScript(via, strings.TrimSpace(cmd), input{})
	n.lenient = true
}

// vimSkipRange skips the range before an Ex command: "%", "1,$", ".,+3",
// "'a,'b", "/pat/".
func vimSkipRange(cmd string) string {
	for cmd != "" {
		switch ch := cmd[0]; {
		case strings.IndexByte("0123456789.,;$%+- \t", ch) >= 0:
			cmd = cmd[1:]
		case ch == '\'' && len(cmd) > 1:
			cmd = cmd[2:]
		case ch == '/' || ch == '?':
			end := strings.IndexByte(cmd[1:], ch)
			if end < 0 {
				return ""
			}
			cmd = cmd[end+2:]
		default:
			return cmd
		}
	}
	return cmd
}

// abbrev reports whether name is the command or option full, cut to at
// least short ("w", "wri", "write" for vim's write).
func abbrev(name, short, full string) bool {
	return strings.HasPrefix(name, short) && strings.HasPrefix(full, name)
}

// vimModifier reports whether name is a command modifier, followed by the
// command it modifies.
func vimModifier(name string) bool {
	for _, m := range [][2]string{{"sil", "silent"}, {"uns", "unsilent"}, {"verb", "verbose"}, {"noa", "noautocmd"},
		{"keepa", "keepalt"}, {"keepj", "keepjumps"}, {"loc", "lockmarks"}, {"nos", "noswapfile"},
		{"kee", "keepmarks"}, {"keepp", "keeppatterns"}, {"vert", "vertical"}, {"hor", "horizontal"},
		{"lefta", "leftabove"}, {"abo", "aboveleft"}, {"rightb", "rightbelow"}, {"bel", "belowright"},
		{"to", "topleft"}, {"bo", "botright"}, {"tab", "tab"}, {"bro", "browse"}, {"conf", "confirm"},
		{"hid", "hide"}, {"sandbox", "sandbox"}, {"leg", "legacy"}, {"vim9", "vim9cmd"}} {
		if abbrev(name, m[0], m[1]) {
			return true
		}
	}
	return false
}

// vimBar returns the index of the "|" that ends a command, outside quotes
// and not escaped, or -1.
func vimBar(args string) int {
	quote := byte(0)
	for i := 0; i < len(args); i++ {
		switch ch := args[i]; {
		case ch == '\\' && quote != '\'':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '|':
			return i
		}
	}
	return -1
}

// vimTakesBar reports whether a command takes "|" as part of its argument.
func vimTakesBar(name string) bool {
	for _, c := range [][2]string{{"norm", "normal"}, {"g", "global"}, {"v", "vglobal"}, {"r", "read"},
		{"w", "write"}, {"ter", "terminal"}, {"au", "autocmd"}, {"com", "command"}, {"exe", "execute"}} {
		if abbrev(name, c[0], c[1]) {
			return true
		}
	}
	return false
}

// vimStrings joins the string literals of an :execute argument; ok is
// false when it holds anything else.
func vimStrings(args string) (string, bool) {
	var b strings.Builder
	for args = strings.TrimSpace(args); args != ""; args = strings.TrimLeft(args, " \t.") {
		q := args[0]
		if q != '"' && q != '\'' {
			return "", false
		}
		end := strings.IndexByte(args[1:], q)
		if end < 0 {
			return "", false
		}
		b.WriteString(args[1 : end+1])
		args = args[end+2:]
	}
	return b.String(), true
}

// vimSystemCalls returns the commands a vim expression runs as string
// literals: system("cmd"), systemlist('cmd'), job_start("cmd").
func vimSystemCalls(expr string) []string {
	var cmds []string
	for _, m := range vimSystemCall().FindAllStringSubmatch(expr, -1) {
		cmds = append(cmds, m[1]+m[2])
	}
	return cmds
}

// vimSystemLists returns the commands a vim expression runs as lists of
// string literals, without a shell: system(['rm', '-rf', '~']).
func vimSystemLists(expr string) [][]arg {
	var out [][]arg
	for _, m := range vimSystemList().FindAllStringSubmatch(expr, -1) {
		var argv []arg
		for _, w := range vimListItem().FindAllStringSubmatch(m[1], -1) {
			argv = append(argv, literal(w[1]+w[2]))
		}
		out = append(out, argv)
	}
	return out
}

var (
	vimSystemList = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:system|systemlist|job_start|jobstart|termopen|term_start)\s*\(\s*\[([^\]]*)\]`)
	})
	vimListItem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"([^"]*)"|'([^']*)'`) })
)

var vimSystemCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:system|systemlist|job_start|jobstart|termopen|term_start)\s*\(\s*(?:"([^"]*)"|'([^']*)')`)
})

var nanoOpts = getopt{short: "sfoCYXTrQJ", long: names("--speller --rcfile --operatingdir --backupdir --syntax " +
	"--wordchars --tabsize --fill --quotestr --guidestripe")}

// nano and pico run the spell checker -s names; nano's rcfile can name a
// speller, formatter and linter.
func nano(c *call) effect {
	g := nanoOpts
	if c.name == "pico" {
		g = getopt{short: "so", optShort: "nr"}
	}
	p := g.parse(c.args)
	for _, s := range p.values("-s", "--speller") {
		c.runWords(c.name+" --speller", []arg{s}, input{})
	}
	e := write(airlock.ClassFSWrite, "edits files")
	var files []arg
	for _, op := range p.ops {
		if !op.static || !strings.HasPrefix(op.val, "+") {
			files = append(files, op)
		}
	}
	c.raiseWrites(&e, files...)
	c.raiseWrites(&e, p.values("-C", "--backupdir")...)
	if rc := p.values("-f", "--rcfile"); len(rc) > 0 {
		x := exec("takes an rcfile, which can name programs to run")
		c.raiseReads(&x, rc...)
		e = worse(e, x)
	}
	return e
}

// emacsValue are the emacs options that take a value, besides those
// emacs classifies.
const emacsValue = "chdir directory L terminal t display d init-directory dump-file fg bg bd bw font fn geometry " +
	"name title T xrm cr ms ib lsp parent-id seccomp foreground-color background-color border-color border-width " +
	"internal-border color"

// emacs runs Lisp from --eval, -l, --script and -f; -u loads another
// user's init file; --insert reads a file into the buffer.
func emacs(c *call) effect {
	e := write(airlock.ClassFSWrite, "edits files")
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		v := strings.TrimPrefix(strings.TrimPrefix(a.val, "-"), "-")
		if !a.static || !strings.HasPrefix(a.val, "-") || v == "" {
			if !strings.HasPrefix(a.val, "+") {
				c.raiseWrites(&e, a)
			}
			continue
		}
		if a.val == "--" {
			c.raiseWrites(&e, c.args[i+1:]...)
			break
		}
		name, val, eq := strings.Cut(v, "=")
		value := literal(val)
		if !eq && i+1 < len(c.args) {
			value = c.args[i+1]
		}
		takes := true
		switch {
		case abbrev(name, "ev", "eval"), abbrev(name, "exe", "execute"):
			e = worse(e, c.elisp(value))
		case name == "l", abbrev(name, "lo", "load"), abbrev(name, "scr", "script"), name == "x":
			x := exec("runs Lisp from a file, which Airlock cannot inspect")
			c.raiseReads(&x, value)
			e = worse(e, x)
			takes = name != "x"
		case name == "f", abbrev(name, "fu", "funcall"):
			e = worse(e, c.elispFunction(value))
		case name == "u", abbrev(name, "us", "user"):
			e = worse(e, exec("loads the init file of user "+value.text+", which Airlock cannot inspect"))
		case abbrev(name, "ins", "insert"):
			c.raiseReads(&e, value)
		case abbrev(name, "fi", "file"), abbrev(name, "find", "find-file"), abbrev(name, "vi", "visit"):
			c.raiseWrites(&e, value)
		default:
			takes = slices.Contains(names(emacsValue), name)
		}
		if takes && !eq {
			i++
		}
	}
	return e
}

// elisp classifies Lisp emacs evaluates: the shell commands it gives as
// strings are analysed, an interactive shell is unknown.
func (c *call) elisp(code arg) effect {
	if !code.static {
		return exec("evaluates Lisp only known at run time")
	}
	e := c.editorCode("evaluates Lisp, which Airlock cannot fully inspect", code.val)
	for _, m := range elispShellCommand().FindAllStringSubmatch(code.val, -1) {
		c.runsLine("emacs "+m[1], strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2]))
	}
	if elispShell().MatchString(code.val) {
		e = worse(e, unknown("starts an interactive shell"))
	}
	return e
}

// elispFunction classifies a function emacs -f calls.
func (c *call) elispFunction(f arg) effect {
	if f.static && slices.Contains(names("shell eshell term ansi-term vterm"), f.val) {
		return unknown("starts an interactive shell")
	}
	return exec("calls Lisp function " + f.text)
}

var (
	elispShellCommand = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\((shell-command|shell-command-to-string|async-shell-command|` +
			`call-process-shell-command|compile)\s+"((?:[^"\\]|\\.)*)"`)
	})
	elispShell = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\((shell|eshell|term|ansi-term|vterm|make-term)[\s)]`)
	})
)

// ed edits a file with commands it reads from standard input, whose "!"
// runs shell commands; a file operand starting with "!" is a command whose
// output it reads. -r (restricted) refuses both.
func ed(c *call) effect {
	p := getopt{short: "p", long: names("--prompt")}.parse(c.args)
	e := write(airlock.ClassFSWrite, "edits files")
	restricted := p.has("-r", "--restricted")
	for _, op := range p.ops {
		if op.static && strings.HasPrefix(op.val, "!") && !restricted {
			c.runsLine("ed !", op.val[1:])
			continue
		}
		c.raiseWrites(&e, op)
	}
	switch c.in.kind {
	case inText:
		return worse(e, c.edScript(c.in.text, restricted))
	case inNull:
		return e
	case inFile:
		return worse(e, exec("runs editor commands from "+c.in.text+", which Airlock cannot inspect"))
	}
	if restricted {
		return worse(e, exec("runs editor commands read from its input"))
	}
	return worse(e, unknown("runs editor commands read from its input, which can run shell commands"))
}

// edScript classifies an ed script: "!cmd", "e !cmd", "r !cmd" and
// "w !cmd" run shell commands; "w file" and "r file" write and read. The
// text that a, i and c insert, up to a line ".", is not commands.
func (c *call) edScript(script string, restricted bool) effect {
	e := c.editorCode("runs editor commands", script)
	inText := false
	for _, line := range strings.Split(script, "\n") {
		if inText {
			inText = line != "."
			continue
		}
		cmd := vimSkipRange(line)
		if cmd == "" {
			continue
		}
		letter, args := cmd[0], strings.TrimLeft(cmd[1:], " \t")
		switch {
		case strings.IndexByte("aic", letter) >= 0 && strings.TrimSpace(cmd[1:]) == "":
			inText = true
		case restricted:
		case letter == '!':
			c.runsLine("ed !", cmd[1:])
		case strings.IndexByte("eErwW", letter) >= 0 && strings.HasPrefix(strings.TrimLeft(args, "q"), "!"):
			c.runsLine("ed !", strings.TrimLeft(args, "q")[1:])
		case letter == 'r' && args != "":
			c.raiseReads(&e, literal(args))
		case letter == 'g' || letter == 'v' || letter == 'G' || letter == 'V':
			if strings.Contains(args, "!") {
				e = worse(e, exec("runs a global command that may run shell commands"))
			}
		}
	}
	return e
}

// kak runs Kakoune commands from -e and -E, whose %sh{...} expansions run
// shell commands; -f applies keys to files in place; -p sends the commands
// it reads to a session.
func kak(c *call) effect {
	e := write(airlock.ClassFSWrite, "edits files")
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !a.static || !strings.HasPrefix(a.val, "-") || a.val == "-" {
			if !strings.HasPrefix(a.val, "+") {
				c.raiseWrites(&e, a)
			}
			continue
		}
		if !slices.Contains(names("-e -E -f -p -c -s -ui -debug -i"), a.val) || i+1 >= len(c.args) {
			continue
		}
		i++
		v := c.args[i]
		switch a.val {
		case "-e", "-E":
			e = worse(e, c.kakCommands(v))
		case "-f":
			e = worse(e, c.editorCode("applies keys to files, which can run shell commands", v.val))
		case "-p":
			switch c.in.kind {
			case inText:
				e = worse(e, c.kakCommands(literal(c.in.text)))
			case inNull:
			default:
				e = worse(e, unknown("sends commands read from its input to an editor session"))
			}
		}
	}
	return e
}

// kakCommands analyses the shell commands of %sh{...} expansions (any
// delimiter: %sh(...), %sh|...|).
func (c *call) kakCommands(cmds arg) effect {
	if !cmds.static {
		return exec("runs editor commands only known at run time")
	}
	e := c.editorCode("runs editor commands, which Airlock cannot fully inspect", cmds.val)
	s := cmds.val
	for {
		i := strings.Index(s, "%sh")
		if i < 0 || i+3 >= len(s) {
			return e
		}
		open := s[i+3]
		closing := map[byte]byte{'{': '}', '(': ')', '[': ']', '<': '>'}[open]
		if closing == 0 {
			closing = open
		}
		depth, j := 1, i+4
		for ; j < len(s) && depth > 0; j++ {
			switch {
			case s[j] == closing:
				depth--
			case s[j] == open && open != closing:
				depth++
			}
		}
		c.runsLine("kak %sh", s[i+4:max(j-1, i+4)])
		s = s[j:]
	}
}

// micro installs plugins from the network with -plugin; -config-dir's
// init.lua is code.
func micro(c *call) effect {
	e := write(airlock.ClassFSWrite, "edits files")
	for i, a := range c.args {
		next := ""
		if i+1 < len(c.args) {
			next = c.args[i+1].val
		}
		switch a.val {
		case "-plugin":
			switch next {
			case "install", "update", "search", "available":
				return install(airlock.TierNetworkEgress, "downloads editor plugins")
			}
			return write(airlock.ClassFSWrite, "manages editor plugins")
		case "-config-dir":
			e = worse(e, exec("runs the configuration in "+c.args[min(i+1, len(c.args)-1)].text+", which Airlock cannot inspect"))
		}
	}
	return e
}

// helix fetches and builds syntax grammars with -g; --log writes a file.
func helix(c *call) effect {
	p := getopt{short: "cgw", long: names("--config --log --grammar --working-dir --health")}.parse(c.args)
	if g, ok := p.value("-g", "--grammar"); ok {
		return net(airlock.ClassNetHTTP, "downloads and builds syntax grammars ("+g.text+")")
	}
	e := write(airlock.ClassFSWrite, "edits files")
	c.raiseWrites(&e, p.ops...)
	c.raiseWrites(&e, p.values("--log")...)
	c.raiseReads(&e, p.values("-c", "--config")...)
	return e
}

// code is Visual Studio Code's command line: tunnel and serve-web give a
// remote client the machine, extensions are downloaded code, an MCP server
// is a command it will run.
func code(c *call) effect {
	sub := ""
	if len(c.args) > 0 && c.args[0].static {
		sub = c.args[0].val
	}
	switch sub {
	case "tunnel", "serve-web":
		if len(c.args) > 1 && slices.Contains(names("status --help -h"), c.args[1].val) {
			return read("shows the tunnel's status")
		}
		return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged,
			reason: "lets a remote client use this machine, its files and a shell (code " + sub + ")"}
	case "chat":
		return net(airlock.ClassNetHTTP, "sends a prompt to a chat service")
	}
	p := getopt{long: names("--install-extension --uninstall-extension --add-mcp --inspect-extensions " +
		"--inspect-brk-extensions --remote --folder-uri --file-uri --user-data-dir --extensions-dir --profile " +
		"--locale --log --sync --goto")}.parse(c.args)
	switch {
	case p.has("--add-mcp"):
		return effect{class: airlock.ClassFSWrite, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged,
			reason: "adds an MCP server, a command the editor will run"}
	case p.has("--inspect-extensions", "--inspect-brk-extensions"):
		return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged,
			reason: "opens a debugging port that runs code for whoever connects"}
	case p.has("--install-extension"):
		return install(airlock.TierNetworkEgress, "downloads and installs editor extensions")
	case p.has("--remote", "--folder-uri", "--file-uri"):
		return net(airlock.ClassNetConnect, "opens files on another machine")
	}
	return editorFiles(c, p.ops)
}

// subl runs Sublime Text commands with --command; "exec" runs shell_cmd.
func subl(c *call) effect {
	p := getopt{long: names("--command --project")}.parse(c.args)
	e := editorFiles(c, p.ops)
	for _, cmd := range p.values("--command") {
		if !cmd.static {
			e = worse(e, exec("runs an editor command only known at run time"))
			continue
		}
		e = worse(e, c.editorCode("runs an editor command", cmd.val))
		for _, m := range sublShellCmd().FindAllStringSubmatch(cmd.val, -1) {
			c.runsLine("subl exec", strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[1]))
		}
	}
	return e
}

var sublShellCmd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"shell_cmd"\s*:\s*"((?:[^"\\]|\\.)*)"`) })

// editorFiles is an editor opening files: it may write them.
func editorFiles(c *call, ops []arg) effect {
	e := write(airlock.ClassFSWrite, "edits files")
	for _, op := range ops {
		if !strings.HasPrefix(op.val, "+") {
			c.raiseWrites(&e, op)
		}
	}
	return e
}

// editor is an editor with no option that runs commands: it writes the
// files it opens.
func editor(c *call) effect { return editorFiles(c, c.operands()) }

// Listing programs with options that read, write, run or change things.

// file prints the type of files; -f reads names from a file (printing
// them), -m reads magic files (printing what does not parse), -C writes
// magic.mgc.
func file(c *call) effect {
	p := getopt{short: "mefFP", long: names("--magic-file --exclude --exclude-quiet --files-from --separator " +
		"--parameter"), flags: names("--compile")}.parse(c.args)
	e := read("shows file types")
	c.raiseReads(&e, p.values("-f", "--files-from")...)
	for _, m := range p.values("-m", "--magic-file") {
		for _, f := range strings.Split(m.val, ":") {
			c.raiseReads(&e, arg{val: f, static: m.static, glob: m.glob})
		}
	}
	if p.has("-C", "--compile") {
		w := write(airlock.ClassFSWrite, "compiles magic files into magic.mgc")
		e = worse(e, w)
	}
	return e
}

// tree lists directories; -o writes its listing to a file, --fromfile
// lists the lines of its operands, and the HTML intro and outro files are
// copied into its output.
func tree(c *call) effect {
	p := getopt{short: "LPIHTo", long: names("--charset --filelimit --timefmt --sort --hintro --houtro --gitfile " +
		"--infofile")}.parse(c.args)
	t := tool{reason: "lists directories", meta: !p.has("--fromfile"), getopt: getopt{roles: map[string]role{"-o": writesFile, "--hintro": sendsFile, "--houtro": sendsFile, "--gitfile": sendsFile, "--infofile": sendsFile}}}
	return t.classify(c, p)
}

// last and lastb read the login records of -f's file and print them, in
// part, whatever the file holds; who and users read the file they are
// given.
var lastRecords = tool{reason: "shows login records", meta: true,
	getopt: getopt{short: "fnstp", long: names("--file --limit --since --until --present --time-format"),
		roles: map[string]role{"-f": sendsFile, "--file": sendsFile}}}

var whoRecords = tool{reason: "shows who is logged in", getopt: getopt{}}

// lastlog changes the lastlog file with -C and -S.
func lastlog(c *call) effect {
	p := getopt{short: "btuR", long: names("--before --time --user --root")}.parse(c.args)
	if p.has("-C", "--clear", "-S", "--set") {
		return admin("changes the lastlog records")
	}
	return read("shows last logins")
}

// ss lists sockets; -K closes them, -D dumps to a file, -F reads a filter
// file.
func ss(c *call) effect {
	p := getopt{short: "fADFN", long: names("--family --query --socket --diag --filter --net")}.parse(c.args)
	if p.has("-K", "--kill") {
		return kill("closes the sockets it matches")
	}
	t := tool{reason: "shows sockets", meta: true, getopt: getopt{roles: map[string]role{"-D": writesFile, "--diag": writesFile, "-F": sendsFile, "--filter": sendsFile}}}
	return t.classify(c, p)
}

// remoteSystemd is the effect of the -H option of systemd's tools, which
// runs them on another host over ssh.
func remoteSystemd(p parsed) (effect, bool) {
	if h, ok := p.value("-H", "--host"); ok {
		return net(airlock.ClassNetConnect, "runs on host "+h.text+" over ssh"), true
	}
	return effect{}, false
}

var busctlOpts = getopt{short: "HM", long: names("--host --machine --address --match --size --json --expect-reply " +
	"--auto-start --allow-interactive-authorization --timeout --augment-creds --watch-bind --destination")}

// busctl talks to a D-Bus bus: calling a method, setting a property or
// emitting a signal can do anything the service does (the system manager
// starts programs); monitor and capture record messages, passwords among
// them. --address=unixexec:path=... runs a program to reach the bus.
func busctl(c *call) effect {
	p := busctlOpts.parse(c.args)
	e := read("shows D-Bus services")
	for _, a := range p.values("--address") {
		e = worse(e, c.dbusAddress(a))
	}
	if n, ok := remoteSystemd(p); ok {
		e = worse(e, n)
	}
	sub := ""
	if len(p.ops) > 0 {
		sub = p.ops[0].val
	}
	switch sub {
	case "call", "emit", "set-property":
		if p.has("--user") {
			return worse(e, exec("calls methods on the user's bus, whose services can run programs"))
		}
		return worse(e, admin("calls methods on the system bus"))
	case "monitor", "capture":
		return worse(e, effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead,
			tier: airlock.TierPrivileged, reason: "records bus messages, which can carry passwords"})
	}
	return e
}

// dbusAddress classifies a D-Bus address: unixexec runs a program (path=,
// argv0=, argv1=...), tcp reaches the network.
func (c *call) dbusAddress(a arg) effect {
	if !a.static {
		return unknown("connects to a bus whose address is only known at run time")
	}
	var e effect
	for _, addr := range strings.Split(a.val, ";") {
		kind, params, _ := strings.Cut(addr, ":")
		switch kind {
		case "unixexec":
			argv := map[int]string{}
			prog := ""
			for _, kv := range strings.Split(params, ",") {
				k, v, _ := strings.Cut(kv, "=")
				v, _ = url.PathUnescape(v)
				if k == "path" {
					prog = v
				} else if n, ok := strings.CutPrefix(k, "argv"); ok {
					if i, err := strconv.Atoi(n); err == nil && i > 0 && i < 64 {
						argv[i] = v
					}
				}
			}
			words := []arg{literal(prog)}
			for i := 1; argv[i] != "" || i == 1 && len(argv) > 0; i++ {
				words = append(words, literal(argv[i]))
			}
			c.run("busctl --address", words, effect{})
		case "tcp", "nonce-tcp":
			e = worse(e, net(airlock.ClassNetConnect, "connects to a bus over the network"))
		}
	}
	return e
}

// loginctl manages login sessions: terminating and killing sessions and
// users is destructive; lingering (a user's services running without a
// login) and seats are the administrator's.
func loginctl(c *call) effect {
	p := getopt{short: "HMpPsnoa", long: names("--host --machine --property --kill-whom --signal --lines --output")}.parse(c.args)
	e := read("shows login sessions")
	if n, ok := remoteSystemd(p); ok {
		e = worse(e, n)
	}
	sub := ""
	if len(p.ops) > 0 {
		sub = p.ops[0].val
	}
	switch {
	case strings.HasPrefix(sub, "terminate-"), strings.HasPrefix(sub, "kill-"):
		return worse(e, kill("ends login sessions and their processes"))
	case sub == "enable-linger", sub == "disable-linger", sub == "attach", sub == "flush-devices":
		return worse(e, admin("changes login settings ("+sub+")"))
	case sub == "activate", strings.HasPrefix(sub, "lock-"), strings.HasPrefix(sub, "unlock-"):
		return worse(e, write(airlock.ClassSystemAdmin, "locks, unlocks or switches sessions"))
	}
	return e
}

// systemdAnalyze inspects the system manager; log-level, log-target and
// service-watchdogs with a value change it, and cat-config, verify and
// inspect-elf read the files they are given.
func systemdAnalyze(c *call) effect {
	p := getopt{short: "HM", long: names("--host --machine --root --image --security-policy --offline --threshold " +
		"--iterations --base-time --unit --profile --json --scale-svg --man --generators --recursive-errors " +
		"--image-policy --table --debugger --debugger-arguments --fuzz --from-pattern --to-pattern")}.parse(c.args)
	e := read("shows how the system manager started")
	if n, ok := remoteSystemd(p); ok {
		e = worse(e, n)
	}
	c.raiseReads(&e, p.values("--security-policy")...)
	if len(p.ops) == 0 {
		return e
	}
	switch sub := p.ops[0].val; sub {
	case "log-level", "log-target", "service-watchdogs", "set-log-level", "set-log-target":
		if len(p.ops) > 1 {
			return worse(e, admin("changes the system manager's "+strings.TrimPrefix(sub, "set-")))
		}
	case "cat-config", "verify", "inspect-elf", "security", "condition":
		c.raiseReads(&e, p.ops[1:]...)
	}
	return e
}

// ps: the BSD option "e" (ps e, ps auxe) prints the environment of every
// process it shows, where tokens and passwords live.
func ps(c *call) effect {
	p := getopt{short: "CGgopqstuUO", long: names("--pid --ppid --sid --tty --user --User --group --Group --format " +
		"--sort --cols --columns --lines --rows --width --quick-pid")}.parse(c.args)
	for i, op := range p.ops {
		if i > 0 && slices.Contains(names("o O p t U k q"), p.ops[i-1].val) {
			continue // the value of a BSD option
		}
		if op.static && strings.ContainsRune(op.val, 'e') && strings.Trim(op.val, "aAcCeEfgHhjlLmMnNoOpqrsStTuUvVwxXZ") == "" {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
				reason: "reads the environment of processes"}
		}
	}
	return read("shows processes")
}

// lshw writes a database of the hardware with -dump.
func lshw(c *call) effect {
	for i, a := range c.args {
		if a.static && (a.val == "-dump" || a.val == "--dump") && i+1 < len(c.args) {
			e := write(airlock.ClassFSWrite, "writes a hardware database")
			c.raiseWrites(&e, c.args[i+1])
			return e
		}
	}
	return read("shows hardware")
}

// nvidiaSMISettings are the nvidia-smi options that change a GPU.
const nvidiaSMISettings = "-pm --persistence-mode -e --ecc-config -p --reset-ecc-errors -c --compute-mode -dm " +
	"--driver-model -fdm --force-driver-model -r --gpu-reset -lgc --lock-gpu-clocks -rgc --reset-gpu-clocks " +
	"-lmc --lock-memory-clocks -rmc --reset-memory-clocks -ac --applications-clocks -rac " +
	"--reset-applications-clocks -acp --applications-clocks-permission -pl --power-limit -cc --cuda-clocks " +
	"-am --accounting-mode -caa --clear-accounted-apps --auto-boost-default --auto-boost-permission -mig " +
	"--multi-instance-gpu -gtt --gpu-target-temp"

// nvidiaSMI shows GPUs; its settings change them, -f writes its report.
func nvidiaSMI(c *call) effect {
	e := read("shows GPUs")
	for i, a := range c.args {
		name, val, eq := strings.Cut(a.val, "=")
		switch {
		case !a.static:
		case slices.Contains(names(nvidiaSMISettings), name), i == 0 && slices.Contains(names("drain mig "+
			"boost-slider power-hint conf-compute"), a.val):
			return admin("changes GPU settings")
		case name == "-f" || name == "--filename":
			w := write(airlock.ClassFSWrite, "writes its report to a file")
			if eq {
				c.raiseWrites(&w, literal(val))
			} else if i+1 < len(c.args) {
				c.raiseWrites(&w, c.args[i+1])
			}
			e = worse(e, w)
		}
	}
	return e
}

// sensors sets chip limits with -s; -c is a configuration it reads.
func sensors(c *call) effect {
	p := getopt{short: "c", long: names("--config-file")}.parse(c.args)
	if p.has("-s", "--set") {
		return admin("sets sensor limits")
	}
	e := read("shows sensors")
	c.raiseReads(&e, p.values("-c", "--config-file")...)
	return e
}

var blkid = tool{reason: "shows block devices", meta: true,
	getopt: getopt{short: "coStuLUsnpO", long: names("--cache-file --output --size --match-tag --usages --label " +
		"--uuid --match-token --match-types --probe --offset"),
		roles: map[string]role{"-c": writesFile, "--cache-file": writesFile}}}

var findmnt = tool{reason: "shows mounts", meta: true,
	getopt: getopt{short: "FNOotSTwdRMQH", long: names("--tab-file --task --options --output --types --source " +
		"--target --timeout --direction --mountpoint --filter --id --uniq-id --poll"),
		roles: map[string]role{"-F": sendsFile, "--tab-file": sendsFile}}}

var atop = tool{reason: "shows system activity", meta: true,
	getopt: getopt{short: "wrbeSPJ", roles: map[string]role{"-w": writesFile, "-r": sendsFile}}}

// stty changes the settings of a terminal; alone, or with -a or -g, it
// prints them.
func stty(c *call) effect {
	p := getopt{short: "F", long: names("--file")}.parse(c.args)
	if len(p.ops) == 0 {
		return read("shows terminal settings")
	}
	return write(airlock.ClassSystemAdmin, "changes terminal settings")
}

// ldd runs the dynamic loader on programs, and some programs can take it
// over to run their own code: its manual warns never to run it on an
// untrusted executable.
func ldd(c *call) effect {
	e := exec("runs the dynamic loader on programs, which can run their code")
	c.raiseReads(&e, c.operands()...)
	return e
}

// binutils are nm, objdump, readelf and size: they read (and print parts
// of) any file; --plugin loads a library.
func binutils(c *call) effect {
	p := getopt{short: "tjJMbmeI", long: names("--plugin --target --section --format --radix --size-format " +
		"--debug-dump --dwarf --dwarf-depth --dwarf-start --string-dump --hex-dump --relocated-dump " +
		"--architecture --disassembler-options --start-address --stop-address --prefix --prefix-strip " +
		"--debug-file-directory --disassemble --visualize-jumps --ctf --ctf-parent --sframe --insn-width " +
		"--source-comment --disassembler-color")}.parse(c.args)
	e := read("shows the contents of object files")
	c.raiseReads(&e, p.ops...)
	if p.has("--plugin") {
		x := exec("loads a plugin library")
		e = worse(e, x)
	}
	return e
}

var manConfig = tool{reason: "searches manual pages", meta: true,
	getopt: getopt{short: "CLmMs", long: names("--config-file --locale --systems --manpath --sections"),
		roles: map[string]role{"-C": sendsFile, "--config-file": sendsFile}}}

var lspci = tool{reason: "shows PCI devices", meta: true,
	getopt: getopt{short: "FipOsdAH", roles: map[string]role{"-F": sendsFile, "-i": sendsFile, "-p": sendsFile}}}

var iftop = tool{reason: "shows network traffic", meta: true, getopt: getopt{short: "ifFcmNoLu",
	roles: map[string]role{"-c": sendsFile}}}

var sshKeygenOpts = getopt{short: "CDEFGIJMNOPRVWYZabfjmnrstwz"}

// sshKeygen: -D and -w load a PKCS#11 or security key library; creating
// or changing a key, hashing or editing known_hosts and -A's host keys
// write under ~/.ssh or /etc/ssh.
func sshKeygen(c *call) effect {
	p := sshKeygenOpts.parse(c.args)
	if p.has("-D", "-w") {
		return loadsNative("loads a PKCS#11 or security key library, which runs any code with the program's rights")
	}
	file, hasFile := p.value("-f")
	switch {
	case p.has("-y", "-e", "-i"):
		e := read("exports a key")
		if hasFile {
			c.raiseReads(&e, file)
		}
		return e
	case p.has("-l", "-L", "-F", "-B", "-r", "-Q"):
		return read("shows key fingerprints or known hosts")
	case p.has("-Y"):
		if y, _ := p.value("-Y"); y.val != "sign" {
			return read("verifies signatures")
		}
		e := write(airlock.ClassFSWrite, "signs files")
		c.raiseWrites(&e, p.ops...)
		return e
	case p.has("-A"):
		e := write(airlock.ClassFSWrite, "creates host keys")
		dir := literal("")
		if hasFile {
			dir = file
		}
		c.raiseWrites(&e, literal(dir.val+"/etc/ssh/ssh_host_key"))
		return e
	case p.has("-R", "-H"):
		e := write(airlock.ClassFSWrite, "changes known_hosts")
		if !hasFile {
			file = literal("~/.ssh/known_hosts")
		}
		c.raiseWrites(&e, file)
		return e
	case p.has("-M", "-k", "-K"):
		e := write(airlock.ClassFSWrite, "writes keys, moduli or revocation lists")
		c.raiseWrites(&e, p.ops...)
		if hasFile {
			c.raiseWrites(&e, file)
		}
		return e
	}
	e := write(airlock.ClassFSWrite, "creates or changes a key")
	if !hasFile {
		file = literal("~/.ssh/id")
	}
	c.raiseWrites(&e, file)
	c.raiseWrites(&e, p.ops...)
	return e
}

// sshAdd adds keys to the agent; -s and -S load a PKCS#11 or security key
// library, -d and -D remove keys, -x and -X lock the agent.
func sshAdd(c *call) effect {
	p := getopt{short: "sSeEtHh"}.parse(c.args)
	switch {
	case p.has("-s", "-S", "-e"):
		return loadsNative("loads a PKCS#11 or security key library, which runs any code with the program's rights")
	case p.has("-d", "-D", "-x", "-X"):
		return write(airlock.ClassFSWrite, "removes keys from the agent, or locks it")
	case p.has("-l", "-L", "-T"):
		return read("lists or tests the agent's keys")
	}
	e := read("adds keys to the agent")
	c.raiseReads(&e, p.ops...)
	return e
}

// getent looks up system databases: shadow and gshadow hold password
// hashes, and looking up a host name asks DNS.
func getent(c *call) effect {
	p := getopt{short: "s", long: names("--service")}.parse(c.args)
	if len(p.ops) > 0 {
		switch db := p.ops[0].val; db {
		case "shadow", "gshadow":
			return readsSecret("/etc/"+db, "credentials")
		case "hosts", "ahosts", "ahostsv4", "ahostsv6":
			if len(p.ops) > 1 {
				return net(airlock.ClassNetConnect, "looks up host names (DNS)")
			}
		}
	}
	return read("looks up system databases")
}

// securityReads are the subcommands of macOS security that only show
// information.
const securityReads = "help show-keychain-info find-certificate " +
	"find-identity find-generic-password find-internet-password find-key dump-trust-settings verify-cert error " +
	"leaks requirement-evaluate cms smartcards"

// security is macOS's keychain tool: printing passwords or exporting keys
// reads secrets; anything that is not a lookup changes the keychain or
// trust settings; -i reads commands from its input.
func security(c *call) effect {
	p := getopt{short: "p"}.parse(c.args)
	if p.has("-i") && c.in.kind != inNull {
		return unknown("runs keychain commands read from its input")
	}
	if len(p.ops) == 0 {
		return read("shows help")
	}
	sub, rest := p.ops[0].val, p.ops[1:]
	sp := getopt{short: "acCdDkpPrsStTw"}.parse(c.args[slices.IndexFunc(c.args, func(a arg) bool { return a.val == sub })+1:])
	switch {
	case sub == "export", sub == "dump-keychain",
		strings.HasPrefix(sub, "find-") && strings.HasSuffix(sub, "-password") && sp.has("-w", "-g"):
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads secrets from the keychain"}
	case sub == "execute-with-privileges" && len(rest) > 0:
		c.run("security execute-with-privileges", rest, admin("runs as root"))
		return effect{none: true}
	case sub == "authorizationdb" && len(rest) > 0 && rest[0].val == "read":
		return read("shows authorization rules")
	case sub == "list-keychains" || sub == "default-keychain" || sub == "login-keychain":
		if !sp.has("-s") { // -s sets them
			return read("shows keychains")
		}
	case slices.Contains(names(securityReads), sub):
		return read("shows keychain information")
	}
	return admin("changes the keychain or trust settings")
}

// pass reads, writes and deletes passwords in the store; "pass NAME"
// shows one; grep decrypts them all; git runs git in the store.
func pass(c *call) effect {
	sub := ""
	if len(c.args) > 0 {
		sub = c.args[0].val
	}
	switch sub {
	case "", "ls", "list", "find", "search", "version", "help", "--help", "--version":
		return read("lists stored passwords")
	case "show":
		if len(operands(c.args[1:], "--clip", "-c", "--qrcode", "-q")) == 0 {
			return read("lists stored passwords")
		}
	case "insert", "add", "edit", "generate", "init", "mv", "rename", "cp", "copy":
		return write(airlock.ClassFSWrite, "changes the password store")
	case "git":
		n := c.run("pass git", append([]arg{literal("git")}, c.args[1:]...), effect{})
		n.cwd, n.setCwd = "~/.password-store", true
		return write(airlock.ClassFSWrite, "runs git in the password store")
	case "rm", "remove", "delete":
		return remove("deletes stored passwords")
	}
	return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads stored passwords"}
}

var gpgOpts = getopt{short: "oruzfN",
	long: names("--output --recipient --local-user --homedir --keyserver --keyserver-options --photo-viewer " +
		"--agent-program --dirmngr-program --exec-path --options --log-file --logger-file --status-file " +
		"--attribute-file --command-file --passphrase --passphrase-file --passphrase-fd --command-fd --status-fd " +
		"--logger-fd --attribute-fd --default-key --trust-model --cipher-algo --digest-algo --compress-algo " +
		"--set-filename --recipient-file --hidden-recipient-file --sender --set-filesize --max-output --comment " +
		"--hidden-recipient --encrypt-to --default-recipient --trusted-key --keyring --secret-keyring " +
		"--primary-keyring --list-options --import-options --export-options --import-filter --export-filter " +
		"--auto-key-locate --pinentry-mode --compliance --sig-keyserver-url --default-keyserver-url"),
	flags: names(gpgSecretExports + " " + gpgNetwork + " " + gpgChanges + " --decrypt --decrypt-files --list-keys " +
		"--list-secret-keys --verify --export --with-secret --dump-options --sign --encrypt --symmetric")}

const (
	gpgSecretExports = "--export-secret-keys --export-secret-subkeys"
	gpgNetwork       = "--send-keys --recv-keys --receive-keys --search-keys --refresh-keys --locate-keys " +
		"--locate-external-keys --fetch-keys"
	gpgChanges = "--import --fast-import --import-ownertrust --delete-keys --delete-secret-keys " +
		"--delete-secret-and-public-keys --generate-key --gen-key --quick-generate-key --quick-gen-key " +
		"--full-generate-key --full-gen-key --quick-add-key --quick-add-uid --quick-revoke-uid --quick-set-expire " +
		"--quick-set-primary-uid --sign-key --lsign-key --quick-sign-key --quick-lsign-key --edit-key --key-edit " +
		"--change-passphrase --passwd --generate-revocation --gen-revoke --edit-card --card-edit --update-trustdb " +
		"--check-trustdb --import-options"
)

// gpg: exporting secret keys and decrypting read secrets; key servers are
// the network; --photo-viewer, --agent-program and --dirmngr-program name
// programs it runs, and --options and --exec-path can; -o, --log-file and
// --status-file are files it writes.
func gpg(c *call) effect {
	p := gpgOpts.parse(c.args)
	for _, o := range p.opts {
		if o.has && slices.Contains(names("--photo-viewer --agent-program --dirmngr-program"), o.name) {
			c.runWords("gpg "+o.name, []arg{o.val}, input{})
		}
	}
	e := read("checks signatures or lists keys")
	switch {
	case p.has(names(gpgSecretExports)...):
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
			reason: "exports secret keys"}
	case p.has("-d", "--decrypt", "--decrypt-files"):
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
			reason: "decrypts with the user's secret keys"}
	case p.has(names(gpgNetwork)...) || p.has("--auto-key-locate", "--keyserver") && !p.has("--list-keys", "-k"):
		e = net(airlock.ClassNetConnect, "exchanges keys with a key server")
	case p.has(names(gpgChanges)...):
		e = write(airlock.ClassFSWrite, "changes the keyring")
		if p.has("--delete-secret-keys", "--delete-secret-and-public-keys") {
			e = remove("deletes secret keys")
		}
	case p.has("-s", "--sign", "-e", "--encrypt", "-c", "--symmetric", "--encrypt-files", "--clear-sign",
		"--clearsign", "-b", "--detach-sign", "--enarmor", "--dearmor"):
		e = write(airlock.ClassFSWrite, "writes encrypted or signed files")
	}
	c.raiseReads(&e, p.ops...)
	c.raiseReads(&e, p.values("--passphrase-file", "--command-file", "--recipient-file", "-f")...)
	if x := p.values("--options", "--exec-path"); len(x) > 0 {
		e = worse(e, exec("takes options or programs from "+x[0].text+", which can name programs it runs"))
	}
	w := write(airlock.ClassFSWrite, "writes its output, log or status to a file")
	if outs := p.values("-o", "--output", "--log-file", "--logger-file", "--status-file", "--attribute-file"); len(outs) > 0 {
		c.raiseWrites(&w, outs...)
		e = worse(e, w)
	}
	return e
}

// diff3 and sdiff run the program --diff-program names; sdiff -o merges
// into a file.
var diff3 = tool{reason: "compares files",
	getopt: getopt{short: "LIwo", long: names("--diff-program --label --output --ignore-matching-lines --width " +
		"--tabsize"),
		roles: map[string]role{"-o": writesFile, "--output": writesFile, "--diff-program": runsCommand}}}

// diffstat writes its report to -o's file and errors to -e's.
var diffstat = tool{reason: "summarises a diff",
	getopt: getopt{short: "oeDSfFNpmw",
		roles: map[string]role{"-o": writesFile, "-e": writesFile, "-D": sendsFile, "-S": sendsFile}}}

// xmllint fetches the documents, DTDs and schemas it names by URL (not
// with --nonet), writes --output, and runs the commands of its --shell.
func xmllint(c *call) effect {
	p := getopt{short: "o", long: names("--output --path --dtdvalid --dtdvalidfpi --relaxng --schema --schematron " +
		"--xpath --pattern --encode --maxmem --pretty --load-trace")}.parse(c.args)
	t := tool{reason: "checks XML", getopt: getopt{roles: map[string]role{"-o": writesFile, "--output": writesFile, "--dtdvalid": sendsFile, "--relaxng": sendsFile, "--schema": sendsFile, "--schematron": sendsFile}}}
	e := t.classify(c, p)
	if !p.has("--nonet") && slices.ContainsFunc(c.args, func(a arg) bool { return strings.Contains(a.val, "://") }) {
		e = worse(e, net(airlock.ClassNetHTTP, "fetches documents or schemas from the network"))
	}
	if p.has("--shell") {
		text := ""
		if c.in.kind == inText {
			text = c.in.text
		}
		e = worse(e, c.editorCode("runs xmllint shell commands, which can write files", text))
	}
	return e
}

// mlrDSL finds what a Miller DSL expression does: system() and exec() run
// commands, and tee, emit, print and dump redirect to files or commands.
var (
	mlrRun      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(?:system|exec)\s*\(\s*("(?:[^"\\]|\\.)*")?`) })
	mlrRedirect = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:tee|emit1?|emitp|emitf|print|printn|eprint|eprintn|dump|edump)\s*(>>|>|\|)\s*("(?:[^"\\]|\\.)*")?`)
	})
)

// mlr is Miller: its DSL (put, filter) can run commands and write files,
// --prepipe runs a command on every input, -I edits files in place, the
// tee and split verbs write files, --load loads DSL files.
func mlr(c *call) effect {
	e := read("processes records")
	for i, a := range c.args {
		if !a.static {
			continue
		}
		next := arg{}
		if i+1 < len(c.args) {
			next = c.args[i+1]
		}
		switch {
		case a.val == "--prepipe" || a.val == "--prepipex":
			c.runWords("mlr "+a.val, []arg{next}, input{})
		case a.val == "--load" || a.val == "--mload" || a.val == "-s":
			e = worse(e, exec("loads Miller code or flags from a file, which Airlock cannot inspect"))
		case a.val == "--from":
			c.raiseReads(&e, next)
		case a.val == "-I":
			w := write(airlock.ClassFSWrite, "edits files in place")
			c.raiseWrites(&w, c.args[i+1:]...)
			e = worse(e, w)
		case a.val == "tee" || a.val == "split":
			w := write(airlock.ClassFSWrite, "writes records to files ("+a.val+")")
			if a.val == "tee" {
				c.raiseWrites(&w, next)
			}
			e = worse(e, w)
		case a.val == "repl":
			e = worse(e, unknown("runs Miller code read from its input, which can run commands"))
		}
		for _, m := range mlrRun().FindAllStringSubmatch(a.val, -1) {
			if s, err := strconv.Unquote(m[1]); err == nil {
				c.runsLine("mlr system", s)
			} else {
				e = worse(e, exec("runs commands it builds at run time"))
			}
		}
		for _, m := range mlrRedirect().FindAllStringSubmatch(a.val, -1) {
			target, err := strconv.Unquote(m[2])
			switch {
			case m[1] == "|" && err == nil:
				c.runsLine("mlr |", target)
			case m[1] == "|":
				e = worse(e, exec("pipes records to a command it builds at run time"))
			default:
				w := write(airlock.ClassFSWrite, "writes records to a file")
				if err == nil {
					c.raiseWrites(&w, literal(target))
				}
				e = worse(e, w)
			}
		}
	}
	return e
}

// printenv prints the whole environment, or the variables it names: a
// variable named like a secret (GITHUB_TOKEN) is one.
func printenv(c *call) effect {
	vars := c.operands()
	if len(vars) == 0 {
		return printsEnvironment
	}
	for _, v := range vars {
		if !v.static || c.cat.SecretVar(v.val) || !harmlessVars[v.val] && v.val != "HOME" && v.val != "PWD" {
			return maySecret("prints the environment variable " + v.text + ", which may hold a secret")
		}
	}
	return read("prints environment variables")
}
