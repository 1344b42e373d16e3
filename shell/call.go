package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// call is one command being classified.
type call struct {
	name   string               // the program, resolved ("rm" for /bin/rm)
	words  []arg                // every word, the program first
	args   []arg                // the words after the program (or after a subcommand, in sub-rules)
	in     input                // its standard input
	cwd    string               // its working directory, "" when unknown
	start  string               // the action's working directory, "" when unknown
	gitSub string               // the git subcommand whose rule is deciding (see gitHas)
	lost   bool                 // cwd is "" because a cd went somewhere only known at run time
	envs   []string             // the variables its prefix assignments set (X=1 cmd)
	xtrace bool                 // set -x: the shell prints its words before running it
	cat    *sensitive.Catalogue // the sensitive paths (nil: the built-in catalogue)
	xargs  bool                 // xargs appends operands at run time
	subs   []nested             // what it runs
	txt    string
	// plainDir is the script's last working directory found to hold no
	// secrets or devices (nil: none kept): mayName asks it of every bare
	// word, and a script's commands mostly share one.
	plainDir *string
}

// text is the command as shown: its words joined by single spaces.
func (c *call) text() string {
	if c.txt == "" {
		var b strings.Builder
		for _, w := range c.words {
			if w.extra {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w.text)
		}
		c.txt = b.String()
	}
	return c.txt
}

// delegate classifies the command with rule r as if args were its
// arguments (a subcommand's rule sees the words after the subcommand).
func (c *call) delegate(args []arg, r rule) effect {
	saved := c.args
	c.args = args
	e := r(c)
	c.args = saved
	return e
}

// run asks for argv to be classified as a command that c runs. The returned
// pointer is valid until the next call of run or runScript.
func (c *call) run(via string, argv []arg, floor effect) *nested {
	c.subs = append(c.subs, nested{via: via, argv: argv, in: c.in, floor: floor})
	return &c.subs[len(c.subs)-1]
}

// runScript asks for script to be parsed and analysed as code that c runs.
func (c *call) runScript(via, script string, in input) *nested {
	c.subs = append(c.subs, nested{via: via, script: script, in: in})
	return &c.subs[len(c.subs)-1]
}

// runUnknown records that c runs something Airlock cannot analyse.
func (c *call) runUnknown(via, text, reason string) {
	c.subs = append(c.subs, nested{via: via, unknown: reason, text: text})
}

// runWords runs words that a shell will parse (eval, watch, ssh): their
// values joined by spaces, or an unknown entry when one is dynamic.
func (c *call) runWords(via string, words []arg, in input) *nested {
	script, ok := joinValues(words)
	if !ok {
		c.runUnknown(via, joinTexts(words), "runs a command only known at run time")
		return &c.subs[len(c.subs)-1]
	}
	return c.runScript(via, script, in)
}

func joinValues(words []arg) (string, bool) {
	var b strings.Builder
	for i, w := range words {
		if !w.static {
			return "", false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.val)
	}
	return b.String(), true
}

func joinTexts(words []arg) string {
	var b strings.Builder
	for _, w := range words {
		if w.extra {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.text)
	}
	return b.String()
}

// resolve makes a path operand absolute against the command's directory.
func (c *call) resolve(p string) string { return resolvePath(c.cwd, p) }

// raiseReads makes e a credential read when one of args names a secret.
func (c *call) raiseReads(e *effect, args ...arg) {
	if e.tier >= airlock.TierPrivileged {
		return
	}
	for _, a := range args {
		v, ok := a.pathValue()
		if !ok {
			continue
		}
		if throughLink(v) {
			*e = linkRead(v)
			return
		}
		if s, ok := secretRead(c.cat, c.resolve(v), a.glob); ok {
			*e = s
			return
		}
		if a.under {
			c.raiseReadTree(e, a)
		}
	}
}

// raiseReadTree makes e a secret read when one of dirs, read whole (a
// recursive search, an archive, a recursive copy), holds secrets somewhere
// inside: grep -r TODO ~ reads ~/.ssh too, tar czf - / reads /etc/shadow.
func (c *call) raiseReadTree(e *effect, dirs ...arg) {
	if e.tier >= airlock.TierPrivileged {
		return
	}
	for _, d := range dirs {
		v, ok := d.pathValue()
		if !ok {
			continue
		}
		if p := sensitive.Clean(c.resolve(v), ""); c.cat.HoldsSecrets(p) {
			*e = effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
				reason: "reads every file under " + p + ", credentials included"}
			return
		}
	}
}

// printsEnvironment is printing the whole environment, where agents' and
// programs' tokens and keys live (env, printenv, export -p, set).
var printsEnvironment = effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead,
	tier: airlock.TierPrivileged, reason: "prints the environment, where tokens and keys live"}

