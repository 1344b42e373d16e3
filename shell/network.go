package shell

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Network: HTTP clients and downloaders, file transfer, raw connections,
// mail, database clients, and runners that download what they run.
//
// raiseNamed leaves effects at network-egress and above alone, so a network
// program's rule judges the files it reads: a file it sends or prints (an
// upload, a list of hosts it resolves, a script it reports the lines of in
// errors) is read out, and a secret makes the command privileged; a key it
// authenticates with (scp -i, curl --key) is not read out.

var netCommands = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"curl": curl, "wget": wget, "http": httpie, "https": httpie, "xh": httpie, "xhs": httpie,
		"aria2c": aria2c, "axel": axel,
		"scp": scp, "sftp": sftp, "rsync": rsync,
		"nc": netcat, "ncat": netcat, "netcat": netcat, "socat": socat,
		"telnet": telnet, "ftp": ftp, "tftp": tftp, "lftp": lftp,
		"ping": connect("sends network probes"), "ping6": connect("sends network probes"),
		"dig": client(digFlags, net(airlock.ClassNetConnect, "queries DNS")), "nslookup": connect("queries DNS"),
		"host": connect("queries DNS"), "drill": client(drillFlags, net(airlock.ClassNetConnect, "queries DNS")),
		"traceroute": connect("traces a network route"), "tracepath": connect("traces a network route"),
		"mtr":   client(mtrFlags, net(airlock.ClassNetConnect, "traces a network route")),
		"whois": connect("queries WHOIS"), "nmap": nmap, "arping": connect("sends network probes"),
		"mosh": mosh, "rdesktop": rdesktop,
		"openssl": openssl,
		"mail":    mail, "mailx": mail, "sendmail": sendmail, "mutt": mutt,
		"msmtp": client(msmtpFlags, net(airlock.ClassNetConnect, "sends email")),
		"swaks": client(swaksFlags, net(airlock.ClassNetConnect, "sends email")),
		"psql":  database(psql), "mysql": database(mysql), "mariadb": database(mysql), "sqlite3": database(sqlite),
		"mongosh": database(mongosh), "mongo": database(mongosh), "redis-cli": database(redis), "sqlcmd": database(sqlcmd),
		"clickhouse-client": database(clickhouse), "cqlsh": database(cqlsh),
		"npx": npx, "pnpx": npx, "bunx": npx, "uvx": npx,
	}
})

func connect(reason string) rule { return fixed(net(airlock.ClassNetConnect, reason)) }

// remote analyses a command that another host runs through its shell, as
// ssh's rule does.
func (c *call) remote(via string, words []arg) {
	n := c.runWords(via, words, c.in)
	n.cwd, n.setCwd, n.lenient = "~", true, true
}

// urlName is the file a downloader saves a URL to when not told: the last
// part of its path.
func urlName(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
		if i := strings.IndexByte(u, '/'); i >= 0 {
			u = u[i:]
		} else {
			u = ""
		}
	}
	u, _, _ = strings.Cut(u, "?")
	if name := path.Base(u); name != "/" && name != "." && name != "" {
		return name
	}
	return "index.html"
}

// saves records the files a downloader writes for its URL operands when
// not told where: the last part of each URL's path, in dir (the working
// directory if not static).
func (c *call) saves(e *effect, via string, dir arg, urls []arg) {
	for _, u := range urls {
		if !u.static || !strings.Contains(u.val, "://") {
			continue
		}
		name := urlName(u.val)
		if dir.static && dir.val != "" {
			name = path.Join(dir.val, name)
		}
		c.use(e, writesFile, via, literal(name))
	}
}

// Consoles.

// console is the command language an interactive client reads from its
// input, from a file or from an option (ftp's "get" and "!", psql's "\o"
// and "\!", sqlite3's ".output" and ".shell"). Each line is a command; the
// ones that matter run shell commands or editors, or read or write local
// files.
type consoleLang struct {
	shell     []string         // prefixes after which the rest of the line is a shell command ("!")
	cmds      map[string][]act // what the commands that matter do, by name ("source -e" for a command and its option)
	vars      map[string]role  // what a variable set by a setsVars command holds (mail's sendmail, record)
	abbrev    int              // a command may be shortened to a prefix this long (sqlite3's ".sh"); 0: never
	fold      bool             // command names ignore case
	backslash bool             // commands start with "\" anywhere in a line, and "\!" takes the rest of it (psql, mysql)
	backticks bool             // `text` inside a command runs text in a shell (psql, mutt)
	redirects bool             // "> file", ">> file" and "| command" apply to any command (lftp)
	seps      []string         // what separates commands on a line (lftp's ";" and "&&"); none: one a line
	prefixes  string           // characters a command may start with, then ignored (sftp's "-" and "@")
}

// act is what a console command does: its role, and the words (options
// left out) it applies to: 1 the first, 2 the second, -1 the last, 0 every
// one; after, if set, takes only the words after that option ("get -o
// FILE"). A command that runs a shell command or console commands runs the
// rest of its line. A word starting with "|" pipes to a shell command.
type act struct {
	role  role
	word  int
	after string
}

// runConsole analyses a console script.
func (c *call) runConsole(e *effect, con *consoleLang, via, text string) {
	for _, line := range strings.Split(text, "\n") {
		cmds := con.split(line)
		for i, cmd := range cmds {
			if con.shellPrefix(cmd) != "" {
				// A shell command takes the rest of the line, separators
				// and all.
				cmd = strings.Join(cmds[i:], ";")
				c.consoleCommand(e, con, via, cmd)
				break
			}
			c.consoleCommand(e, con, via, cmd)
		}
	}
}

// shellPrefix returns the shell prefix a command starts with, if any.
func (con *consoleLang) shellPrefix(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if cmd != "" && strings.IndexByte(con.prefixes, cmd[0]) >= 0 {
		cmd = strings.TrimSpace(cmd[1:])
	}
	for _, p := range con.shell {
		if len(cmd) >= len(p) && strings.EqualFold(cmd[:len(p)], p) {
			return p
		}
	}
	return ""
}

