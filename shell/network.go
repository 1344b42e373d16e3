package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
)

// Network: HTTP clients and downloaders, file transfer, raw connections,
// mail, database clients, and runners that download what they run.

var netCommands = map[string]rule{
	"curl": curl, "wget": wget, "http": httpie, "https": httpie, "xh": httpie, "xhs": httpie,
	"aria2c": downloader("downloads files", "-d", "--dir", "-o", "--out"), "axel": downloader("downloads files", "-o", "--output"),
	"scp": scp, "sftp": sftp, "rsync": rsync,
	"nc": netcat, "ncat": netcat, "netcat": netcat, "socat": socat,
	"telnet": connect("opens a network connection"), "ftp": connect("transfers files over FTP"),
	"tftp": connect("transfers files over TFTP"), "lftp": connect("transfers files"),
	"ping": connect("sends network probes"), "ping6": connect("sends network probes"),
	"dig": connect("queries DNS"), "nslookup": connect("queries DNS"), "host": connect("queries DNS"),
	"drill": connect("queries DNS"), "traceroute": connect("traces a network route"),
	"tracepath": connect("traces a network route"), "mtr": connect("traces a network route"),
	"whois": connect("queries WHOIS"), "nmap": connect("scans network hosts"), "arping": connect("sends network probes"),
	"mosh": connect("connects to another host"), "rdesktop": connect("connects to another host"),
	"openssl": openssl,
	"mail":    mail, "mailx": mail, "sendmail": mail, "mutt": mail, "msmtp": mail, "swaks": mail,
	"psql": database, "mysql": database, "mariadb": database, "sqlite3": database, "mongosh": database,
	"mongo": database, "redis-cli": database, "sqlcmd": database, "clickhouse-client": database, "cqlsh": database,
	"npx": npx, "pnpx": npx, "bunx": npx, "uvx": npx,
}

func connect(reason string) rule { return fixed(net(airlock.ClassNetConnect, reason)) }

// fileRefs returns the local files an HTTP client would send: "@file",
// "name=@file", "name=<file", "file://path".
func fileRefs(words []arg) []arg {
	var out []arg
	for _, w := range words {
		if !w.static {
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

func curl(c *call) effect {
	e := net(airlock.ClassNetHTTP, "makes HTTP requests")
	if m, ok := c.value("-X", "--request"); ok && strings.EqualFold(m.val, "DELETE") {
		e = effect{class: airlock.ClassNetHTTP, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: "sends an HTTP DELETE request"}
	}
	outs := c.values("-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
		"--trace-ascii", "--stderr", "--etag-save", "--hsts", "--alt-svc")
	if c.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name") {
		outs = append(outs, literal("."))
	}
	c.raiseWrites(&e, outs...)
	sent := fileRefs(c.args)
	sent = append(sent, c.values("-T", "--upload-file", "-K", "--config", "--data-binary", "--json")...)
	c.raiseReads(&e, sent...)
	return e
}

func wget(c *call) effect {
	e := net(airlock.ClassNetHTTP, "downloads files")
	outs := c.values("-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-a", "--append-output")
	if len(outs) == 0 {
		outs = []arg{literal(".")}
	}
	c.raiseWrites(&e, outs...)
	c.raiseReads(&e, c.values("--post-file", "--body-file", "-i", "--input-file")...)
	c.raiseReads(&e, fileRefs(c.operands())...)
	return e
}

func httpie(c *call) effect {
	e := net(airlock.ClassNetHTTP, "makes HTTP requests")
	if ops := c.operands(); len(ops) > 0 && strings.EqualFold(ops[0].val, "DELETE") {
		e = effect{class: airlock.ClassNetHTTP, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: "sends an HTTP DELETE request"}
	}
	outs := c.values("-o", "--output")
	if c.has("-d", "--download") && len(outs) == 0 {
		outs = []arg{literal(".")}
	}
	c.raiseWrites(&e, outs...)
	c.raiseReads(&e, fileRefs(c.operands())...)
	return e
}

func downloader(reason string, outOpts ...string) rule {
	return func(c *call) effect {
		e := net(airlock.ClassNetHTTP, reason)
		outs := c.values(outOpts...)
		if len(outs) == 0 {
			outs = []arg{literal(".")}
		}
		c.raiseWrites(&e, outs...)
		return e
	}
}

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
		var local []arg
		for _, s := range ops[:len(ops)-1] {
			if !isRemote(s) {
				local = append(local, s)
			}
		}
		c.raiseReads(&e, local...)
	}
	return e
}