// raiseNamed makes e a secret read when one of the command's words names a
// secret, wherever it sits: an operand, an option's value (--file=X, -fX),
// a response file (@X), a URL (file://X), or a string the program
// evaluates (an SQL command, a script). It runs for every command whose
// rule found nothing above a write, so that no program's way of reading a
// file is missed: many print what they read, if only in an error message
// (date -f, ss -F). A program that only shows information about files
// (ls, stat) reads no contents, so only its options and response files
// count. A network client's own rule judges what it reads, since using a
// key to authenticate (ssh -i) is not reading it out.
func (c *call) raiseNamed(e *effect, metadata bool) {
	if e.none || e.inert || e.tier >= airlock.TierNetworkEgress {
		return
	}
	for i := range c.args {
		a := &c.args[i]
		v, ok := a.knownPath()
		if !ok || metadata && !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "@") {
			continue
		}
		if s, ok := c.secretIn(v, a.glob); ok {
			*e = s
			return
		}
	}
	if e.class == airlock.ClassProcessExec {
		c.raiseCode(e)
	}
}

// raiseCode raises a program Airlock cannot see into (an unknown program,
// inline code, a build) by what its words name: a place where a write
// persists (~/.bashrc, ~/.ssh) may be written, and a URL or network code
// connects.
func (c *call) raiseCode(e *effect) {
	for i := range c.args {
		if v, ok := c.args[i].knownPath(); ok {
			c.raisePersists(e, v, c.args[i].glob)
			raiseNetwork(e, v)
		}
	}
}

// raiseText raises code that Airlock reads but cannot parse (a
// here-document given to an interpreter, a query) by what it names, as
// raiseNamed and raiseCode do for the words of a command: a secret, a
// place where a write persists, the network.
func (c *call) raiseText(e *effect, text string) {
	if s, ok := c.secretIn(text, false); ok && e.tier < airlock.TierPrivileged {
		*e = s
	}
	c.raisePersists(e, text, false)
	raiseNetwork(e, text)
}

// raiseNetCode raises code Airlock cannot see that is already a network
// program (it loads a socket library, opens a port) by what its words
// name, as raiseNamed and raiseCode do below network-egress: a secret it
// may send, a place where a write persists.
func (c *call) raiseNetCode(e *effect) {
	if e.tier < airlock.TierNetworkEgress {
		return
	}
	c.raiseSent(e)
	c.persists(e)
}

// raiseSent raises a network program by the secrets its words name: what
// it reads it sends (an upload, a request body, a file:// parameter) or
// prints, which raiseNamed does not judge for programs at network-egress
// and above. Options that only use a key to authenticate (skip, with the
// value they take) do not count.
func (c *call) raiseSent(e *effect, skip ...string) {
	if e.none {
		return
	}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if name, _, eq := strings.Cut(a.val, "="); a.static && slices.Contains(skip, name) {
			if !eq {
				i++
			}
			continue
		}
		c.raiseSecrets(e, a)
	}
}

// raiseSecrets makes e a secret read when one of words names a secret,
// in itself or in a path inside it: for a network client, the queries and
// code it sends or runs, which read what they name.
func (c *call) raiseSecrets(e *effect, words ...arg) {
	for i := range words {
		if e.tier >= airlock.TierPrivileged {
			return
		}
		if v, ok := words[i].knownPath(); ok {
			if s, ok := c.secretIn(v, words[i].glob); ok {
				*e = s
			}
		}
	}
}

// persists makes e privileged when a word names a place where a write
// persists: whichever option names it (a compiler's output, a path in
// code), the program may write there.
func (c *call) persists(e *effect) {
	for i := range c.args {
		if v, ok := c.args[i].knownPath(); ok {
			c.raisePersists(e, v, c.args[i].glob)
		}
	}
}

// raisePersists makes e privileged when v names a place where a write
// persists (~/.bashrc, ~/.ssh): the program may write there.
func (c *call) raisePersists(e *effect, v string, glob bool) {
	if e.tier >= airlock.TierPrivileged {
		return
	}
	if p, ok := c.persistIn(v, glob); ok {
		e.cap, e.tier, e.generic = airlock.CapHostAdmin, airlock.TierPrivileged, false
		e.reason += ", and names " + p + ", which it may write"
	}
}

// raiseNetwork makes e a network program when v is a URL or code that
// opens network connections.
func raiseNetwork(e *effect, v string) {
	if e.tier < airlock.TierNetworkEgress && networked(v) {
		e.cap, e.tier, e.generic = airlock.CapNetworkEgress, airlock.TierNetworkEgress, false
		e.reason += ", and connects to the network"
	}
}