// split separates the commands of a line.
func (con *consoleLang) split(line string) []string {
	if !con.backslash {
		return splitUnquoted(line, con.seps)
	}
	// What comes before the first backslash may be a command too (mysql's
	// "system CMD").
	i := indexUnquoted(line, `\`)
	if i < 0 {
		return []string{line}
	}
	out := []string{line[:i]}
	for {
		line = line[i:]
		if strings.HasPrefix(line, `\!`) {
			return append(out, line)
		}
		j := indexUnquoted(line[1:], `\`)
		if j < 0 {
			return append(out, line)
		}
		out = append(out, line[:j+1])
		i = j + 1
	}
}

func (c *call) consoleCommand(e *effect, con *consoleLang, via, line string) {
	line = strings.TrimSpace(line)
	if line != "" && strings.IndexByte(con.prefixes, line[0]) >= 0 {
		line = strings.TrimSpace(line[1:])
	}
	if con.backticks {
		for _, cmd := range backticked(line) {
			c.shellCommand(via, cmd)
		}
	}
	if p := con.shellPrefix(line); p != "" {
		c.shellCommand(via+" "+strings.TrimSpace(p), line[len(p):])
		return
	}
	if con.redirects {
		if i := indexUnquoted(line, "|"); i >= 0 {
			c.shellCommand(via+" |", line[i+1:])
			line = line[:i]
		}
		if i := indexUnquoted(line, ">"); i >= 0 {
			for _, f := range consoleWords(strings.TrimLeft(line[i:], ">")) {
				c.use(e, writesFile, via+" >", literal(f))
				break
			}
			line = line[:i]
		}
	}
	words := consoleWords(line)
	if len(words) == 0 {
		return
	}
	name, acts, n := con.lookup(words)
	if acts == nil {
		return
	}
	rest := consoleRest(line, n)
	if len(words) == n+1 {
		rest = words[n] // one word, unquoted: source -e "CMD"
	}
	args := words[n:]
	if i := slices.IndexFunc(args, func(w string) bool { return strings.HasPrefix(w, "|") }); i >= 0 && slices.Contains([]role{writesFile, sendsFile, runsFile}, acts[0].role) {
		// A file named "|CMD" is CMD, to the end of the line, piped to or from.
		c.shellCommand(via+" "+name+" |", strings.Join(append([]string{args[i][1:]}, args[i+1:]...), " "))
		args = args[:i]
	}
	for _, u := range acts {
		switch u.role {
		case runsCommand:
			c.shellCommand(via+" "+name, rest)
			continue
		case runsConsole:
			text := rest
			if u.word > 0 && len(words) >= n+u.word {
				text = words[n+u.word-1]
			}
			c.runConsole(e, con, via+" "+name, text)
			continue
		case runsKeys:
			c.use(e, runsKeys, via+" "+name, literal(rest))
			continue
		case opensEditor:
			c.use(e, opensEditor, via+" "+name, arg{})
			continue
		case setsVars:
			c.setConsoleVars(e, con, via+" "+name, words[n:])
			continue
		}
		for _, f := range pick(args, u) {
			c.use(e, u.role, via+" "+name, literal(f))
		}
	}
}

// lookup finds the command words start with: two words ("source -e") or
// one, exactly or abbreviated. n is how many words name it.
func (con *consoleLang) lookup(words []string) (name string, acts []act, n int) {
	key := func(w string) string {
		if con.fold {
			return strings.ToLower(w)
		}
		return w
	}
	if len(words) > 1 {
		if u, ok := con.cmds[key(words[0]+" "+words[1])]; ok {
			return words[0] + " " + words[1], u, 2
		}
	}
	w := key(words[0])
	if u, ok := con.cmds[w]; ok {
		return words[0], u, 1
	}
	if con.abbrev > 0 && len(w) >= con.abbrev {
		for _, k := range slices.Sorted(maps.Keys(con.cmds)) {
			if strings.HasPrefix(k, w) && !strings.Contains(k, " ") {
				return words[0], con.cmds[k], 1
			}
		}
	}
	return "", nil, 0
}

// pick returns the words an act applies to.
func pick(words []string, u act) []string {
	var files []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case u.after != "" && w == u.after && i+1 < len(words):
			files = append(files, words[i+1])
			i++
		case u.after == "" && (w == "-" || !strings.HasPrefix(w, "-")):
			files = append(files, w)
		}
	}
	switch {
	case u.after != "" || u.word == 0:
		return files
	case u.word > 0 && u.word <= len(files):
		return files[u.word-1 : u.word]
	case u.word < 0 && len(files) > 0:
		return files[len(files)-1:]
	}
	return nil
}

// setConsoleVars handles "set NAME=VALUE" (or "set NAME VALUE").
func (c *call) setConsoleVars(e *effect, con *consoleLang, via string, words []string) {
	for i := 0; i < len(words); i++ {
		name, val, ok := strings.Cut(words[i], "=")
		if !ok && i+1 < len(words) && con.vars[name] != 0 {
			i++
			val = words[i]
		}
		switch r := con.vars[name]; r {
		case 0:
		case runsConsole:
			c.runConsole(e, con, via+" "+name, val)
		default:
			c.use(e, r, via+" "+name, literal(val))
		}
	}
}

// consoleWords splits a console line into words as a shell would: blanks
// separate them, quotes group, a backslash escapes a blank, a quote or
// itself (psql's \o stays a word).
func consoleWords(line string) []string {
	var words []string
	var b strings.Builder
	in, quote, escaped := false, byte(0), false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case escaped:
			b.WriteByte(ch)
			escaped = false
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				b.WriteByte(ch)
			}
		case ch == '\\' && i+1 < len(line) && strings.IndexByte(" \t'\"\\", line[i+1]) >= 0:
			escaped, in = true, true
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}

// consoleRest is what follows the first n words of a line.
func consoleRest(line string, n int) string {
	rest := strings.TrimSpace(line)
	for ; n > 0; n-- {
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			return ""
		}
		rest = strings.TrimSpace(rest[i:])
	}
	return rest
}

// indexUnquoted finds sep in s outside quotes.
func indexUnquoted(s, sep string) int {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case strings.HasPrefix(s[i:], sep):
			return i
		}
	}
	return -1
}

// splitUnquoted splits s at each of seps outside quotes.
func splitUnquoted(s string, seps []string) []string {
	var out []string
	for {
		at, size := -1, 0
		for _, sep := range seps {
			if i := indexUnquoted(s, sep); i >= 0 && (at < 0 || i < at) {
				at, size = i, len(sep)
			}
		}
		if at < 0 {
			return append(out, s)
		}
		out = append(out, s[:at])
		s = s[at+size:]
	}
}

// backticked returns the text between pairs of backticks.
func backticked(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			return append(out, s[i+1:])
		}
		out = append(out, s[i+1:i+1+j])
		s = s[i+j+2:]
	}
}

// stdinConsole analyses the console commands a client reads from its
// standard input: known text is analysed; text Airlock cannot see is
// unknown when the console can run shell commands.
func (c *call) stdinConsole(e *effect, con *consoleLang, what string) {
	switch c.in.kind {
	case inText:
		c.runConsole(e, con, c.name, c.in.text)
	case inPipe, inDynamic:
		if con.runs() {
			c.runUnknown(c.name, c.text(), "runs "+what+" read from its input, which can run shell commands")
		}
	case inFile:
		c.use(e, runsFile, c.name+" <", literal(c.in.text))
	}
}

// runs reports whether the console can run shell commands.
func (con *consoleLang) runs() bool {
	if len(con.shell) > 0 || con.backticks || con.redirects {
		return true
	}
	for _, acts := range con.cmds {
		for _, u := range acts {
			if u.role == runsCommand || u.role == runsConsole {
				return true
			}
		}
	}
	return false
}

// HTTP clients and downloaders.

var curlFlags = getopt{short: "AbCcDdEeFHKmoPQrTtUuwXxYyz", long: names("--user-agent --continue-at --data " +
	"--data-ascii --data-binary --data-raw --data-urlencode --json --cert --cert-type --form --form-string " +
	"--header --proxy-header --max-time --ftp-port --quote --range --telnet-option --user --proxy-user " +
	"--write-out --request --proxy --speed-limit --speed-time --time-cond --referer --url --key --key-type " +
	"--pass --cacert --capath --connect-to --resolve --retry --limit-rate --connect-timeout --max-filesize " +
	"--interface --netrc-file --proto --variable --url-query --engine --oauth2-bearer --aws-sigv4 --mail-from " +
	"--mail-rcpt"), flags: names("--remote-name --remote-name-all --remote-header-name --create-dirs --ssl"),
	roles: map[string]role{
		"-o": writesFile, "--output": writesFile, "--output-dir": writesFile, "-D": writesFile,
		"--dump-header": writesFile, "-c": writesFile, "--cookie-jar": writesFile, "--trace": writesFile,
		"--trace-ascii": writesFile, "--stderr": writesFile, "--etag-save": writesFile, "--hsts": writesFile,
		"--alt-svc": writesFile, "--libcurl": writesFile, "--ssl-sessions": writesFile,
		"-T": sendsFile, "--upload-file": sendsFile, "-b": sendsFile, "--cookie": sendsFile,
		"--data-binary": sendsFile, "--json": sendsFile,
		"-K": runsFile, "--config": runsFile,
		"--unix-socket": usesSocket, "--abstract-unix-socket": usesSocket,
	}}

func curl(c *call) effect {
	p := curlFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetHTTP, "makes HTTP requests")
	if m, ok := p.value("-X", "--request"); ok && strings.EqualFold(m.val, "DELETE") {
		e = effect{class: airlock.ClassNetHTTP, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: "sends an HTTP DELETE request"}
	}
	var config []arg
	if k, ok := p.value("-K", "--config"); ok && k.val == "-" && c.in.kind == inText {
		// Options read from a here-document.
		for _, o := range curlConfig(c.in.text) {
			p.opts = append(p.opts, o)
			config = append(config, o.val)
		}
	}
	c.useOptions(&e, p.opts, curlFlags.roles)
	if p.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name") {
		dir, _ := p.value("--output-dir")
		c.saves(&e, "curl -O", dir, ops)
	}
	for _, lib := range p.values("--engine") {
		if lib.val != "list" {
			c.use(&e, loadsLibrary, "curl --engine", lib)
		}
	}
	// --write-out %output{FILE} (or {>>FILE}) writes the rest of the format.
	for _, w := range p.values("-w", "--write-out") {
		if _, f, ok := strings.Cut(w.val, "%output{"); ok {
			f, _, _ = strings.Cut(strings.TrimPrefix(f, ">>"), "}")
			c.use(&e, writesFile, "curl --write-out", literal(f))
		}
	}
	sent := fileRefs(append(config, c.args...))
	// NAME@FILE sends FILE's content as NAME's value.
	for _, v := range p.values("--data-urlencode", "--variable", "--url-query") {
		if name, f, ok := strings.Cut(v.val, "@"); ok && v.static && !strings.Contains(name, "=") {
			sent = append(sent, arg{val: f, text: quote(f), static: true, glob: v.glob})
		}
	}
	c.raiseReads(&e, sent...)
	return e
}

// curlConfig reads the options of a curl configuration: "name = value",
// "name value" or "--name value", a line each.
func curlConfig(text string) []option {
	var opts []option
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimLeft(strings.TrimSpace(line), "-")
		if line == "" || line[0] == '#' {
			continue
		}
		name, val := line, ""
		if i := strings.IndexAny(line, " \t=:"); i >= 0 {
			name, val = line[:i], strings.TrimLeft(line[i:], " \t=:")
		}
		val = strings.Trim(val, `"`)
		if len(name) == 1 {
			name = "-" + name
		} else {
			name, _, _ = curlFlags.resolve("--" + name)
		}
		opts = append(opts, option{name: name, val: literal(val), has: val != ""})
	}
	return opts
}

// fileRefs returns the local files an HTTP client would send: "@file",
// "name=@file", "name=<file", "file://path".
func fileRefs(words []arg) []arg {
	var out []arg
	for _, w := range words {
		if w = known(w); !w.static {
			continue
		}
		v := w.val
		if i := strings.Index(v, "=@"); i >= 0 {
			v = v[i+2:]
		} else if i := strings.Index(v, "=<"); i >= 0 {
			v = v[i+2:]
		} else if i := strings.Index(v, "@"); i >= 0 && (i == 0 || strings.HasPrefix(w.val, "-")) {
			v = v[i+1:]
		} else if p, ok := strings.CutPrefix(v, "file://"); ok {
			v = p
		} else {
			continue
		}
		v, _, _ = strings.Cut(v, ";")
		out = append(out, arg{val: v, static: true, glob: w.glob})
	}
	return out
}