func scp(c *call) effect {
	opts, _ := splitOpts(c.args, optSpec{short: "cFiJlOoPS"})
	c.proxyCommands(opts)
	if prog, ok := optVal(opts, "-S"); ok {
		c.runWords("scp -S", []arg{prog}, input{})
	}
	return transfer(c, c.operands("-c", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-D", "-X"), "copies files to or from another host")
}

func sftp(c *call) effect {
	opts, _ := splitOpts(c.args, optSpec{short: "BbcDFiJloPRSs"})
	c.proxyCommands(opts)
	e := net(airlock.ClassNetConnect, "transfers files with another host")
	if b, ok := optVal(opts, "-b"); ok {
		c.raiseReads(&e, b)
	}
	return e
}

func rsync(c *call) effect {
	if sh, ok := c.value("-e", "--rsh"); ok {
		c.runWords("rsync -e", []arg{sh}, input{})
	}
	ops := c.operands("-e", "--rsh", "--rsync-path", "-f", "--filter", "--exclude", "--include", "--exclude-from",
		"--include-from", "--files-from", "-T", "--temp-dir", "--compare-dest", "--copy-dest", "--link-dest",
		"--backup-dir", "--suffix", "--chmod", "--chown", "--usermap", "--groupmap", "-B", "--block-size",
		"--bwlimit", "--timeout", "--contimeout", "--port", "--password-file", "--log-file", "--partial-dir",
		"--max-size", "--min-size", "--max-delete", "--modify-window", "--out-format", "--skip-compress",
		"--compress-choice", "--checksum-choice", "--info", "--debug", "--iconv", "--address", "--sockopts",
		"--outbuf", "--stop-after", "--stop-at", "--mkpath")
	e := transfer(c, ops, "synchronises files with another host")
	if c.has("--delete", "--del", "--delete-before", "--delete-during", "--delete-delay", "--delete-after",
		"--delete-excluded", "--remove-source-files") {
		e.tier = max(e.tier, airlock.TierDestructive)
		e.reason = "synchronises files and deletes what the source lacks"
	}
	return e
}

func netcat(c *call) effect {
	if c.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec") {
		return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged, reason: "gives a network peer a program or shell"}
	}
	return net(airlock.ClassNetConnect, "opens a network connection")
}

func socat(c *call) effect {
	for _, a := range c.operands() {
		up := strings.ToUpper(a.val)
		if !a.static || strings.HasPrefix(up, "EXEC:") || strings.HasPrefix(up, "SYSTEM:") {
			return effect{class: airlock.ClassNetConnect, cap: airlock.CapNetworkEgress, tier: airlock.TierPrivileged, reason: "connects a program or shell to the network"}
		}
	}
	return net(airlock.ClassNetConnect, "relays network connections")
}

func openssl(c *call) effect {
	sub := ""
	if len(c.args) > 0 {
		sub = c.args[0].val
	}
	switch sub {
	case "s_client", "s_server", "s_time", "ocsp":
		return net(airlock.ClassNetConnect, "opens a TLS connection")
	}
	e := read("runs a cryptographic operation")
	if outs := c.values("-out", "-keyout"); len(outs) > 0 {
		e = write(airlock.ClassFSWrite, "writes keys or certificates")
		c.raiseWrites(&e, outs...)
	}
	c.raiseReads(&e, c.operands()...)
	return e
}

func mail(c *call) effect {
	e := net(airlock.ClassNetConnect, "sends email")
	c.raiseReads(&e, c.values("-a", "-A", "--attach", "--attach-file")...)
	return e
}

// database is a database client: a query that drops, deletes or updates
// data is destructive.
func database(c *call) effect {
	e := net(airlock.ClassNetConnect, "runs database queries")
	if c.name == "sqlite3" {
		e = write(airlock.ClassFSWrite, "runs queries on a local database")
	}
	queries := c.values("-c", "--command", "-e", "--execute", "--eval", "-Q", "-q", "--query")
	if c.name == "sqlite3" || c.name == "redis-cli" {
		ops := c.operands("-cmd", "-separator", "-nullvalue", "-h", "-p", "-a", "-n", "-u", "--user", "--pass")
		if len(ops) > 1 {
			queries = append(queries, ops[1:]...)
		} else if c.name == "redis-cli" && len(ops) > 0 {
			queries = append(queries, ops...)
		}
	}
	if c.in.kind == inText {
		queries = append(queries, literal(c.in.text))
	}
	for _, q := range queries {
		if !q.static || destructiveQuery(q.val) {
			e.tier = airlock.TierDestructive
			e.reason = "runs database queries that delete or change data"
			return e
		}
	}
	return e
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

func npx(c *call) effect {
	if cmd, ok := c.value("-c", "--call"); ok {
		if !cmd.static {
			return unknown("runs a command only known at run time")
		}
		c.runScript(c.name+" -c", cmd.val, c.in)
	}
	if c.has("--no-install", "--offline", "--no") {
		return exec("runs a locally installed package")
	}
	pkg := "a package"
	if ops := c.operands("-p", "--package", "-c", "--call", "--from", "--with", "--python"); len(ops) > 0 {
		pkg = ops[0].text
	}
	return effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "downloads and runs " + pkg}
}