// persistIn finds, in a word, a path whose writing persists.
func (c *call) persistIn(v string, glob bool) (string, bool) {
	found := ""
	eachPath(v, func(tok string) bool {
		if p := c.resolve(tok); c.cat.Persists(p, glob) {
			found = sensitive.Clean(p, "")
			return true
		}
		return false
	})
	return found, found != ""
}

// networked reports whether a word is a URL or code that opens network
// connections.
func networked(v string) bool {
	if strings.Contains(v, "://") {
		return true
	}
	if !strings.ContainsAny(v, "(; \n") {
		return false // not code
	}
	l := strings.ToLower(v)
	for _, k := range networkCode {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

// networkCode are words that code opening connections uses, in the
// languages agents run inline.
var networkCode = []string{
	"socket", "http", "urllib", "fsockopen", "/inet/", "net.connect", "net.createserver",
	"require(\"net\")", "require('net')", "smtp", "ftp", "telnet", "paramiko", "websocket",
	"fetch(", "download(", "open-uri", "lwp::", "net::", "curl",
}

// secretIn finds a secret named in a word: the word itself, or a path
// inside it.
func (c *call) secretIn(v string, glob bool) (effect, bool) {
	if !strings.HasPrefix(v, "-") && strings.Contains(v, "/") && throughLink(v) {
		return linkRead(v), true
	}
	if !strings.HasPrefix(v, "-") && c.mayName(v, glob) {
		if s, ok := secretRead(c.cat, c.resolve(v), glob); ok {
			return s, true
		}
	}
	var found effect
	ok := eachPath(v, func(tok string) bool {
		if throughLink(tok) {
			found = linkRead(tok)
			return true
		}
		s, ok := secretRead(c.cat, c.resolve(tok), glob)
		found = s
		return ok
	})
	return found, ok
}

// mayName reports whether a word may name a secret: a path, or a bare name
// that is a credential file's or that sits in a directory of secrets or
// devices. Most words (status, ./..., -n) are none, and are not resolved.
func (c *call) mayName(v string, glob bool) bool {
	if v == "" || v[0] == '/' || v[0] == '~' || strings.Contains(v, "/") || c.cat.SecretName(v, glob) {
		return true
	}
	if c.cwd == "" {
		return false
	}
	if c.plainDir != nil && *c.plainDir == c.cwd {
		return false
	}
	_, secret := c.cat.Secret(c.cwd, false)
	secret = secret || strings.HasPrefix(c.cwd, "/dev") || strings.HasPrefix(c.cwd, "/proc")
	if !secret && c.plainDir != nil {
		*c.plainDir = c.cwd
	}
	return secret
}

// eachPath calls f with each absolute or "~"-relative path inside a word,
// until f returns true.
func eachPath(v string, f func(string) bool) bool {
	v = strings.ReplaceAll(v, "file://", " ")
	for v != "" {
		tok := v
		if i := strings.IndexAny(v, pathSeparators); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			v = ""
		}
		if tok != "" && (tok[0] == '/' || tok[0] == '~') && f(tok) {
			return true
		}
	}
	return false
}

// pathSeparators end a path inside a longer word: an option's "=", a
// response file's "@", a "file:" prefix, quotes, brackets and the
// punctuation of code and queries.
const pathSeparators = " \t\n'\"`=@:;,()<>|&{}$"

// raiseWrites makes e privileged when one of args is a system path.
func (c *call) raiseWrites(e *effect, args ...arg) {
	for _, a := range args {
		if e.tier >= airlock.TierPrivileged {
			return
		}
		if v, ok := a.pathValue(); ok {
			raiseWrite(c.cat, e, c.resolve(v), a.glob)
		}
	}
}

// writesTo raises e to a write of the files given, when there are any.
func (c *call) writesTo(e *effect, reason string, files ...arg) {
	if len(files) == 0 {
		return
	}
	w := write(airlock.ClassFSWrite, reason)
	c.raiseWrites(&w, files...)
	*e = worse(*e, w)
}

// optWrite is the effect of a program's writing a file it is given (a
// log, a report): a write, or a system change.
func (c *call) optWrite(reason string, f arg) effect {
	var e effect
	c.writesTo(&e, reason+" "+f.text, f)
	return e
}

// envAssigns consumes the NAME=VALUE words that env and sudo accept before
// the command, and returns why one of them matters ("" if none does) and the
// words after them.
func (c *call) envAssigns(args []arg, via string) (reason string, rest []arg) {
	for len(args) > 0 {
		a := args[0]
		name, val, ok := strings.Cut(a.val, "=")
		if !a.static || !ok || !syntaxValidName(name) {
			break
		}
		if r, bad := sensitiveVar(name); bad {
			reason = r
		} else if commandVar(name) {
			c.runScript(via+" "+name, commandScript(name, val), input{})
		}
		args = args[1:]
	}
	return reason, args
}

func syntaxValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '_' && !(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') && !(i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}