var wgetFlags = getopt{short: "eoaiBtOTwQPUlARDIXY", long: names("--execute --base --tries --backups " +
	"--retry-on-http-error --timeout --dns-timeout --connect-timeout --read-timeout --limit-rate --wait " +
	"--waitretry --bind-address --bind-dns-address --quota --restrict-file-names --prefer-family --user " +
	"--password --local-encoding --remote-encoding --cut-dirs --default-page --http-user --http-password " +
	"--header --compression --max-redirect --proxy-user --proxy-password --referer --user-agent --post-data " +
	"--method --body-data --secure-protocol --certificate --certificate-type --private-key --private-key-type " +
	"--ca-certificate --ca-directory --crl-file --pinnedpubkey --random-file --egd-file --ciphers --ftp-user " +
	"--ftp-password --warc-header --warc-max-size --warc-dedup --level --accept --reject --accept-regex " +
	"--reject-regex --regex-type --domains --exclude-domains --follow-tags --ignore-tags --include-directories " +
	"--exclude-directories --report-speed --progress"),
	roles: map[string]role{
		"-O": writesFile, "--output-document": writesFile, "-o": writesFile, "--output-file": writesFile,
		"-a": writesFile, "--append-output": writesFile, "-P": writesFile, "--directory-prefix": writesFile,
		"--save-cookies": writesFile, "--rejected-log": writesFile, "--hsts-file": writesFile,
		"--warc-file": writesFile, "--warc-tempdir": writesFile,
		"-i": sendsFile, "--input-file": sendsFile, "--post-file": sendsFile, "--body-file": sendsFile,
		"--load-cookies": sendsFile,
		"--config":       runsFile, "--use-askpass": runsProgram,
	}}

// wgetrcNames are the .wgetrc commands (wget -e) whose names are not their
// option's; the others are the option's name, in which case, "-" and "_"
// do not count.
var wgetrcNames = map[string]string{"logfile": "--output-file", "input": "--input-file", "dirprefix": "--directory-prefix"}

func wget(c *call) effect {
	p := wgetFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetHTTP, "downloads files")
	for _, cmd := range p.values("-e", "--execute") {
		if !cmd.static {
			c.runUnknown("wget -e", cmd.text, "runs a .wgetrc command only known at run time, which can run programs")
			continue
		}
		if name, val, ok := strings.Cut(cmd.val, "="); ok {
			p.opts = append(p.opts, option{name: wgetrcOption(name), val: literal(strings.TrimSpace(val)), has: true})
		}
	}
	c.useOptions(&e, p.opts, wgetFlags.roles)
	if _, ok := p.value("-O", "--output-document"); !ok {
		dir, _ := p.value("-P", "--directory-prefix")
		c.saves(&e, "wget", dir, ops)
	}
	c.raiseReads(&e, fileRefs(ops)...)
	return e
}

func wgetrcOption(name string) string {
	k := strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(name))
	if o, ok := wgetrcNames[k]; ok {
		return o
	}
	for _, o := range slices.Sorted(maps.Keys(wgetFlags.roles)) {
		if strings.HasPrefix(o, "--") && strings.ReplaceAll(o[2:], "-", "") == k {
			return o
		}
	}
	return name
}

var httpieFlags = getopt{short: "aAops",
	long: names("--auth --auth-type --print --style --verify --cert --cert-key --cert-key-pass --ssl --ciphers " +
		"--proxy --timeout --max-redirects --boundary --raw --format-options --pretty --response-charset " +
		"--response-mime --default-scheme"), flags: names("--download"),
	roles: map[string]role{"-o": writesFile, "--output": writesFile, "--session": writesFile, "--session-read-only": sendsFile}}

func httpie(c *call) effect {
	p := httpieFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetHTTP, "makes HTTP requests")
	if len(ops) > 0 && strings.EqualFold(ops[0].val, "DELETE") {
		e = effect{class: airlock.ClassNetHTTP, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: "sends an HTTP DELETE request"}
	}
	c.useOptions(&e, p.opts, httpieFlags.roles)
	if _, ok := p.value("-o", "--output"); !ok && p.has("-d", "--download") {
		c.saves(&e, c.name+" --download", arg{}, ops)
	}
	sent := fileRefs(ops)
	// Request items: "field@FILE" uploads FILE, "Header:@FILE" sends it.
	for _, op := range ops {
		if i := strings.IndexByte(op.val, '@'); op.static && i > 0 {
			before := op.val[:i]
			if !strings.ContainsAny(before, "=:") || strings.HasSuffix(before, ":") {
				sent = append(sent, arg{val: op.val[i+1:], static: true, glob: op.glob})
			}
		}
	}
	c.raiseReads(&e, sent...)
	return e
}

var aria2cFlags = getopt{short: "dolijskxtmTMU", long: names("--max-concurrent-downloads --split --min-split-size " +
	"--max-connection-per-server --timeout --max-tries --user-agent --header --referer --max-download-limit " +
	"--max-overall-download-limit --seed-time --seed-ratio --rpc-listen-port --rpc-secret --rpc-user " +
	"--rpc-passwd --all-proxy --http-proxy --https-proxy --ftp-proxy --checksum --select-file --bt-tracker " +
	"--http-user --http-passwd --ftp-user --ftp-passwd --certificate --private-key --ca-certificate " +
	"--netrc-path --index-out --follow-torrent --file-allocation --log-level --console-log-level --stop " +
	"--stop-with-process --gid --interface"), flags: names("--enable-rpc --rpc-listen-all --allow-overwrite"),
	roles: map[string]role{
		"-d": writesFile, "--dir": writesFile, "-l": writesFile, "--log": writesFile,
		"--save-session": writesFile, "--save-cookies": writesFile, "--dht-file-path": writesFile,
		"--dht-file-path6": writesFile, "--server-stat-of": writesFile,
		"-i": sendsFile, "--input-file": sendsFile, "--load-cookies": sendsFile,
		"--conf-path":            runsFile,
		"--on-download-complete": runsProgram, "--on-download-error": runsProgram,
		"--on-download-start": runsProgram, "--on-download-pause": runsProgram,
		"--on-download-stop": runsProgram, "--on-bt-download-complete": runsProgram,
	}}

func aria2c(c *call) effect {
	p := aria2cFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetHTTP, "downloads files")
	if p.has("--enable-rpc") && p.has("--rpc-listen-all") {
		return effect{class: airlock.ClassNetConnect, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged,
			reason: "lets any network peer direct its downloads, which can write any file and run commands"}
	}
	c.useOptions(&e, p.opts, aria2cFlags.roles)
	// -o names a file in -d's directory.
	dir, _ := p.value("-d", "--dir")
	outs := p.values("-o", "--out")
	for _, o := range outs {
		if dir.static && o.static && dir.val != "" {
			o = literal(path.Join(dir.val, o.val))
		}
		c.use(&e, writesFile, "aria2c -o", o)
	}
	if len(outs) == 0 {
		c.saves(&e, "aria2c", dir, ops)
	}
	return e
}

var axelFlags = getopt{short: "osnHUT", long: names("--max-speed --num-connections --header --user-agent --timeout"),
	roles: map[string]role{"-o": writesFile, "--output": writesFile}}

func axel(c *call) effect {
	p := axelFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetHTTP, "downloads files")
	c.useOptions(&e, p.opts, axelFlags.roles)
	if _, ok := p.value("-o", "--output"); !ok {
		c.saves(&e, "axel", arg{}, ops)
	}
	return e
}

// File transfer.

// isRemote reports whether an scp or rsync operand names another host
// (host:path, user@host:path, rsync://...).
func isRemote(a arg) bool {
	if !a.static {
		return false
	}
	if strings.Contains(a.val, "://") {
		return true
	}
	i := strings.IndexByte(a.val, ':')
	return i > 0 && !strings.ContainsRune(a.val[:i], '/')
}

// transfer classifies scp-like copies: with a remote operand a network
// transfer, else a local copy; local destinations are checked, sources sent
// may be credentials.
func transfer(c *call, ops []arg, reason string) effect {
	remote := slices.ContainsFunc(ops, isRemote)
	e := write(airlock.ClassFSCopy, "copies files")
	if remote {
		e = net(airlock.ClassNetConnect, reason)
	}
	if len(ops) > 1 {
		dest := ops[len(ops)-1]
		if !isRemote(dest) {
			c.raiseWrites(&e, dest)
		}
		c.raiseReads(&e, localSources(ops)...)
	}
	return e
}

// localSources are the operands of an scp-like copy that are read here:
// every one but the destination that names no other host.
func localSources(ops []arg) []arg {
	if len(ops) < 2 {
		return nil
	}
	var local []arg
	for _, s := range ops[:len(ops)-1] {
		if !isRemote(s) {
			local = append(local, s)
		}
	}
	return local
}

// sshConfig says what ssh does with the value of a configuration keyword
// given with -o (ssh, scp and sftp take the same): ProxyCommand and the
// like run local commands, PKCS11Provider loads a library,
// UserKnownHostsFile is written, Include follows more configuration.
var sshConfig = map[string]role{
	"proxycommand": runsCommand, "localcommand": runsCommand, "knownhostscommand": runsCommand,
	"remotecommand": runsCommand, "xauthlocation": runsProgram, "pkcs11provider": loadsLibrary,
	"securitykeyprovider": loadsLibrary, "userknownhostsfile": writesFile, "controlpath": writesFile,
	"include": runsFile, "revokedhostkeys": sendsFile, "globalknownhostsfile": sendsFile,
}

// sshOptions records what the options of ssh, scp and sftp do on this
// machine: their own (roles: a configuration file -F, ssh's log -E, scp's
// program -S), and the configuration keywords given with -o.
func (c *call) sshOptions(e *effect, opts []option, roles map[string]role) {
	c.useOptions(e, opts, roles)
	for _, o := range opts {
		if o.name != "-o" || !o.has {
			continue
		}
		if !o.val.static {
			c.runUnknown(c.name+" -o", o.val.text, "sets an ssh option only known at run time")
			continue
		}
		key, val, ok := strings.Cut(o.val.val, "=")
		if !ok {
			key, val, _ = strings.Cut(o.val.val, " ")
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		r := sshConfig[strings.ToLower(key)]
		via := c.name + " -o " + key
		switch {
		case r == 0 || strings.EqualFold(val, "none"):
		case strings.EqualFold(key, "proxycommand"):
			// ssh runs it as "exec COMMAND" with sh -c.
			c.runScript(via, "exec "+val, input{}).lenient = true
		case r == writesFile || r == sendsFile || r == runsFile:
			for _, f := range strings.Fields(val) {
				c.use(e, r, via, literal(f))
			}
		default:
			c.use(e, r, via, literal(val))
		}
	}
}

var scpFlags = getopt{short: "ciJloPX", roles: map[string]role{"-F": runsFile, "-S": runsProgram, "-D": runsCommand}}

func scp(c *call) effect {
	p := scpFlags.parse(c.args)
	ops := p.ops
	e := transfer(c, ops, "copies files to or from another host")
	if p.has("-r") {
		c.raiseReadTree(&e, localSources(ops)...)
	}
	c.sshOptions(&e, p.opts, scpFlags.roles)
	return e
}

var sftpFlags = getopt{short: "BbciJloPRsX",
	roles: map[string]role{"-F": runsFile, "-S": runsProgram, "-D": runsCommand}}

// sftpConsole: sftp's commands ("-" or "@" in front ignores errors or
// echo). get writes its second word, or the remote file's name here.
var sftpConsole = consoleLang{
	shell: []string{"!"},
	cmds: map[string][]act{
		"get": {{role: writesFile, word: 2}}, "reget": {{role: writesFile, word: 2}},
		"put": {{role: sendsFile, word: 1}}, "reput": {{role: sendsFile, word: 1}},
		"lmkdir": {{role: writesFile, word: 1}},
	},
	prefixes: "-@",
}

func sftp(c *call) effect {
	p := sftpFlags.parse(c.args)
	e := net(airlock.ClassNetConnect, "transfers files with another host")
	c.sshOptions(&e, p.opts, sftpFlags.roles)
	if b, ok := p.value("-b"); ok && (!b.static || b.val != "-") {
		c.use(&e, runsFile, "sftp -b", b)
		return e
	}
	c.stdinConsole(&e, &sftpConsole, "sftp commands")
	return e
}

var rsyncFlags = getopt{short: "BfM", long: names("--filter --exclude --include --exclude-from --include-from " +
	"--compare-dest --copy-dest --link-dest --suffix --chmod --chown --usermap --groupmap --block-size " +
	"--bwlimit --timeout --contimeout --port --password-file --log-file-format --max-size --min-size " +
	"--max-delete --modify-window --out-format --skip-compress --compress-choice --compress-level " +
	"--checksum-choice --info --debug --iconv --address --sockopts --outbuf --stop-after --stop-at " +
	"--remote-option --rsync-path --dparam --confine-root"),
	roles: map[string]role{
		"-e": runsProgram, "--rsh": runsProgram,
		"--log-file": writesFile, "--write-batch": writesFile, "--only-write-batch": writesFile,
		"--backup-dir": writesFile, "-T": writesFile, "--temp-dir": writesFile, "--partial-dir": writesFile,
		"--files-from": sendsFile, "--early-input": sendsFile, "--read-batch": sendsFile,
		"--config": runsFile,
	}, exact: true}

func rsync(c *call) effect {
	p := rsyncFlags.parse(c.args)
	ops := p.ops
	e := transfer(c, ops, "synchronises files with another host")
	if p.has("-r", "--recursive", "-a", "--archive") {
		c.raiseReadTree(&e, localSources(ops)...)
	}
	if p.has("--daemon") {
		e = worse(e, net(airlock.ClassNetConnect, "runs an rsync daemon that serves files to network peers"))
	}
	if c.has("--delete", "--del", "--delete-before", "--delete-during", "--delete-delay", "--delete-after",
		"--delete-excluded", "--delete-missing-args", "--remove-source-files") && e.tier < airlock.TierDestructive {
		e.tier = airlock.TierDestructive
		e.reason = "synchronises files and deletes what the source lacks"
	}
	c.useOptions(&e, p.opts, rsyncFlags.roles)
	for _, prog := range p.values("--rsync-path") {
		c.remote("rsync --rsync-path", []arg{prog})
	}
	return e
}

// Raw connections.

var netcatFlags = getopt{short: "ceopsxwiIOTVMmPKRZHqgGX", long: names("--exec --sh-exec --lua-exec --proxy " +
	"--proxy-type --proxy-auth --proxy-dns --source --source-port --wait --idle-timeout --delay --max-conns " +
	"--allow --allowfile --deny --denyfile --ssl-cert --ssl-key --ssl-trustfile --ssl-ciphers --ssl-servername " +
	"--ssl-alpn"), flags: names("--listen --unixsock --keep-open --append-output --chat --broker"),
	roles: map[string]role{"-o": writesFile, "--output": writesFile, "-x": writesFile, "--hex-dump": writesFile, "-Z": writesFile}}

func netcat(c *call) effect {
	p := netcatFlags.parse(c.args)
	ops := p.ops
	if p.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec") {
		return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged, reason: "gives a network peer a program or shell"}
	}
	e := net(airlock.ClassNetConnect, "opens a network connection")
	if p.has("-l", "--listen") {
		e.reason = "listens for network connections"
	}
	c.useOptions(&e, p.opts, netcatFlags.roles)
	if p.has("-U", "--unixsock") && len(ops) > 0 {
		c.use(&e, usesSocket, c.name+" -U", ops[0])
	}
	return e
}

var socatFlags = getopt{short: "btT", long: names("-lp"),
	roles: map[string]role{"-lf": writesFile, "-r": writesFile, "-R": writesFile, "-L": writesFile, "-W": writesFile},
	exact: true, single: true}

// socatNet are the prefixes of socat's network address types.
var socatNet = []string{"TCP", "UDP", "SCTP", "DCCP", "OPENSSL", "SSL", "SOCKS", "PROXY", "IP", "VSOCK", "SOCKET", "INTERFACE"}

// socatEnd is one address of a socat command: what it is and which way
// data flows through it.
type socatEnd struct {
	typ, param  string
	opts        []string
	read, write bool
}

func socat(c *call) effect {
	p := socatFlags.parse(c.args)
	ops := p.ops
	e := read("relays data between local channels")
	var ends []socatEnd
	for i, a := range ops {
		if !a.static {
			return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged, reason: "connects a channel only known at run time, which may be a program or shell"}
		}
		// -u sends from the first address to the second, -U the other way;
		// "A!!B" reads from A and writes to B.
		read := !p.has("-u") || i == 0
		write := !p.has("-u") || i == 1
		if p.has("-U") {
			read, write = i == 1, i == 0
		}
		parts := strings.Split(a.val, "!!")
		for j, addr := range parts {
			end := socatAddress(addr)
			end.read = read && (len(parts) == 1 || j == 0)
			end.write = write && (len(parts) == 1 || j == 1)
			ends = append(ends, end)
		}
	}
	network := slices.ContainsFunc(ends, func(end socatEnd) bool {
		return slices.ContainsFunc(socatNet, func(p string) bool { return strings.HasPrefix(end.typ, p) })
	})
	if network {
		e = net(airlock.ClassNetConnect, "relays network connections")
	}
	c.useOptions(&e, p.opts, socatFlags.roles)
	for i, end := range ends {
		via := "socat " + strings.ToLower(end.typ)
		switch end.typ {
		case "EXEC", "SYSTEM", "SHELL":
			if network {
				return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged, reason: "connects a program or shell to the network"}
			}
			in := input{}
			if other := ends[len(ends)-1-i]; other.typ == "STDIO" || other.typ == "STDIN" || other.typ == "-" {
				in = c.in
			} else if other.file() {
				in = input{kind: inFile, text: other.param}
			}
			if end.typ == "EXEC" {
				c.runWords(via, []arg{literal(end.param)}, in).lenient = true
			} else {
				c.runScript(via, end.param, in).lenient = true
			}
		case "TUN":
			return admin("creates a network interface")
		case "UNIX", "UNIX-CONNECT", "UNIX-CLIENT", "UNIX-SENDTO", "ABSTRACT-CONNECT", "ABSTRACT-CLIENT":
			c.use(&e, usesSocket, via, literal(end.param))
		case "UNIX-LISTEN", "UNIX-RECV", "UNIX-RECVFROM":
			c.use(&e, writesFile, via, literal(end.param))
		}
		if end.file() {
			if end.read && !slices.Contains(end.opts, "wronly") {
				c.use(&e, sendsFile, via, literal(end.param))
			}
			if end.write && !slices.Contains(end.opts, "rdonly") || end.typ == "CREATE" || end.typ == "CREAT" {
				c.use(&e, writesFile, via, literal(end.param))
			}
		}
		for _, o := range end.opts {
			// READLINE's history, PTY's link and lock files are written.
			if name, f, ok := strings.Cut(o, "="); ok && slices.Contains([]string{"history", "history-file", "link", "lockfile", "waitlock"}, strings.ToLower(name)) {
				c.use(&e, writesFile, via+","+name, literal(f))
			}
		}
	}
	return e
}

// socatAddress splits a socat address: its type in upper case (a path
// alone is GOPEN), its parameter and its options.
func socatAddress(addr string) socatEnd {
	head, rest, _ := strings.Cut(addr, ",")
	var opts []string
	if rest != "" {
		opts = strings.Split(rest, ",")
	}
	typ, param, ok := strings.Cut(head, ":")
	if !ok || strings.ContainsRune(typ, '/') {
		if strings.ContainsRune(head, '/') {
			return socatEnd{typ: "GOPEN", param: head, opts: opts}
		}
		return socatEnd{typ: strings.ToUpper(head), opts: opts}
	}
	return socatEnd{typ: strings.ToUpper(typ), param: param, opts: opts}
}

// file reports whether the address is a file socat opens.
func (end socatEnd) file() bool {
	switch end.typ {
	case "OPEN", "GOPEN", "CREATE", "CREAT", "FILE", "PIPE":
		return end.param != ""
	}
	return false
}

var telnetFlags = getopt{short: "belnSX", roles: map[string]role{"-n": writesFile}}

// telnetConsole: telnet's commands, read when no host is given.
var telnetConsole = consoleLang{
	shell:  []string{"!"},
	cmds:   map[string][]act{"set": {{role: setsVars}}},
	vars:   map[string]role{"tracefile": writesFile},
	abbrev: 2,
}

func telnet(c *call) effect {
	p := telnetFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetConnect, "opens a network connection")
	c.useOptions(&e, p.opts, telnetFlags.roles)
	if len(ops) == 0 {
		c.stdinConsole(&e, &telnetConsole, "telnet commands")
	}
	return e
}

var ftpFlags = getopt{short: "NoPqrsTux", roles: map[string]role{"-o": writesFile}}

// ftpConsole: ftp's commands, which may be abbreviated. get writes its
// second word, or the remote file's name as given.
var ftpConsole = consoleLang{
	shell: []string{"!"},
	cmds: map[string][]act{
		"get": {{role: writesFile, word: -1}}, "recv": {{role: writesFile, word: -1}},
		"reget": {{role: writesFile, word: -1}}, "newer": {{role: writesFile, word: -1}},
		"mget": {{role: writesFile}}, "put": {{role: sendsFile, word: 1}}, "send": {{role: sendsFile, word: 1}},
		"append": {{role: sendsFile, word: 1}}, "reput": {{role: sendsFile, word: 1}}, "mput": {{role: sendsFile}},
		"lpage": {{role: sendsFile, word: 1}},
	},
	abbrev: 2,
}

func ftp(c *call) effect {
	p := ftpFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetConnect, "transfers files over FTP")
	c.useOptions(&e, p.opts, ftpFlags.roles)
	if _, ok := p.value("-u"); ok {
		// ftp -u URL FILE... uploads the files.
		c.raiseReads(&e, ops...)
	} else if _, ok := p.value("-o"); !ok {
		c.saves(&e, "ftp", arg{}, ops)
	}
	c.stdinConsole(&e, &ftpConsole, "ftp commands")
	return e
}

// tftpConsole: tftp's commands (tftp-hpa's -c gives one).
var tftpConsole = consoleLang{
	cmds: map[string][]act{"get": {{role: writesFile, word: 2}}, "put": {{role: sendsFile}}},
}

func tftp(c *call) effect {
	e := net(airlock.ClassNetConnect, "transfers files over TFTP")
	for i, a := range c.args {
		if a.static && a.val == "-c" {
			if cmd, ok := joinValues(c.args[i+1:]); ok {
				c.runConsole(&e, &tftpConsole, "tftp -c", cmd)
			}
			return e
		}
	}
	c.stdinConsole(&e, &tftpConsole, "tftp commands")
	return e
}

var lftpFlags = getopt{short: "cefup", roles: map[string]role{"-f": runsFile, "--rcfile": runsFile}, exact: true}

// lftpConsole: lftp's commands, several a line, each of which may write
// its output to a file (> FILE) or pipe it to a shell command (| CMD).
var lftpConsole = consoleLang{
	shell: []string{"!"},
	cmds: map[string][]act{
		"get":  {{role: writesFile, after: "-o"}, {role: writesFile, after: "-O"}},
		"pget": {{role: writesFile, after: "-o"}, {role: writesFile, after: "-O"}},
		"mget": {{role: writesFile, after: "-O"}}, "put": {{role: sendsFile}}, "mput": {{role: sendsFile}},
		"reput": {{role: sendsFile}}, "mirror": {{role: sendsFile}},
		"source": {{role: runsFile, word: 1}}, "source -e": {{role: runsCommand}},
		"edit": {{role: opensEditor}}, "history -w": {{role: writesFile, word: 1}},
		"debug -o": {{role: writesFile, word: 1}}, "set": {{role: setsVars}}, "alias": {{role: runsConsole, word: 2}},
		"queue": {{role: runsConsole}}, "repeat": {{role: runsConsole}},
	},
	vars: map[string]role{
		"xfer:log-file": writesFile, "log:file": writesFile, "cmd:at-exit": runsConsole,
		"cmd:at-exit-bg": runsConsole, "cmd:at-exit-fg": runsConsole, "cmd:at-background": runsConsole,
		"cmd:at-terminate": runsConsole, "cmd:at-finish": runsConsole, "cmd:at-queue-finish": runsConsole,
	},
	redirects: true,
	seps:      []string{";", "&&", "||"},
}

func lftp(c *call) effect {
	p := lftpFlags.parse(c.args)
	e := net(airlock.ClassNetConnect, "transfers files")
	c.useOptions(&e, p.opts, lftpFlags.roles)
	for _, cmd := range p.values("-c", "-e") {
		if !cmd.static {
			c.runUnknown("lftp", cmd.text, "runs lftp commands only known at run time, which can run shell commands")
			continue
		}
		c.runConsole(&e, &lftpConsole, "lftp", cmd.val)
	}
	if !p.has("-c", "-f") {
		c.stdinConsole(&e, &lftpConsole, "lftp commands")
	}
	return e
}

// DNS, probes and scans.

var digFlags = getopt{short: "bcfkpqtxy", roles: map[string]role{"-f": sendsFile}}

var drillFlags = getopt{short: "bcdfiokpqrVwy",
	roles: map[string]role{"-f": sendsFile, "-i": sendsFile, "-w": writesFile, "-q": writesFile}}

var mtrFlags = getopt{short: "FafmcsBiGQIPLMyZUo", long: names("--address --first-ttl --max-ttl --report-cycles " +
	"--psize --bitpattern --interval --gracetime --tos --interface --port --localport --mark --ipinfo --timeout " +
	"--max-unknown --order"), roles: map[string]role{"-F": sendsFile, "--filename": sendsFile}}

var nmapFlags = getopt{short: "bDegiMmopS", long: names("-iR --exclude --script-args --data --data-string " +
	"--data-length --proxies --spoof-mac --source-port --ttl --max-retries --host-timeout --min-rate --max-rate " +
	"--top-ports --port-ratio --version-intensity --scan-delay --max-scan-delay --mtu --dns-servers " +
	"--stylesheet"), flags: names("--interactive --append-output --script-trace"),
	roles: map[string]role{
		"-iL": sendsFile, "--excludefile": sendsFile, "--resume": sendsFile, "--script-args-file": sendsFile,
		"-oN": writesFile, "-oX": writesFile, "-oS": writesFile, "-oG": writesFile, "-oM": writesFile,
		"-oH": writesFile, "-oA": writesFile,
		"--script": runsFile, "--datadir": runsFile, "--servicedb": sendsFile, "--versiondb": sendsFile,
	}, single: true}

// nmapConsole: old nmap's --interactive mode runs shell commands with "!".
var nmapConsole = consoleLang{shell: []string{"!"}}

func nmap(c *call) effect {
	p := nmapFlags.parse(c.args)
	e := net(airlock.ClassNetConnect, "scans network hosts")
	for _, o := range p.opts {
		if !o.has {
			continue
		}
		// -oXFILE and -iLFILE are -o and -i with the format glued to the file.
		switch {
		case o.name == "-o" && o.val.val != "" && strings.ContainsRune("NXSGAMH", rune(o.val.val[0])):
			c.use(&e, writesFile, "nmap -o", valueArg(o.val, o.val.val[1:]))
		case o.name == "-i" && strings.HasPrefix(o.val.val, "L"):
			c.use(&e, sendsFile, "nmap -i", valueArg(o.val, o.val.val[1:]))
		case o.name == "-oA":
			for _, ext := range []string{".nmap", ".xml", ".gnmap"} {
				c.use(&e, writesFile, "nmap -oA", literal(o.val.val+ext))
			}
		case o.name == "--script" && !strings.ContainsAny(o.val.val, "/."):
			continue // script names and categories from nmap's own set
		}
		if r := nmapFlags.roles[o.name]; r != 0 {
			c.use(&e, r, "nmap "+o.name, o.val)
		}
	}
	if p.has("--interactive") {
		c.stdinConsole(&e, &nmapConsole, "nmap commands")
	}
	return e
}

// Remote sessions.

var moshFlags = getopt{short: "p", long: names("--port --predict --family --bind-server --experimental-remote-ip " +
	"--server"), roles: map[string]role{"--ssh": runsProgram, "--client": runsProgram}}

func mosh(c *call) effect {
	p := moshFlags.parse(c.args)
	ops := p.ops
	host := "a host"
	if len(ops) > 0 {
		host = ops[0].text
	}
	e := net(airlock.ClassNetConnect, "connects to "+host)
	c.useOptions(&e, p.opts, moshFlags.roles)
	for _, s := range p.values("--server") {
		c.remote("mosh --server", []arg{s})
	}
	if len(ops) > 1 {
		c.remote("mosh", ops[1:])
	}
	return e
}

var rdesktopFlags = getopt{short: "udscpnkgaxrTX"}

func rdesktop(c *call) effect {
	p := rdesktopFlags.parse(c.args)
	ops := p.ops
	host := "another host"
	if len(ops) > 0 {
		host = ops[0].text
	}
	e := net(airlock.ClassNetConnect, "connects to "+host)
	// -r disk:NAME=DIR[,NAME=DIR] gives the remote host DIR to read and
	// write.
	for _, r := range p.values("-r") {
		disks, ok := strings.CutPrefix(r.val, "disk:")
		if !ok {
			continue
		}
		for _, share := range strings.Split(disks, ",") {
			if _, dir, ok := strings.Cut(share, "="); ok {
				c.shareDir(&e, "rdesktop -r disk", literal(dir), true)
			}
		}
	}
	return e
}

// shareDir records that a peer is given a local directory to read, and
// to write if writable: what is under it is sent, and may be written.
func (c *call) shareDir(e *effect, via string, dir arg, writable bool) {
	c.use(e, sendsFile, via, dir)
	if writable {
		c.use(e, writesFile, via, dir)
	}
	if p, ok := dir.pathValue(); ok && e.tier < airlock.TierPrivileged && holdsHome(c.resolve(p)) {
		*e = effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
			reason: "gives another host " + p + ", which holds the home directory and its keys"}
	}
}

// holdsHome reports whether a directory is a home directory or above one.
func holdsHome(p string) bool {
	if p == "/" || p == "/home" || p == "/Users" {
		return true
	}
	_, rest, ok := sensitive.SplitHome(p)
	return ok && rest == ""
}

// OpenSSL.

var opensslFlags = getopt{short: "KkS", long: names("-in -inkey -key -cert -CAfile -CApath -CAkey -passin -passout " +
	"-pass -connect -accept -port -servername -subj -days -newkey -pkeyopt -sigopt -md -digest -cipher " +
	"-ciphersuites -inform -outform -keyform -certform -name -purpose -nameopt -certopt -set_serial -extensions " +
	"-extfile -reqexts -addext -url -host -proxy -starttls -iv -iter -rand -provider -propquery -server -signer " +
	"-pre -post"), flags: names("-WWW -HTTP -www -verify -noout -nodes -quiet"),
	roles: map[string]role{
		"-out": writesFile, "-keyout": writesFile, "-certout": writesFile, "-certsout": writesFile,
		"-cacertsout": writesFile, "-chainout": writesFile, "-extracertsout": writesFile, "-keylogfile": writesFile,
		"-msgfile": writesFile, "-sess_out": writesFile, "-writerand": writesFile, "-outdir": writesFile,
		"-reqout": writesFile, "-respout": writesFile, "-rspout": writesFile, "-CAserial": writesFile,
		"-reqin":  sendsFile,
		"-engine": loadsLibrary, "-keygen_engine": loadsLibrary, "-ssl_client_engine": loadsLibrary,
		"-provider-path": loadsLibrary, "-module": loadsLibrary,
		"-config": runsFile,
	}, exact: true, single: true}

// opensslProviders are the providers built into OpenSSL; any other is a
// library it loads.
var opensslProviders = []string{"default", "legacy", "base", "fips", "null"}

func openssl(c *call) effect {
	if len(c.args) == 0 {
		// Without a command, openssl reads its commands from its input.
		switch c.in.kind {
		case inText:
			for _, line := range strings.Split(c.in.text, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					c.runScript("openssl", "openssl "+line, input{}).lenient = true
				}
			}
		case inPipe, inDynamic, inFile:
			return exec("runs openssl commands read from its input")
		}
		return read("shows openssl help")
	}
	sub := c.args[0].val
	p := opensslFlags.parse(c.args[1:])
	ops := p.ops
	var e effect
	switch {
	case !c.args[0].static:
		e = exec("runs an openssl command only known at run time")
	case sub == "s_server" && p.has("-WWW", "-HTTP"):
		// Serves the files under the working directory.
		e = net(airlock.ClassNetConnect, "serves files to network peers")
		c.shareDir(&e, "openssl s_server -WWW", literal("."), false)
	case sub == "s_client" || sub == "s_server" || sub == "s_time" ||
		(sub == "ocsp" || sub == "cmp") && p.has("-url", "-host", "-port", "-server"):
		e = net(airlock.ClassNetConnect, "opens a TLS connection")
	default:
		e = read("runs a cryptographic operation")
		c.raiseReads(&e, ops...)
	}
	c.useOptions(&e, p.opts, opensslFlags.roles)
	for _, prov := range p.values("-provider") {
		if !slices.Contains(opensslProviders, prov.val) {
			c.use(&e, loadsLibrary, "openssl -provider", prov)
		}
	}
	if sub == "engine" && len(ops) > 0 {
		c.use(&e, loadsLibrary, "openssl engine", ops[0])
	}
	if p.has("-verify") {
		// smime and cms -verify write the signers' certificates to -signer.
		for _, f := range p.values("-signer") {
			c.use(&e, writesFile, "openssl -signer", f)
		}
	}
	return e
}

// Mail.

var mailFlags = getopt{short: "aAbcEqrsSuXYMmOTL", long: names("--append --subject --return-address --content-type " +
	"--content-filename --encoding --user --exec"), optLong: names("--file"), flags: names("--file"),
	roles: map[string]role{"-A": sendsFile, "--attach": sendsFile, "-a": sendsFile, "-q": sendsFile, "-T": writesFile}}

// mailConsole: mail's commands (-E, --exec, s-nail's -X and -Y, or its
// input when it reads mail), and the tilde escapes of a message it
// composes. Variables set with "set" or -S name programs it runs and files
// it writes.
var mailConsole = consoleLang{
	shell: []string{"!", "~!", "~|", "~<!"},
	cmds: map[string][]act{
		"shell": {{role: runsCommand}}, "sh": {{role: runsCommand}},
		"pipe": {{role: runsCommand}}, "|": {{role: runsCommand}},
		"write": {{role: writesFile, word: -1}}, "w": {{role: writesFile, word: -1}},
		"save": {{role: writesFile, word: -1}}, "s": {{role: writesFile, word: -1}},
		"Save": {{role: writesFile, word: -1}}, "copy": {{role: writesFile, word: -1}},
		"c": {{role: writesFile, word: -1}}, "Copy": {{role: writesFile, word: -1}},
		"source": {{role: runsFile, word: 1}}, "so": {{role: runsFile, word: 1}},
		"file": {{role: sendsFile, word: 1}}, "folder": {{role: sendsFile, word: 1}},
		"edit": {{role: opensEditor}}, "e": {{role: opensEditor}}, "visual": {{role: opensEditor}},
		"v": {{role: opensEditor}}, "set": {{role: setsVars}}, "se": {{role: setsVars}},
		"~r": {{role: sendsFile, word: 1}}, "~<": {{role: sendsFile, word: 1}}, "~w": {{role: writesFile, word: 1}},
		"~e": {{role: opensEditor}}, "~v": {{role: opensEditor}}, "~:": {{role: runsConsole}}, "~_": {{role: runsConsole}},
	},
	vars: map[string]role{
		"sendmail": runsProgram, "mta": runsProgram, "PAGER": runsCommand, "EDITOR": runsCommand,
		"VISUAL": runsCommand, "SHELL": runsCommand, "LISTER": runsCommand, "record": writesFile,
		"MBOX": writesFile, "DEAD": writesFile, "folder": writesFile, "signature": sendsFile,
	},
}

func mail(c *call) effect {
	p := mailFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetConnect, "sends email")
	c.useOptions(&e, p.opts, mailFlags.roles)
	for _, v := range p.values("-S") {
		c.setConsoleVars(&e, &mailConsole, c.name+" -S", []string{v.val})
	}
	cmds := p.values("-E", "--exec", "-X", "-Y")
	for _, cmd := range cmds {
		if !cmd.static {
			c.runUnknown(c.name, cmd.text, "runs mail commands only known at run time, which can run shell commands")
			continue
		}
		c.runConsole(&e, &mailConsole, c.name, cmd.val)
	}
	// -f reads a mailbox, the first operand or the default one.
	if p.has("-f", "--file") && len(ops) > 0 {
		c.use(&e, sendsFile, c.name+" -f", ops[0])
	}
	switch {
	case c.in.kind == inText:
		// Commands, or a message whose tilde escapes run commands.
		c.runConsole(&e, &mailConsole, c.name, c.in.text)
	case len(ops) == 0 || p.has("-f", "--file"):
		// Reading mail: its input is commands.
		c.stdinConsole(&e, &mailConsole, "mail commands")
	}
	return e
}

var sendmailFlags = getopt{short: "BCbdFfhNOopqRrVXLA", roles: map[string]role{"-X": writesFile, "-C": runsFile}}

// eximRun finds the commands and libraries of exim string expansions
// (sendmail -be on exim): ${run{COMMAND}...}, ${dlfunc{LIBRARY}...},
// ${perl{...}}.
var eximRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{(run|dlfunc|perl)[^{]*\{([^}]*)\}`) })

func sendmail(c *call) effect {
	p := sendmailFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetConnect, "sends email")
	c.useOptions(&e, p.opts, sendmailFlags.roles)
	for _, mode := range p.values("-b") {
		switch mode.val {
		case "d", "D":
			e.reason = "runs a mail server for network peers"
		case "e", "em":
			// Exim expands strings, which can run commands and read files.
			exprs := ops
			if c.in.kind == inText {
				exprs = append(exprs, literal(c.in.text))
			}
			for _, x := range exprs {
				for _, m := range eximRun().FindAllStringSubmatch(x.val, -1) {
					if m[1] == "run" {
						c.shellCommand("sendmail -be ${run}", m[2])
					} else {
						c.use(&e, loadsLibrary, "sendmail -be ${"+m[1]+"}", literal(m[2]))
					}
				}
				c.raiseSecrets(&e, x)
			}
		}
	}
	return e
}

var muttFlags = getopt{short: "bcdemQs",
	roles: map[string]role{"-a": sendsFile, "-i": sendsFile, "-H": sendsFile, "-f": sendsFile, "-F": runsFile}}

// muttConsole: muttrc commands (mutt -e): `command` runs a shell command
// as it is read, "source CMD|" runs CMD, and variables name programs mutt
// runs and files it reads or writes.
var muttConsole = consoleLang{
	backticks: true,
	cmds: map[string][]act{
		"source": {{role: runsFile, word: 1}}, "set": {{role: setsVars}},
		"push": {{role: runsKeys}}, "exec": {{role: runsKeys}}, "macro": {{role: runsKeys}},
	},
	vars: map[string]role{
		"editor": runsCommand, "sendmail": runsCommand, "pager": runsCommand, "display_filter": runsCommand,
		"query_command": runsCommand, "print_command": runsCommand, "ispell": runsCommand,
		"new_mail_command": runsCommand, "inews": runsCommand, "tunnel": runsCommand, "shell": runsCommand,
		"mime_type_query_command": runsCommand, "external_search_command": runsCommand, "mixmaster": runsCommand,
		"record": writesFile, "history_file": writesFile, "debug_file": writesFile, "header_cache": writesFile,
		"message_cachedir": writesFile, "certificate_file": writesFile, "alias_file": writesFile,
		"postponed": writesFile, "mbox": writesFile, "signature": sendsFile, "spoolfile": sendsFile,
	},
	seps: []string{";"},
}

func mutt(c *call) effect {
	p := muttFlags.parse(c.args)
	ops := p.ops
	e := net(airlock.ClassNetConnect, "sends email")
	c.useOptions(&e, p.opts, muttFlags.roles)
	// -a takes several files, up to "--": an operand may be one.
	c.raiseReads(&e, ops...)
	for _, cmd := range p.values("-e") {
		if !cmd.static {
			c.runUnknown("mutt -e", cmd.text, "runs mutt commands only known at run time, which can run shell commands")
			continue
		}
		c.runConsole(&e, &muttConsole, "mutt -e", cmd.val)
	}
	return e
}

var msmtpFlags = getopt{short: "CXaf",
	long: names("--account --from --host --port --user --auth --domain --timeout --protocol --tls-trust-file " +
		"--tls-cert-file --tls-key-file --proxy-host --source-ip"),
	roles: map[string]role{
		"-C": runsFile, "--file": runsFile, "-X": writesFile, "--logfile": writesFile,
		"--passwordeval": runsCommand, "--aliases": sendsFile, "--socket": usesSocket,
	}}

var swaksFlags = getopt{short: "tfspdh", long: names("--to --from --server --port --helo --header --add-header " +
	"--auth --auth-user --auth-password --tls-cert --tls-key --protocol --quit-after"),
	roles: map[string]role{
		"--pipe": runsCommand, "--attach": sendsFile, "--attach-body": sendsFile, "--body": sendsFile,
		"--data": sendsFile, "-d": sendsFile, "--output-file": writesFile, "--output-file-stdout": writesFile,
		"--output-file-stderr": writesFile, "--config": runsFile, "--socket": usesSocket,
	}, single: true}

// Database clients.

// dbClient is a database client: the options that carry its queries and
// the console commands its queries may hold.
type dbClient struct {
	flags     getopt
	queries   []string // options whose value is a query
	scripts   []string // options naming a file of queries, which it runs instead of reading its input
	scriptExt string   // an operand with this extension is a script it runs (mongosh's .js)
	con       consoleLang
	local     bool   // the database is a file, the first operand (sqlite3)
	archive   string // an option after which the operands are archive arguments, which extract files (sqlite3 -A)
	ops       bool   // the operands (after the database) are queries (sqlite3's SQL)
	command   bool   // the operands are one query (redis-cli SET K V)
	safe      string // an option that turns the console's shell and file commands off (sqlite3's -safe)
	query     func(c *call, e *effect, q string)
}

func database(d *dbClient) rule {
	return func(c *call) effect {
		p := d.flags.parse(c.args)
		ops := p.ops
		e := net(airlock.ClassNetConnect, "runs database queries")
		if d.local {
			e = write(airlock.ClassFSWrite, "runs queries on a local database")
			if len(ops) > 0 {
				c.use(&e, sendsFile, c.name, ops[0])
				c.raiseWrites(&e, ops[0])
				ops = ops[1:]
			}
		}
		c.useOptions(&e, p.opts, d.flags.roles)
		con := &d.con
		if d.safe != "" && p.has(d.safe) {
			con = &consoleLang{}
		}
		if d.archive != "" && p.has(d.archive) {
			for _, op := range ops {
				c.use(&e, writesFile, c.name+" "+d.archive, op)
			}
			return e
		}
		queries := p.values(d.queries...)
		scripts := p.values(d.scripts...)
		for _, op := range ops {
			switch {
			case d.scriptExt != "" && strings.HasSuffix(op.val, d.scriptExt):
				c.use(&e, runsFile, c.name, op)
				scripts = append(scripts, op)
			case d.ops:
				queries = append(queries, op)
			}
		}
		if d.command && len(ops) > 0 {
			q, ok := joinValues(ops)
			queries = append(queries, arg{val: q, text: joinTexts(ops), static: ok})
		}
		for _, q := range queries {
			if !q.static {
				e.tier = max(e.tier, airlock.TierDestructive)
				e.reason = "runs database queries only known at run time, which may delete or change data"
				continue
			}
			c.dbQuery(&e, d, con, q.val)
		}
		if len(queries) == 0 && len(scripts) == 0 {
			if c.in.kind == inText {
				c.dbQuery(&e, d, con, c.in.text)
			} else {
				c.stdinConsole(&e, con, "queries")
			}
		}
		return e
	}
}

// dbQuery analyses a query and the console commands among it.
func (c *call) dbQuery(e *effect, d *dbClient, con *consoleLang, q string) {
	if destructiveQuery(q) && e.tier < airlock.TierDestructive {
		e.tier = airlock.TierDestructive
		e.reason = "runs database queries that delete or change data"
	}
	query := d.query
	if query == nil {
		query = (*call).sqlEffects
	}
	query(c, e, q)
	c.runConsole(e, con, c.name, q)
}

func destructiveQuery(q string) bool {
	q = strings.ToLower(q)
	for _, kw := range []string{"drop ", "delete ", "truncate ", "update ", "alter ", "flushall", "flushdb", "del ", "unlink "} {
		if strings.Contains(q, kw) || strings.HasPrefix(q, strings.TrimSpace(kw)) {
			return true
		}
	}
	return false
}

// SQL that touches local files or runs programs: COPY ... TO 'file' and
// SELECT ... INTO OUTFILE write a file (on the server, which may be this
// machine, or on the client: psql's \copy, clickhouse-client), COPY ...
// PROGRAM 'cmd' runs a shell command, sqlite3's writefile(), ATTACH and
// VACUUM INTO write, its edit() runs an editor command, and
// load_extension() and CREATE FUNCTION ... LANGUAGE C load libraries. A
// file it reads is judged by the secret it names.
var (
	sqlWrite = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:\bto|\binto|\boutfile|\bdumpfile|\battach|\bdatabase|\bwritefile\s*\()\s*(?:'((?:[^']|'')*)'|"([^"]*)")`)
	})
	sqlProgram = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:\bprogram|\bedit\s*\([^,]*,)\s*(?:'((?:[^']|'')*)'|"([^"]*)")`)
	})
	sqlLibrary = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bload_extension\s*\(|\blanguage\s+c\b`) })
	// psql's \copy names its file without quotes too.
	psqlCopy = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\\copy\s.*?\s(to|from)\s+(program\s+)?('(?:[^']|'')*'|"[^"]*"|[^\s\\]+)`)
	})
)

func (c *call) sqlEffects(e *effect, q string) {
	for _, m := range sqlWrite().FindAllStringSubmatch(q, -1) {
		c.use(e, writesFile, c.name, literal(strings.ReplaceAll(m[1], "''", "'")+m[2]))
	}
	for _, m := range sqlProgram().FindAllStringSubmatch(q, -1) {
		c.shellCommand(c.name+" program", strings.ReplaceAll(m[1], "''", "'")+m[2])
	}
	for _, m := range psqlCopy().FindAllStringSubmatch(q, -1) {
		f := strings.Trim(m[3], `'"`)
		switch {
		case m[2] != "":
			c.shellCommand(`psql \copy program`, f)
		case strings.EqualFold(m[1], "to"):
			c.use(e, writesFile, `psql \copy`, literal(f))
		default:
			c.use(e, sendsFile, `psql \copy`, literal(f))
		}
	}
	if sqlLibrary().MatchString(q) {
		c.use(e, loadsLibrary, c.name, literal("a database extension"))
	}
	c.raiseSecrets(e, literal(q))
}

// codeEffects judges code a client sends or runs (mongosh's JavaScript)
// by what it names: a secret it may read, a place where a write persists.
func (c *call) codeEffects(e *effect, q string) {
	c.raiseSecrets(e, literal(q))
	c.raisePersists(e, q, false)
}

// redisEffects: CONFIG SET dir or dbfilename chooses the file the server
// writes (on this machine, for a local server), MODULE LOAD loads a
// library.
func (c *call) redisEffects(e *effect, q string) {
	for _, line := range strings.Split(q, "\n") {
		f := consoleWords(strings.ToLower(line))
		switch {
		case len(f) > 3 && f[0] == "config" && f[1] == "set" && slices.Contains([]string{"dir", "dbfilename", "logfile", "appendfilename"}, f[2]):
			c.use(e, writesFile, "redis-cli config set", literal(consoleWords(line)[3]))
		case len(f) > 2 && f[0] == "module" && f[1] == "load":
			c.use(e, loadsLibrary, "redis-cli module load", literal(consoleWords(line)[2]))
		}
	}
}

var psql = &dbClient{
	flags: getopt{short: "cdvFPRTUhp", long: names("--command --dbname --set --variable --field-separator --pset " +
		"--record-separator --table-attr --host --port --username"),
		roles: map[string]role{
			"-f": runsFile, "--file": runsFile, "-o": writesFile, "--output": writesFile,
			"-L": writesFile, "--log-file": writesFile,
		}},
	queries: []string{"-c", "--command"},
	scripts: []string{"-f", "--file"},
	con: consoleLang{
		shell: []string{`\!`},
		cmds: map[string][]act{
			`\o`: {{role: writesFile, word: 1}}, `\out`: {{role: writesFile, word: 1}},
			`\w`: {{role: writesFile, word: 1}}, `\write`: {{role: writesFile, word: 1}},
			`\g`: {{role: writesFile, word: 1}}, `\gx`: {{role: writesFile, word: 1}},
			`\s`: {{role: writesFile, word: 1}}, `\lo_export`: {{role: writesFile, word: -1}},
			`\lo_import`: {{role: sendsFile, word: 1}}, `\i`: {{role: runsFile, word: 1}},
			`\include`: {{role: runsFile, word: 1}}, `\ir`: {{role: runsFile, word: 1}},
			`\include_relative`: {{role: runsFile, word: 1}}, `\e`: {{role: opensEditor}},
			`\edit`: {{role: opensEditor}}, `\ef`: {{role: opensEditor}}, `\ev`: {{role: opensEditor}},
		},
		backslash: true, backticks: true,
	},
}

var mysql = &dbClient{
	flags: getopt{short: "eDhPuS", long: names("--execute --database --host --port --user --socket --init-command " +
		"--default-character-set --ssl-ca --ssl-cert --ssl-key --login-path --prompt --delimiter"),
		optLong: names("--pager"),
		roles: map[string]role{
			"--pager": runsCommand, "--tee": writesFile, "--plugin-dir": loadsLibrary, "--default-auth": loadsLibrary,
			"--defaults-file": usesConfig, "--defaults-extra-file": usesConfig, "--load-data-local-dir": sendsFile,
		}},
	queries: []string{"-e", "--execute", "--init-command"},
	con: consoleLang{
		shell: []string{`\!`, "system ", "system\t"},
		cmds: map[string][]act{
			"tee": {{role: writesFile, word: 1}}, `\T`: {{role: writesFile, word: 1}},
			"pager": {{role: runsCommand}}, `\P`: {{role: runsCommand}},
			"source": {{role: runsFile, word: 1}}, `\.`: {{role: runsFile, word: 1}},
			"edit": {{role: opensEditor}}, `\e`: {{role: opensEditor}},
		},
		backslash: true, fold: true,
	},
}

var sqlite = &dbClient{
	flags: getopt{long: names("-cmd -separator -nullvalue -newline -vfs -mmap -maxsize -nonce -lookaside -pagecache"),
		flags: names("-safe"), roles: map[string]role{"-init": runsFile}, exact: true, single: true},
	queries: []string{"-cmd"},
	local:   true, ops: true, safe: "-safe", archive: "-A",
	con: consoleLang{
		cmds: map[string][]act{
			".shell": {{role: runsCommand}}, ".system": {{role: runsCommand}},
			".output": {{role: writesFile, word: -1}}, ".once": {{role: writesFile, word: -1}, {role: opensEditor}},
			".read": {{role: runsFile, word: 1}}, ".import": {{role: sendsFile, word: 1}},
			".load": {{role: loadsLibrary, word: 1}}, ".log": {{role: writesFile, word: 1}},
			".backup": {{role: writesFile, word: -1}}, ".save": {{role: writesFile, word: -1}},
			".restore": {{role: sendsFile, word: -1}}, ".open": {{role: sendsFile, word: -1}, {role: writesFile, word: -1}},
			".clone": {{role: writesFile, word: 1}}, ".excel": {{role: opensEditor}},
			".trace": {{role: writesFile, word: -1}}, ".iotrace": {{role: writesFile, word: 1}},
			".archive": {{role: writesFile}},
		},
		abbrev: 2,
	},
}

var mongosh = &dbClient{
	flags: getopt{short: "up", long: names("--eval --host --port --username --password --authenticationDatabase " +
		"--authenticationMechanism --tlsCAFile --tlsCertificateKeyFile"),
		roles: map[string]role{"-f": runsFile, "--file": runsFile}, exact: true},
	queries:   []string{"--eval"},
	scripts:   []string{"-f", "--file"},
	scriptExt: ".js",
	query:     (*call).codeEffects,
}

var redis = &dbClient{
	flags: getopt{short: "hpsaunrid",
		long:  names("--user --pass --cacert --cert --key --tls-ciphers --sni --pattern --count"),
		roles: map[string]role{"--rdb": writesFile, "--functions-rdb": writesFile, "--eval": sendsFile}, exact: true},
	command: true,
	query:   (*call).redisEffects,
}

var sqlcmd = &dbClient{
	flags:   getopt{short: "SUPdHltQqvfswhyYmVazZ", roles: map[string]role{"-o": writesFile, "-i": runsFile}},
	queries: []string{"-Q", "-q"},
	scripts: []string{"-i"},
	safe:    "-X",
	con: consoleLang{
		shell: []string{"!!", ":!!"},
		cmds: map[string][]act{
			":r": {{role: runsFile, word: 1}}, ":out": {{role: writesFile, word: 1}},
			":error": {{role: writesFile, word: 1}}, ":perftrace": {{role: writesFile, word: 1}},
			"ed": {{role: opensEditor}}, ":ed": {{role: opensEditor}},
		},
		fold: true,
	},
}

var clickhouse = &dbClient{
	flags: getopt{short: "qhud", long: names("--query --host --port --user --password --database --format"),
		roles: map[string]role{
			"--queries-file": runsFile, "--history_file": writesFile, "--server_logs_file": writesFile,
			"-C": usesConfig, "--config-file": usesConfig,
		}},
	queries: []string{"-q", "--query"},
	scripts: []string{"--queries-file"},
}

var cqlsh = &dbClient{
	flags: getopt{short: "ukpe", long: names("--execute --username --password --keyspace --encoding --cqlversion " +
		"--request-timeout --connect-timeout"),
		roles: map[string]role{"-f": runsFile, "--file": runsFile, "--cqlshrc": usesConfig}},
	queries: []string{"-e", "--execute"},
	scripts: []string{"-f", "--file"},
	con: consoleLang{
		cmds: map[string][]act{"source": {{role: runsFile, word: 1}}, "capture": {{role: writesFile, word: 1}}},
		fold: true,
	},
}

// Runners that download what they run.

var npxFlags = getopt{short: "pc", long: names("--package --call --from --with --python --registry --index-url"),
	roles: npmRoles, exact: true}

func npx(c *call) effect {
	p := npxFlags.split(c.args)
	e := c.downloadRun(p)
	c.useOptions(&e, p.opts, npxFlags.roles)
	return e
}

// downloadRun runs a package's program, downloading the package first
// unless told not to (npx, npm exec, uvx).
func (c *call) downloadRun(p parsed) effect {
	ops := p.ops
	pkg := "a package"
	if len(ops) > 0 {
		pkg = ops[0].text
	}
	e := effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs " + pkg}
	if p.has("--no-install", "--offline", "--no") {
		e = exec("runs a locally installed package")
	}
	calls := p.values("-c", "--call")
	for _, cmd := range calls {
		if !cmd.static {
			return unknown("runs a command only known at run time")
		}
		c.runScript(c.name+" -c", cmd.val, c.in)
	}
	if len(calls) == 0 && len(ops) > 0 {
		// The command is the package's program, or a program of that name
		// already there (npx /bin/sh).
		c.run(c.name, ops, effect{})
	}
	return e
}
