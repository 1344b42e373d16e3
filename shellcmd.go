package airlock

import (
	"slices"
	"strings"
)

// The programs Airlock knows, and how their subcommands and options change
// what they do. A program that is not here runs as "process.exec" (write),
// marked Generic so that a policy classifier may say more.

// shEffect is what one command does.
type shEffect struct {
	class   Class
	cap     Capability
	tier    RiskTier
	reason  string
	generic bool
	inert   bool
	none    bool // a pure wrapper: only what it runs is recorded
}

// shRule classifies one command. It may also ask for what the command runs
// to be analysed (shCall.run, shCall.runScript).
type shRule func(c *shCall) shEffect

func shRead(reason string) shEffect {
	return shEffect{class: ClassFSRead, cap: CapWorkspaceRead, tier: TierRead, reason: reason}
}

func shWrite(class Class, reason string) shEffect {
	return shEffect{class: class, cap: CapWorkspaceWrite, tier: TierWrite, reason: reason}
}

func shPerm(reason string) shEffect {
	return shEffect{class: ClassFSPermissions, cap: CapWorkspaceWrite, tier: TierWrite, reason: reason}
}

func shDelete(reason string) shEffect {
	return shEffect{class: ClassFSDelete, cap: CapWorkspaceDelete, tier: TierDestructive, reason: reason}
}

func shExec(reason string) shEffect {
	return shEffect{class: ClassProcessExec, cap: CapProcessExec, tier: TierWrite, reason: reason}
}

func shKill(reason string) shEffect {
	return shEffect{class: ClassProcessKill, cap: CapProcessSignal, tier: TierDestructive, reason: reason}
}

func shNet(class Class, reason string) shEffect {
	return shEffect{class: class, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: reason}
}

func shAdmin(reason string) shEffect {
	return shEffect{class: ClassSystemAdmin, cap: CapHostAdmin, tier: TierPrivileged, reason: reason}
}

func shAdminDestroy(reason string) shEffect {
	return shEffect{class: ClassSystemAdmin, cap: CapHostAdmin, tier: TierDestructive, reason: reason}
}

func shUnknown(reason string) shEffect {
	return shEffect{class: ClassUnknown, cap: CapUnknown, tier: TierPrivileged, reason: reason}
}

func shInert(reason string) shEffect {
	return shEffect{class: ClassShellBuiltin, cap: CapShellState, tier: TierRead, reason: reason, inert: true}
}

func shEnv(reason string) shEffect {
	return shEffect{class: ClassShellEnv, cap: CapUnknown, tier: TierPrivileged, reason: reason}
}

func shGitRead(reason string) shEffect {
	return shEffect{class: ClassGitRead, cap: CapGitRead, tier: TierRead, reason: reason}
}

func shGitWrite(reason string) shEffect {
	return shEffect{class: ClassGitWrite, cap: CapGitWrite, tier: TierWrite, reason: reason}
}

func shGitNet(class Class, reason string) shEffect {
	return shEffect{class: class, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: reason}
}

func shGitDestroy(reason string) shEffect {
	return shEffect{class: ClassGitWrite, cap: CapGitWrite, tier: TierDestructive, reason: reason}
}

func shInfraRead(reason string) shEffect {
	return shEffect{class: ClassInfraRead, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: reason}
}

func shInfraChange(tier RiskTier, reason string) shEffect {
	return shEffect{class: ClassInfraChange, cap: CapHostAdmin, tier: tier, reason: reason}
}

func shSpend(reason string) shEffect {
	return shEffect{class: ClassSpend, cap: CapSpend, tier: TierSpend, reason: reason}
}

func shInstall(tier RiskTier, reason string) shEffect {
	e := shEffect{class: ClassPackageInstall, cap: CapNetworkEgress, tier: tier, reason: reason}
	if tier == TierPrivileged {
		e.cap = CapHostAdmin
	} else if tier < TierNetworkEgress {
		e.cap = CapWorkspaceWrite
	}
	return e
}

func shPublish(reason string) shEffect {
	return shEffect{class: ClassPackagePublish, cap: CapNetworkEgress, tier: TierDestructive, reason: reason}
}

// shMax returns the more dangerous of two effects (a on ties).
func shMax(a, b shEffect) shEffect {
	if b.tier > a.tier {
		return b
	}
	return a
}

// shCall is one command being classified.
type shCall struct {
	name  string     // the program, resolved ("rm" for /bin/rm)
	words []shArg    // every word, the program first
	args  []shArg    // the words after the program (or after a subcommand, in sub-rules)
	in    shInput    // its standard input
	cwd   string     // its working directory, "" when unknown
	xargs bool       // xargs appends operands at run time
	subs  []shNested // what it runs
	txt   string
}

// text is the command as shown: its words joined by single spaces.
func (c *shCall) text() string {
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
func (c *shCall) delegate(args []shArg, r shRule) shEffect {
	saved := c.args
	c.args = args
	e := r(c)
	c.args = saved
	return e
}

// run asks for argv to be classified as a command that c runs. The returned
// pointer is valid until the next call of run or runScript.
func (c *shCall) run(via string, argv []shArg, floor shEffect) *shNested {
	c.subs = append(c.subs, shNested{via: via, argv: argv, in: c.in, floor: floor})
	return &c.subs[len(c.subs)-1]
}

// runScript asks for script to be parsed and analysed as code that c runs.
func (c *shCall) runScript(via, script string, in shInput) *shNested {
	c.subs = append(c.subs, shNested{via: via, script: script, in: in})
	return &c.subs[len(c.subs)-1]
}

// runUnknown records that c runs something Airlock cannot analyse.
func (c *shCall) runUnknown(via, text, reason string) {
	c.subs = append(c.subs, shNested{via: via, unknown: reason, text: text})
}

// runWords runs words that a shell will parse (eval, watch, ssh): their
// values joined by spaces, or an unknown entry when one is dynamic.
func (c *shCall) runWords(via string, words []shArg, in shInput) *shNested {
	script, ok := shJoinValues(words)
	if !ok {
		c.runUnknown(via, shJoinTexts(words), "runs a command only known at run time")
		return &c.subs[len(c.subs)-1]
	}
	return c.runScript(via, script, in)
}

func shJoinValues(words []shArg) (string, bool) {
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

func shJoinTexts(words []shArg) string {
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
func (c *shCall) resolve(p string) string { return shResolve(c.cwd, p) }

// raiseReads makes e a credential read when one of args names a secret.
func (c *shCall) raiseReads(e *shEffect, args ...shArg) {
	if e.tier >= TierPrivileged {
		return
	}
	for _, a := range args {
		v, ok := a.pathValue()
		if !ok {
			continue
		}
		if p := c.resolve(v); shCredentialPath(p, a.glob) {
			*e = shCredentials(p)
			return
		}
	}
}

// raiseWrites makes e privileged when one of args is a system path.
func (c *shCall) raiseWrites(e *shEffect, args ...shArg) {
	for _, a := range args {
		if e.tier >= TierPrivileged {
			return
		}
		if v, ok := a.pathValue(); ok {
			shRaiseWrite(e, c.resolve(v), a.glob)
		}
	}
}

// has reports whether one of opts appears before "--". A short option ("-f")
// also matches inside a cluster ("-rf"); a long one ("--force") also with a
// value ("--force=x"); anything else ("-delete") must match exactly.
func (c *shCall) has(opts ...string) bool { return shHas(c.args, opts...) }

func shHas(args []shArg, opts ...string) bool {
	for _, a := range args {
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			continue
		}
		if v == "--" {
			return false
		}
		for _, o := range opts {
			if shOptMatch(v, o) {
				return true
			}
		}
	}
	return false
}

func shOptMatch(word, opt string) bool {
	switch {
	case strings.HasPrefix(opt, "--"):
		return word == opt || strings.HasPrefix(word, opt) && word[len(opt)] == '='
	case len(opt) == 2 && opt[0] == '-':
		return !strings.HasPrefix(word, "--") && strings.IndexByte(word[1:], opt[1]) >= 0
	}
	return word == opt
}

// value returns the value of the first of opts found before "--": "-o FILE",
// "-oFILE", "--output FILE", "--output=FILE".
func (c *shCall) value(opts ...string) (shArg, bool) {
	vs := shValues(c.args, true, opts...)
	if len(vs) == 0 {
		return shArg{}, false
	}
	return vs[0], true
}

// values returns the values of every occurrence of opts.
func (c *shCall) values(opts ...string) []shArg { return shValues(c.args, false, opts...) }

func shValues(args []shArg, first bool, opts ...string) []shArg {
	var out []shArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			continue
		}
		if v == "--" {
			break
		}
		for _, o := range opts {
			var val shArg
			switch {
			case v == o:
				if i+1 >= len(args) {
					continue
				}
				i++
				val = args[i]
			case strings.HasPrefix(o, "--") && strings.HasPrefix(v, o+"="):
				val = shSliceArg(a, len(o)+1)
			case len(o) == 2 && !strings.HasPrefix(v, "--") && strings.HasPrefix(v, o):
				val = shSliceArg(a, 2)
			default:
				continue
			}
			out = append(out, val)
			if first {
				return out
			}
			break
		}
	}
	return out
}

// shSliceArg is the value attached to an option word ("-oFILE" → "FILE").
func shSliceArg(a shArg, from int) shArg {
	v := a.val[from:]
	return shArg{val: v, text: shQuote(v), static: true, glob: a.glob}
}

// operands returns the words that are not options, skipping the value of
// each option in valueOpts ("-o", "--output"; "--output=x" carries its own).
// Everything after "--" is an operand.
func (c *shCall) operands(valueOpts ...string) []shArg { return shOperands(c.args, valueOpts...) }

func shOperands(args []shArg, valueOpts ...string) []shArg {
	var out []shArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			out = append(out, a)
			continue
		}
		if v == "--" {
			return append(out, args[i+1:]...)
		}
		if shTakesValue(v, valueOpts) {
			i++
		}
	}
	return out
}

// shTakesValue reports whether option word v is followed by its value: it is
// one of valueOpts, or a cluster of short options ending with one ("-xf").
func shTakesValue(v string, valueOpts []string) bool {
	for _, o := range valueOpts {
		if v == o {
			return true
		}
		if len(o) == 2 && len(v) > 2 && v[1] != '-' && v[len(v)-1] == o[1] && !strings.ContainsAny(v[1:len(v)-1], "=/") {
			return true
		}
	}
	return false
}

// shOpts describes the options of a wrapper or of a program with
// subcommands: the short letters and long names that take a value.
type shOpts struct {
	short string
	long  []string
}

type shOpt struct {
	name string // "-u", "--user"
	val  shArg
	has  bool // val is set
}

// shSplit separates leading options from what follows: for a wrapper, the
// command it runs; for git-like programs, the subcommand.
func shSplit(args []shArg, o shOpts) (opts []shOpt, rest []shArg) {
	i := 0
	for i < len(args) {
		a := args[i]
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			break
		}
		i++
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v, "=")
			opt := shOpt{name: name}
			switch {
			case eq:
				opt.val, opt.has = shArg{val: val, text: shQuote(val), static: true, glob: a.glob}, true
			case slices.Contains(o.long, name) && i < len(args):
				opt.val, opt.has = args[i], true
				i++
			}
			opts = append(opts, opt)
			continue
		}
		for j := 1; j < len(v); j++ {
			opt := shOpt{name: "-" + v[j:j+1]}
			if strings.IndexByte(o.short, v[j]) >= 0 {
				if j+1 < len(v) {
					opt.val, opt.has = shSliceArg(a, j+1), true
				} else if i < len(args) {
					opt.val, opt.has = args[i], true
					i++
				}
				opts = append(opts, opt)
				break
			}
			opts = append(opts, opt)
		}
	}
	return opts, args[i:]
}

func shOptHas(opts []shOpt, names ...string) bool {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

func shOptVal(opts []shOpt, names ...string) (shArg, bool) {
	for _, o := range opts {
		if o.has && slices.Contains(names, o.name) {
			return o.val, true
		}
	}
	return shArg{}, false
}

// shSubcommand finds a program's subcommand after its global options. ok is
// false when the subcommand is only known at run time.
func shSubcommand(args []shArg, o shOpts) (sub string, rest []shArg, ok bool) {
	_, rest = shSplit(args, o)
	if len(rest) == 0 {
		return "", nil, true
	}
	if !rest[0].static {
		return "", rest[1:], false
	}
	return rest[0].val, rest[1:], true
}

// envAssigns consumes the NAME=VALUE words that env and sudo accept before
// the command, and returns why one of them matters ("" if none does) and the
// words after them.
func (c *shCall) envAssigns(args []shArg, via string) (reason string, rest []shArg) {
	for len(args) > 0 {
		a := args[0]
		name, val, ok := strings.Cut(a.val, "=")
		if !a.static || !ok || !syntaxValidName(name) {
			break
		}
		if r, bad := shSensitiveVar(name); bad {
			reason = r
		} else if shCommandVar(name) {
			c.runScript(via+" "+name, val, shInput{})
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

// Table-building helpers.

func shFixed(e shEffect) shRule { return func(*shCall) shEffect { return e } }

func shInertRule(reason string) shRule { return shFixed(shInert(reason)) }

// shReads is a program that reads the files it is given: reading a
// credential is a credential read.
func shReads(reason string, valueOpts ...string) shRule {
	return func(c *shCall) shEffect {
		e := shRead(reason)
		c.raiseReads(&e, c.operands(valueOpts...)...)
		return e
	}
}

// shWrites is a program that writes the files it is given.
func shWrites(class Class, reason string, valueOpts ...string) shRule {
	return func(c *shCall) shEffect {
		e := shWrite(class, reason)
		c.raiseWrites(&e, c.operands(valueOpts...)...)
		return e
	}
}

// shVerbs classifies a program by its subcommand.
type shVerbs struct {
	opts  shOpts              // global options that take a value
	none  shEffect            // no subcommand
	def   shEffect            // a subcommand not listed; its reason gets the subcommand
	by    map[string]shEffect // fixed effects
	rules map[string]shRule   // subcommands with rules of their own
}

// shVerb lists subcommands (space-separated) with a fixed effect or a rule.
type shVerb struct {
	names string
	e     shEffect
	r     shRule
}

func shOn(names string, e shEffect) shVerb    { return shVerb{names: names, e: e} }
func shOnR(names string, r shRule) shVerb     { return shVerb{names: names, r: r} }
func shUse(e shEffect) shVerbs                { return shVerbs{none: e, def: e} }
func (v shVerbs) with(o shOpts) shVerbs       { v.opts = o; return v }
func (v shVerbs) withNone(e shEffect) shVerbs { v.none = e; return v }

func (v shVerbs) on(verbs ...shVerb) shRule {
	v.by = map[string]shEffect{}
	v.rules = map[string]shRule{}
	for _, vb := range verbs {
		for _, n := range strings.Fields(vb.names) {
			if vb.r != nil {
				v.rules[n] = vb.r
			} else {
				v.by[n] = vb.e
			}
		}
	}
	return v.classify
}

func (v shVerbs) classify(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, v.opts)
	switch {
	case !ok:
		return shUnknown("runs " + c.name + " with a subcommand only known at run time")
	case sub == "":
		return v.none
	}
	if r := v.rules[sub]; r != nil {
		return c.delegate(rest, r)
	}
	if e, ok := v.by[sub]; ok {
		return e
	}
	e := v.def
	e.reason = "runs " + c.name + " " + sub
	return e
}

// shellPrograms maps a program name to its rule. Each name is in exactly one
// table (a test checks it).
var shellPrograms = shMergePrograms()

func shMergePrograms() map[string]shRule {
	m := map[string]shRule{}
	for _, name := range shReadOnly {
		m[name] = shReads("reads files")
	}
	for _, name := range shListing {
		m[name] = shFixed(shRead("shows information"))
	}
	for _, table := range shProgramTables() {
		for name, r := range table {
			m[name] = r
		}
	}
	return m
}

func shProgramTables() []map[string]shRule {
	return []map[string]shRule{
		shBuiltins, shWrappers, shFileCommands, shNetCommands, shAdminCommands,
		shDevCommands, shPackageCommands, shInfraCommands,
	}
}

// Shell built-ins that change nothing outside the shell, and those that
// run strings (eval, trap, alias, source).
var shBuiltins = map[string]shRule{
	":": shInertRule("does nothing"), "true": shInertRule("does nothing"), "false": shInertRule("does nothing"),
	"echo": shInertRule("prints text"), "printf": shPrintf, "read": shReadVars,
	"shift": shInertRule("shifts arguments"), "wait": shInertRule("waits for jobs"),
	"exit": shInertRule("exits the shell"), "return": shInertRule("returns"), "logout": shInertRule("exits the shell"),
	"break": shInertRule("leaves a loop"), "continue": shInertRule("continues a loop"),
	"test": shInertRule("tests a condition"), "[": shInertRule("tests a condition"),
	"pwd": shInertRule("prints the working directory"), "type": shInertRule("describes a command"),
	"hash": shHash, "set": shInertRule("sets shell options"), "shopt": shInertRule("sets shell options"),
	"unset": shUnset, "export": shDeclare, "declare": shDeclare, "local": shDeclare, "readonly": shDeclare,
	"typeset": shDeclare, "let": shInertRule("evaluates arithmetic"), "umask": shInertRule("sets the file mode mask"),
	"ulimit": shInertRule("sets resource limits"), "getopts": shGetopts, "jobs": shInertRule("lists jobs"),
	"bg": shInertRule("resumes a job"), "fg": shInertRule("resumes a job"), "disown": shInertRule("forgets a job"),
	"times": shInertRule("prints times"), "caller": shInertRule("prints the call stack"),
	"dirs": shInertRule("prints the directory stack"), "help": shInertRule("prints help"),
	"suspend": shInertRule("suspends the shell"), "compgen": shInertRule("lists completions"),
	"complete": shInertRule("sets completions"), "compopt": shInertRule("sets completions"),
	"bind": shInertRule("sets key bindings"), "unalias": shInertRule("removes aliases"),
	"mapfile": shMapfile, "readarray": shMapfile, "enable": shEnable, "fc": shFc, "history": shHistory,
	"eval": shEval, "source": shSource, ".": shSource, "trap": shTrap, "alias": shAlias,
}

func shPrintf(c *shCall) shEffect {
	if v, ok := c.value("-v"); ok {
		if r, bad := shSensitiveVar(v.val); bad || !v.static {
			return shEnv(shOr(r, "sets a variable whose name is only known at run time"))
		}
	}
	return shInert("prints text")
}

func shOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// shVarTargets checks the variables a built-in assigns (read NAME).
func shVarTargets(names []shArg, reason string) shEffect {
	for _, n := range names {
		if !n.static {
			return shEnv("sets a variable whose name is only known at run time")
		}
		if r, bad := shSensitiveVar(n.val); bad {
			return shEnv(r)
		}
	}
	return shInert(reason)
}

func shReadVars(c *shCall) shEffect {
	names := c.operands("-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u")
	names = append(names, c.values("-a")...)
	return shVarTargets(names, "reads input into variables")
}

func shGetopts(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) >= 2 {
		return shVarTargets(ops[1:2], "parses options")
	}
	return shInert("parses options")
}

func shMapfile(c *shCall) shEffect {
	if cb, ok := c.value("-C"); ok {
		if !cb.static {
			return shUnknown("runs a callback only known at run time")
		}
		c.runScript("mapfile -C", cb.val, shInput{})
	}
	return shVarTargets(c.operands("-d", "-n", "-O", "-s", "-u", "-C", "-c"), "reads lines into an array")
}

func shUnset(c *shCall) shEffect {
	if c.has("-f") {
		return shInert("removes functions")
	}
	e := shVarTargets(c.operands(), "unsets variables")
	if !e.inert {
		e.reason = "un" + e.reason
	}
	return e
}

// shDeclare is export or declare run as a command (command export X=1); the
// usual form is a DeclClause, handled in shell.go.
func shDeclare(c *shCall) shEffect {
	for _, a := range c.args {
		if !a.static {
			return shEnv("sets a variable whose name is only known at run time")
		}
		name, _, _ := strings.Cut(a.val, "=")
		if r, bad := shSensitiveVar(name); bad && strings.Contains(a.val, "=") {
			return shEnv(r)
		}
	}
	return shInert("sets shell variables")
}

func shHash(c *shCall) shEffect {
	if p, ok := c.value("-p"); ok {
		return shEnv("makes a command name run " + p.text)
	}
	return shInert("remembers command locations")
}

func shEnable(c *shCall) shEffect {
	if f, ok := c.value("-f"); ok {
		return shEnv("loads shell built-ins from library " + f.text)
	}
	return shInert("enables or disables built-ins")
}

func shFc(c *shCall) shEffect {
	if c.has("-l") {
		return shRead("lists the history")
	}
	return shUnknown("runs commands again from the history")
}

func shHistory(c *shCall) shEffect {
	if len(c.args) > 0 && strings.HasPrefix(c.args[0].val, "-") {
		return shWrite(ClassFSWrite, "changes the shell history")
	}
	return shRead("prints the shell history")
}

func shEval(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shInert("does nothing")
	}
	script, ok := shJoinValues(c.args)
	if !ok {
		return shUnknown("evaluates a string only known at run time")
	}
	c.runScript("eval", script, c.in)
	return shEffect{none: true}
}

func shSource(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shInert("does nothing")
	}
	return c.runsFile(c.args[0], "shell", true)
}

func shTrap(c *shCall) shEffect {
	ops := c.operands()
	if c.has("-l", "-p") || len(ops) < 2 || !ops[0].static && ops[0].text == "" {
		return shInert("lists or resets signal handlers")
	}
	action := ops[0]
	switch {
	case !action.static:
		return shUnknown("sets a signal handler only known at run time")
	case action.val == "" || action.val == "-" || shIsFd(action.val):
		return shInert("resets signal handlers")
	}
	c.runScript("trap", action.val, shInput{})
	return shInert("sets a signal handler")
}

func shAlias(c *shCall) shEffect {
	for _, a := range c.operands() {
		if !a.static {
			return shUnknown("defines an alias only known at run time")
		}
		if name, val, ok := strings.Cut(a.val, "="); ok {
			c.runScript("alias "+name, val, shInput{})
		}
	}
	return shInert("defines aliases")
}

// runsFile classifies running a script file: a process substitution is code
// produced by another command; /dev/stdin reads standard input.
func (c *shCall) runsFile(f shArg, lang string, shell bool) shEffect {
	switch {
	case f.subst:
		return shUnknown("runs code produced by another command")
	case f.static && (f.val == "/dev/stdin" || f.val == "/dev/fd/0" || f.val == "-"):
		return c.stdinCode(lang, shell)
	}
	e := shExec("runs " + lang + " script " + f.text)
	c.raiseReads(&e, f)
	return e
}

// stdinCode classifies a shell or interpreter that reads its code from
// standard input.
func (c *shCall) stdinCode(lang string, shell bool) shEffect {
	if c.xargs {
		return shUnknown("runs code named by its input (xargs)")
	}
	switch c.in.kind {
	case shInText:
		if shell {
			c.runScript(c.name+" <<", c.in.text, shInput{})
			return shEffect{none: true}
		}
		return shExec("runs " + lang + " code from a here-document, which Airlock cannot inspect")
	case shInFile:
		return shExec("runs " + lang + " script " + c.in.text)
	case shInNull:
		return shRead("runs nothing: its input is empty")
	case shInPipe:
		return shUnknown("runs code read from a pipe")
	case shInDynamic:
		return shUnknown("runs code from a here-document with expansions")
	}
	return shUnknown("runs code read from standard input")
}

// Wrappers: programs classified by what they run.
var shWrappers = map[string]shRule{
	"sudo": shSudo, "sudoedit": shSudo, "doas": shDoas, "pkexec": shPrivWrapper("pkexec", shOpts{long: []string{"--user"}}, 0),
	"run0": shPrivWrapper("run0", shOpts{short: "uDg", long: []string{"--user", "--chdir", "--group",
		"--unit", "--property", "--description", "--slice", "--nice", "--setenv", "--machine"}}, 0),
	"su": shSu, "runuser": shSu,
	"chroot": shPrivWrapper("chroot", shOpts{long: []string{"--userspec", "--groups"}}, 1),
	"nsenter": shPrivWrapper("nsenter", shOpts{short: "tSGwr", long: []string{"--target", "--setuid",
		"--setgid", "--wd", "--root"}}, 0),
	"unshare": shPrivWrapper("unshare", shOpts{short: "S", long: []string{"--setuid", "--setgid",
		"--map-user", "--map-group", "--propagation", "--root", "--wd"}}, 0),
	"systemd-run": shPrivWrapper("systemd-run", shOpts{short: "pEMHu", long: []string{"--unit",
		"--property", "--setenv", "--machine", "--host", "--uid", "--gid", "--nice", "--working-directory",
		"--slice", "--description", "--on-calendar", "--on-active", "--on-boot", "--on-startup",
		"--on-unit-active", "--on-unit-inactive", "--timer-property", "--path-property", "--socket-property",
		"--service-type"}}, 0),
	"env":   shEnvRule,
	"nohup": shWrapper("nohup", shOpts{}, 0),
	"time":  shTimeRule,
	"nice":  shWrapper("nice", shOpts{short: "n", long: []string{"--adjustment"}}, 0),
	"ionice": shWrapper("ionice", shOpts{short: "cnpPu", long: []string{"--class", "--classdata",
		"--pid", "--pgid", "--uid"}}, 0),
	"stdbuf":     shWrapper("stdbuf", shOpts{short: "ioe", long: []string{"--input", "--output", "--error"}}, 0),
	"setsid":     shWrapper("setsid", shOpts{}, 0),
	"timeout":    shWrapper("timeout", shOpts{short: "ks", long: []string{"--kill-after", "--signal"}}, 1),
	"gtimeout":   shWrapper("timeout", shOpts{short: "ks", long: []string{"--kill-after", "--signal"}}, 1),
	"chrt":       shChrt,
	"taskset":    shTaskset,
	"flock":      shFlock,
	"unbuffer":   shWrapper("unbuffer", shOpts{}, 0),
	"chronic":    shWrapper("chronic", shOpts{}, 0),
	"caffeinate": shWrapper("caffeinate", shOpts{short: "tw"}, 0),
	"xvfb-run": shWrapper("xvfb-run", shOpts{short: "nsfewp", long: []string{"--server-num",
		"--server-args", "--auth-file", "--error-file", "--wait", "--xauth-protocol"}}, 0),
	"dbus-run-session": shWrapper("dbus-run-session", shOpts{long: []string{"--config-file", "--dbus-daemon"}}, 0),
	"proxychains":      shWrapper("proxychains", shOpts{short: "f"}, 0),
	"proxychains4":     shWrapper("proxychains", shOpts{short: "f"}, 0),
	"torsocks":         shWrapper("torsocks", shOpts{short: "uPa", long: []string{"--user", "--pass", "--address", "--port"}}, 0),
	"firejail":         shWrapper("firejail", shOpts{}, 0),
	"strace":           shTracer("strace", shOpts{short: "eopusaEIOSPbXU"}),
	"ltrace":           shTracer("ltrace", shOpts{short: "eopusaAnDFlxw"}),
	"watch":            shWatch,
	"command":          shCommandRule,
	"builtin":          shBuiltinRule,
	"exec":             shExecRule,
	"xargs":            shXargs,
	"parallel":         shParallel,
	"find":             shFind,
	"fd":               shFd, "fdfind": shFd,
	"sh": shShell, "bash": shShell, "rbash": shShell, "zsh": shShell, "dash": shShell, "ksh": shShell,
	"mksh": shShell, "pdksh": shShell, "ash": shShell, "yash": shShell, "posh": shShell, "ksh93": shShell,
	"fish": shForeignShell, "csh": shForeignShell, "tcsh": shForeignShell, "nu": shForeignShell,
	"pwsh": shForeignShell, "powershell": shForeignShell, "elvish": shForeignShell, "xonsh": shForeignShell,
	"busybox":   shBusybox,
	"ssh":       shSSH,
	"script":    shScriptRule,
	"direnv":    shDirenv,
	"nix-shell": shNixShell,
}

// shWrapper is a program that runs the command after its options and skip
// more operands (timeout's DURATION), and adds nothing of its own.
func shWrapper(via string, o shOpts, skip int) shRule {
	return func(c *shCall) shEffect {
		_, rest := shSplit(c.args, o)
		if len(rest) <= skip {
			return shRead("runs no command")
		}
		c.run(via, rest[skip:], shEffect{})
		return shEffect{none: true}
	}
}

// shPrivWrapper is a program that runs a command with more rights than the
// agent's: what it runs is at least privileged.
func shPrivWrapper(via string, o shOpts, skip int) shRule {
	return func(c *shCall) shEffect {
		_, rest := shSplit(c.args, o)
		if len(rest) <= skip {
			return shUnknown("opens an interactive shell with " + via)
		}
		c.run(via, rest[skip:], shAdmin("runs with "+via))
		return shEffect{none: true}
	}
}

var shSudoOpts = shOpts{short: "ugpCDhrtTUR", long: []string{
	"--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type",
	"--command-timeout", "--other-user", "--chroot",
}}

func shSudo(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shSudoOpts)
	user := "root"
	if u, ok := shOptVal(opts, "-u", "--user"); ok {
		user = u.text
	}
	switch {
	case c.name == "sudoedit" || shOptHas(opts, "-e", "--edit"):
		e := shEffect{class: ClassFSWrite, cap: CapHostAdmin, tier: TierPrivileged, reason: "edits files as " + user}
		return e
	case shOptHas(opts, "-l", "--list"):
		return shRead("lists what sudo allows")
	case len(rest) > 0:
	case shOptHas(opts, "-i", "-s", "--login", "--shell"):
		return shUnknown("opens an interactive shell as " + user)
	case shOptHas(opts, "-v", "--validate"):
		return shAdmin("refreshes the cached sudo credentials")
	case shOptHas(opts, "-k", "-K", "--reset-timestamp", "--remove-timestamp"):
		return shRead("forgets the cached sudo credentials")
	default:
		return shRead("prints sudo's usage or version")
	}
	reason, cmd := c.envAssigns(rest, "sudo")
	if len(cmd) == 0 {
		return shUnknown("opens an interactive shell as " + user)
	}
	n := c.run("sudo", cmd, shAdmin("runs as "+user))
	if d, ok := shOptVal(opts, "-D", "--chdir"); ok {
		n.cwd, n.setCwd = shCwdArg(c, d), true
	}
	if reason != "" {
		return shEnv(reason)
	}
	return shEffect{none: true}
}

// shCwdArg is the directory a wrapper changes to ("" when unknown).
func shCwdArg(c *shCall, d shArg) string {
	if !d.static || d.glob {
		return ""
	}
	if d.val != "" && d.val[0] != '/' && d.val[0] != '~' && c.cwd == "" {
		return ""
	}
	return c.resolve(d.val)
}

func shDoas(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "uC"})
	user := "root"
	if u, ok := shOptVal(opts, "-u"); ok {
		user = u.text
	}
	if len(rest) == 0 {
		if shOptHas(opts, "-C") {
			return shRead("checks the doas configuration")
		}
		if shOptHas(opts, "-L") {
			return shRead("forgets cached doas credentials")
		}
		return shUnknown("opens an interactive shell as " + user)
	}
	c.run("doas", rest, shAdmin("runs as "+user))
	return shEffect{none: true}
}

// shSu handles su and runuser: "su -c CMD [user]", "runuser -u USER -- CMD".
func shSu(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "cgGswu", long: []string{"--command", "--session-command",
		"--group", "--supp-group", "--shell", "--whitelist-environment", "--user"}})
	user := "root"
	for _, r := range rest {
		if r.static && r.val != "-" && !strings.HasPrefix(r.val, "-") {
			user = r.text
			break
		}
	}
	if u, ok := shOptVal(opts, "-u", "--user"); ok {
		user = u.text
	}
	floor := shAdmin("runs as " + user)
	// Options may follow the user name: look for -c everywhere.
	if cmd, ok := shOptVal(opts, "-c", "--command", "--session-command"); ok || c.has("-c", "--command") {
		if !ok {
			cmd, _ = c.value("-c", "--command")
		}
		if !cmd.static {
			return shUnknown("runs a command only known at run time as " + user)
		}
		n := c.runScript("su -c", cmd.val, c.in)
		n.floor = floor
		return shEffect{none: true}
	}
	if _, ok := shOptVal(opts, "-u", "--user"); ok && len(rest) > 0 {
		c.run(c.name, rest, floor)
		return shEffect{none: true}
	}
	return shUnknown("opens an interactive shell as " + user)
}

func shEnvRule(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "uCS", long: []string{"--unset", "--chdir", "--split-string"}})
	if len(rest) > 0 && rest[0].static && rest[0].val == "-" {
		rest = rest[1:] // "-" is -i
	}
	reason, cmd := c.envAssigns(rest, "env")
	e := shEffect{none: true}
	if reason != "" {
		e = shEnv(reason)
	}
	if s, ok := shOptVal(opts, "-S", "--split-string"); ok {
		if !s.static {
			return shUnknown("runs a command only known at run time")
		}
		script := s.val
		if len(cmd) > 0 {
			script += " " + shJoinTexts(cmd)
		}
		c.runScript("env -S", script, c.in)
		return e
	}
	if len(cmd) == 0 {
		return shInert("prints the environment")
	}
	n := c.run("env", cmd, shEffect{})
	if d, ok := shOptVal(opts, "-C", "--chdir"); ok {
		n.cwd, n.setCwd = shCwdArg(c, d), true
	}
	return e
}

// shTimeRule is /usr/bin/time, which may also write its report to a file.
func shTimeRule(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "fo", long: []string{"--format", "--output"}})
	e := shEffect{none: true}
	if out, ok := shOptVal(opts, "-o", "--output"); ok {
		e = shWrite(ClassFSWrite, "writes a timing report")
		c.raiseWrites(&e, out)
	}
	if len(rest) > 0 {
		c.run("time", rest, shEffect{})
	} else if e.none {
		return shRead("runs no command")
	}
	return e
}

func shChrt(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "TPD", long: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}})
	switch {
	case shOptHas(opts, "-p", "--pid"):
		return shExec("changes the scheduling of a running process")
	case shOptHas(opts, "-m", "--max") || len(rest) < 2:
		return shRead("shows scheduling settings")
	}
	c.run("chrt", rest[1:], shEffect{})
	return shEffect{none: true}
}

func shTaskset(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{})
	switch {
	case shOptHas(opts, "-p", "--pid"):
		return shExec("changes the CPU affinity of a running process")
	case len(rest) < 2:
		return shRead("shows CPU affinity")
	}
	c.run("taskset", rest[1:], shEffect{})
	return shEffect{none: true}
}

func shFlock(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "wEc", long: []string{"--wait", "--timeout", "--conflict-exit-code", "--command"}})
	if len(rest) == 0 {
		return shRead("takes a lock")
	}
	e := shEffect{none: true}
	lock := shWrite(ClassFSWrite, "creates a lock file")
	if c.raiseWrites(&lock, rest[0]); lock.tier == TierPrivileged {
		e = lock
	}
	if cmd, ok := shOptVal(opts, "-c", "--command"); ok {
		if !cmd.static {
			return shUnknown("runs a command only known at run time")
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
			return shRead("takes a lock")
		}
		return e
	}
	c.run("flock", rest[1:], shEffect{})
	return e
}

// shTracer is strace or ltrace: it runs a command, or attaches to a running
// process, which reads its memory.
func shTracer(via string, o shOpts) shRule {
	return func(c *shCall) shEffect {
		opts, rest := shSplit(c.args, o)
		e := shEffect{none: true}
		if out, ok := shOptVal(opts, "-o"); ok {
			e = shWrite(ClassFSWrite, "writes a trace")
			c.raiseWrites(&e, out)
		}
		for _, o := range opts {
			if o.name == "-E" && o.has {
				if name, _, _ := strings.Cut(o.val.val, "="); !o.val.static {
					e = shMax(e, shEnv("sets an environment variable only known at run time"))
				} else if r, bad := shSensitiveVar(name); bad {
					e = shMax(e, shEnv(r))
				}
			}
		}
		if shOptHas(opts, "-p") {
			return shMax(e, shAdmin("attaches to a running process and reads its memory"))
		}
		if len(rest) == 0 {
			if e.none {
				return shRead("runs no command")
			}
			return e
		}
		c.run(via, rest, shEffect{})
		return e
	}
}

func shWatch(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "nq", long: []string{"--interval", "--equexit"}})
	if len(rest) == 0 {
		return shRead("runs no command")
	}
	if shOptHas(opts, "-x", "--exec") {
		c.run("watch", rest, shEffect{})
	} else {
		c.runWords("watch", rest, shInput{})
	}
	return shEffect{none: true}
}

func shCommandRule(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{})
	if shOptHas(opts, "-v", "-V") || len(rest) == 0 {
		return shInert("describes a command")
	}
	c.run("command", rest, shEffect{})
	return shEffect{none: true}
}

func shBuiltinRule(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shInert("does nothing")
	}
	c.run("builtin", c.args, shEffect{})
	return shEffect{none: true}
}

func shExecRule(c *shCall) shEffect {
	_, rest := shSplit(c.args, shOpts{short: "a"})
	if len(rest) == 0 {
		return shInert("changes the shell's file descriptors")
	}
	c.run("exec", rest, shEffect{})
	return shEffect{none: true}
}

func shXargs(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "adEILnPsJR", long: []string{
		"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var",
	}})
	if len(rest) == 0 {
		rest = []shArg{shLiteral("echo")}
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
			rest = shPlaceholder(rest, shArg{}, mark)
		}
	}
	n := c.run("xargs", rest, shEffect{})
	n.in, n.xargs = shInput{kind: shInNull}, true
	return shEffect{none: true}
}

// shParallel is GNU parallel: the command before ":::" is run by a shell.
func shParallel(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shOpts{short: "aCdEIjLnNPSs", long: []string{
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
	e := shEffect{none: true}
	if shOptHas(opts, "-S", "--sshlogin", "--slf", "--sshloginfile") {
		e = shNet(ClassNetConnect, "runs commands on other hosts")
	}
	if end == 0 {
		c.runUnknown("parallel", c.text(), "runs commands read from its input")
		return e
	}
	script, ok := shJoinValues(rest[:end])
	if !ok {
		c.runUnknown("parallel", shJoinTexts(rest[:end]), "runs a command only known at run time")
		return e
	}
	custom := ""
	if r, ok := shOptVal(opts, "-I"); ok {
		custom = r.val
	}
	// parallel puts its inputs into the command before a shell parses it:
	// a placeholder becomes a dynamic word, and one inside quotes could
	// become anything.
	script, found := shParallelInputs(script, custom)
	if found && strings.ContainsAny(script, `'"\`+"`") {
		c.runUnknown("parallel", shJoinTexts(rest[:end]), "runs a command built from its input")
		return e
	}
	c.runScript("parallel", script, shInput{})
	return e
}

// shParallelInputs replaces GNU parallel's replacement strings ({}, {.},
// {/}, {//}, {/.}, {#}, {%}, {3}, {=perl=}, and -I's) by a shell parameter,
// so that the words holding them are dynamic.
func shParallelInputs(script, custom string) (string, bool) {
	const input = "${PARALLEL_INPUT}"
	found := false
	if custom != "" && strings.Contains(script, custom) {
		script, found = strings.ReplaceAll(script, custom, input), true
	}
	var b strings.Builder
	for i := 0; i < len(script); i++ {
		if script[i] == '{' {
			if end := shParallelMark(script[i:]); end > 0 {
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

// shParallelMark returns the length of the replacement string at the start
// of s, or 0.
func shParallelMark(s string) int {
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

// shFindValueTests are the find tests and actions that take one value.
var shFindValueTests = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-type": true, "-xtype": true,
	"-user": true, "-group": true, "-uid": true, "-gid": true, "-perm": true, "-size": true,
	"-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true,
	"-newer": true, "-anewer": true, "-cnewer": true, "-samefile": true, "-inum": true, "-links": true,
	"-maxdepth": true, "-mindepth": true, "-fstype": true, "-used": true, "-context": true,
	"-printf": true, "-regextype": true, "-files0-from": true,
}

func shFind(c *shCall) shEffect {
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
	var starts []shArg
	for ; i < len(args); i++ {
		a := args[i]
		if a.static && (len(a.val) > 1 && a.val[0] == '-' || a.val == "(" || a.val == "!" || a.val == ")" || a.val == ",") {
			break
		}
		starts = append(starts, a)
	}
	found := c.representative(starts)
	e := shRead("finds files")
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
			n := c.run("find "+v, shPlaceholder(args[i:j], found), shEffect{})
			if v == "-execdir" || v == "-okdir" {
				n.cwd, n.setCwd = shCwdArg(c, found), true
			}
			i = j + 1
		case v == "-delete":
			e = shMax(e, shDelete("deletes the files it finds"))
		case v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf":
			if i < len(args) {
				w := shWrite(ClassFSWrite, "writes the list of files it finds")
				c.raiseWrites(&w, args[i])
				e = shMax(e, w)
			}
			i++
			if v == "-fprintf" {
				i++
			}
		case shFindValueTests[v] || strings.HasPrefix(v, "-newer"):
			i++
		}
	}
	return e
}

// representative picks the start path that stands for the files a command
// finds: the most sensitive one, else the first, else ".".
func (c *shCall) representative(starts []shArg) shArg {
	for _, s := range starts {
		if !s.static {
			continue
		}
		p := c.resolve(s.val)
		if shCredentialPath(p, s.glob) {
			return s
		}
		if _, ok := shSystemPlace(p, s.glob); ok {
			return s
		}
	}
	if len(starts) > 0 {
		return starts[0]
	}
	return shLiteral(".")
}

// shPlaceholder marks the words of find -exec that contain "{}": find
// replaces it with each file it finds, whose name may be anything, so they
// are dynamic (sh -c '... {} ...' runs unknown code). For path checks "{}"
// stands for the path the files are found under. The text stays as written.
func shPlaceholder(words []shArg, found shArg, marks ...string) []shArg {
	if len(marks) == 0 {
		marks = []string{"{}"}
	}
	out := make([]shArg, len(words))
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

func shFd(c *shCall) shEffect {
	for i, a := range c.args {
		if a.static && (a.val == "-x" || a.val == "--exec" || a.val == "-X" || a.val == "--exec-batch") {
			j := i + 1
			for j < len(c.args) && !(c.args[j].static && c.args[j].val == ";") {
				j++
			}
			ops := shOperands(c.args[:i], "-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth",
				"--min-depth", "--exact-depth", "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner",
				"-j", "--threads", "--max-results", "-c", "--color", "--base-directory", "--path-separator", "--ignore-file")
			var starts []shArg
			if len(ops) > 1 {
				starts = ops[1:]
			}
			cmd := shPlaceholder(c.args[i+1:j], c.representative(starts), "{}", "{/}", "{//}", "{.}", "{/.}")
			c.run("fd "+a.val, cmd, shEffect{})
			break
		}
	}
	return shRead("finds files")
}

// shShell is sh, bash and their kin: -c STRING is parsed; a script file
// runs; no script means code from standard input.
func shShell(c *shCall) shEffect {
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
			return shRead("runs no command")
		}
		if !ops[0].static {
			return shUnknown("runs a " + c.name + " command only known at run time")
		}
		c.runScript(c.name+" -c", ops[0].val, c.in)
		return shEffect{none: true}
	}
	if smode || len(ops) == 0 {
		return c.stdinCode("shell", true)
	}
	return c.runsFile(ops[0], "shell", true)
}

// shForeignShell is a shell whose language Airlock does not parse.
func shForeignShell(c *shCall) shEffect {
	ops := c.operands()
	if c.has("-c", "--command", "-Command", "-EncodedCommand") || len(ops) == 0 {
		return shUnknown("runs " + c.name + " code, which Airlock cannot parse")
	}
	return c.runsFile(ops[0], c.name, false)
}

// shArch is macOS arch: "arch -x86_64 CMD" runs CMD; alone it prints.
func shArch(c *shCall) shEffect {
	_, rest := shSplit(c.args, shOpts{short: "e", long: []string{"-arch"}})
	if len(rest) == 0 {
		return shRead("prints the architecture")
	}
	c.run("arch", rest, shEffect{})
	return shEffect{none: true}
}

func shBusybox(c *shCall) shEffect {
	if len(c.args) == 0 || !c.args[0].static || strings.HasPrefix(c.args[0].val, "-") {
		return shRead("lists its commands")
	}
	c.run("busybox", c.args, shEffect{})
	return shEffect{none: true}
}

var shSSHOpts = shOpts{short: "BbcDEeFIiJLlmOopQRSWw"}

// shSSH: the remote command is parsed (Via ssh); options that run local
// commands (ProxyCommand) are parsed too.
func shSSH(c *shCall) shEffect {
	opts, rest := shSplit(c.args, shSSHOpts)
	c.proxyCommands(opts)
	host := "a host"
	if len(rest) > 0 {
		host = rest[0].text
	}
	e := shNet(ClassNetConnect, "connects to "+host+" over ssh")
	if len(rest) == 0 || shOptHas(opts, "-N", "-O", "-G", "-V", "-Q") {
		return e
	}
	remote := rest[1:]
	if len(remote) == 0 {
		// An interactive login: the remote shell runs what it reads.
		switch c.in.kind {
		case shInText:
			n := c.runScript("ssh", c.in.text, shInput{})
			n.cwd, n.setCwd, n.lenient = "~", true, true
		case shInPipe, shInDynamic:
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
func (c *shCall) proxyCommands(opts []shOpt) {
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
			c.runScript("ssh -o "+strings.TrimSpace(key), strings.TrimSpace(val), shInput{})
		}
	}
}

func shScriptRule(c *shCall) shEffect {
	if cmd, ok := c.value("-c", "--command"); ok {
		if !cmd.static {
			return shUnknown("runs a command only known at run time")
		}
		c.runScript("script -c", cmd.val, c.in)
		return shWrite(ClassFSWrite, "records a terminal session to a file")
	}
	return shUnknown("opens an interactive shell and records it")
}

func shDirenv(c *shCall) shEffect {
	if len(c.args) >= 3 && c.args[0].val == "exec" {
		n := c.run("direnv exec", c.args[2:], shEffect{})
		n.cwd, n.setCwd = shCwdArg(c, c.args[1]), true
		return shEffect{none: true}
	}
	if len(c.args) > 0 && (c.args[0].val == "allow" || c.args[0].val == "permit" || c.args[0].val == "grant") {
		return shExec("allows a .envrc to run in this directory")
	}
	return shRead("shows direnv status")
}

func shNixShell(c *shCall) shEffect {
	e := shNet(ClassPackageInstall, "builds or downloads a Nix environment")
	if cmd, ok := c.value("--run", "--command"); ok {
		if !cmd.static {
			c.runUnknown("nix-shell --run", cmd.text, "runs a command only known at run time")
		} else {
			c.runScript("nix-shell --run", cmd.val, c.in)
		}
	}
	return e
}

// Files.

// shReadOnly are programs that read the files they are given.
var shReadOnly = []string{
	"cat", "tac", "nl", "head", "tail", "less", "more", "most", "wc", "cut", "tr", "paste", "join",
	"fold", "fmt", "pr", "column", "expand", "unexpand", "comm", "diff", "diff3", "sdiff", "cmp",
	"colordiff", "strings", "od", "hexdump", "hd", "base64", "base32", "basenc", "md5sum", "sha1sum",
	"sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "md5",
	"rev", "tsort", "look", "zcat", "bzcat", "xzcat", "zstdcat", "lz4cat", "zless", "zmore", "zgrep",
	"zegrep", "zfgrep", "bzgrep", "xzgrep", "zdiff", "bat", "batcat", "view", "xmllint", "csvlook",
	"mlr", "jless", "diffstat", "gpg", "gpg2", "ssh-add",
}

// shListing are programs that show information about files, processes or
// the system without reading file contents.
var shListing = []string{
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

var shFileCommands = map[string]shRule{
	"grep": shGrep, "egrep": shGrep, "fgrep": shGrep, "rg": shRg, "ag": shAg, "ack": shAg,
	"sort": shSort, "uniq": shUniq, "shuf": shOutOpt("shuffles lines", "-o", "--output"),
	"iconv": shOutOpt("converts text", "-o", "--output"),
	"jq":    shReads("processes JSON", "--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-L"),
	"yq":    shYq,
	"awk":   shAwk, "gawk": shAwk, "mawk": shAwk, "nawk": shAwk,
	"sed": shSed, "gsed": shSed,
	"xxd":      shXxd,
	"date":     shDate,
	"hostname": shHostname,
	"kill":     shKillRule, "pkill": shKillRule, "killall": shKillRule, "skill": shKillRule, "xkill": shKillRule,
	"fuser":    shFuser,
	"touch":    shWrites(ClassFSWrite, "creates or updates files", "-r", "--reference", "-d", "--date", "-t"),
	"mkdir":    shWrites(ClassFSMkdir, "creates directories", "-m", "--mode", "--context"),
	"mktemp":   shMktemp,
	"cp":       shCopy(ClassFSCopy, "copies files"),
	"install":  shInstallCmd,
	"mv":       shWrites(ClassFSMove, "moves files", "-t", "--target-directory", "-S", "--suffix"),
	"ln":       shLink,
	"tee":      shWrites(ClassFSWrite, "writes files", "--output-error"),
	"truncate": shTruncate,
	"dd":       shDd,
	"rm":       shFixed(shDelete("deletes files")), "rmdir": shFixed(shDelete("deletes directories")),
	"unlink": shFixed(shDelete("deletes a file")), "shred": shFixed(shDelete("destroys file contents")),
	"srm": shFixed(shDelete("destroys files")), "wipe": shFixed(shDelete("destroys files")),
	"chmod": shChmod, "chown": shChown, "chgrp": shChown, "setfacl": shChown, "chflags": shChown,
	"chattr": shFixed(shEffect{class: ClassFSPermissions, cap: CapHostAdmin, tier: TierPrivileged, reason: "changes file attributes"}),
	"patch":  shPatch,
	"split":  shWrites(ClassFSWrite, "splits files", "-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix", "--filter"),
	"csplit": shWrites(ClassFSWrite, "splits files", "-f", "--prefix", "-b", "--suffix-format", "-n", "--digits"),
	"tar":    shTar, "bsdtar": shTar, "gtar": shTar,
	"unzip": shUnzip, "zip": shZip, "7z": sh7z, "7za": sh7z, "7zr": sh7z, "cpio": shCpio,
	"gzip": shCompress, "gunzip": shCompress, "bzip2": shCompress, "bunzip2": shCompress, "xz": shCompress,
	"unxz": shCompress, "lzma": shCompress, "unlzma": shCompress, "zstd": shCompress, "unzstd": shCompress,
	"lz4": shCompress, "pigz": shCompress, "pbzip2": shCompress, "brotli": shCompress,
	"compress": shCompress, "uncompress": shCompress,
	"dos2unix": shWrites(ClassFSWrite, "converts files in place"), "unix2dos": shWrites(ClassFSWrite, "converts files in place"),
	"vim": shEditor, "vi": shEditor, "nvim": shEditor, "nano": shEditor, "emacs": shEditor, "ed": shEditor,
	"ex": shEditor, "pico": shEditor, "micro": shEditor, "hx": shEditor, "helix": shEditor, "kak": shEditor,
	"joe": shEditor, "mcedit": shEditor, "vimdiff": shEditor, "code": shEditor, "subl": shEditor,
	"gedit": shEditor, "kate": shEditor,
	"open": shFixed(shExec("opens files or URLs with other programs")), "xdg-open": shFixed(shExec("opens files or URLs with other programs")),
	"ssh-keygen": shSSHKeygen,
	"getent":     shGetent,
	"security":   shSecurity,
	"pass":       shPass,
}

// shOutOpt is a reader that may write its output to a file.
func shOutOpt(reason string, opts ...string) shRule {
	return func(c *shCall) shEffect {
		e := shRead(reason)
		c.raiseReads(&e, c.operands(opts...)...)
		if outs := c.values(opts...); len(outs) > 0 {
			w := shWrite(ClassFSWrite, reason+" into a file")
			c.raiseWrites(&w, outs...)
			e = shMax(e, w)
		}
		return e
	}
}

// shGrep: the first operand is the pattern unless -e or -f gives it.
func shGrep(c *shCall) shEffect {
	ops := c.operands("-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C", "--context",
		"-d", "--directories", "-D", "--devices", "--label", "--group-separator")
	if !c.has("-e", "--regexp", "-f", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 && c.has("-r", "-R", "--recursive", "--dereference-recursive") {
		ops = []shArg{shLiteral(".")}
	}
	e := shRead("searches files")
	c.raiseReads(&e, ops...)
	c.raiseReads(&e, c.values("-f", "--file")...)
	return e
}

func shRg(c *shCall) shEffect {
	if pre, ok := c.value("--pre"); ok {
		return shExec("runs " + pre.text + " on every file it searches")
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
		ops = []shArg{shLiteral(".")}
	}
	e := shRead("searches files")
	c.raiseReads(&e, ops...)
	return e
}

func shAg(c *shCall) shEffect {
	ops := c.operands("-A", "-B", "-C", "-G", "--file-search-regex", "-m", "--max-count", "--depth", "-p", "--path-to-ignore")
	if len(ops) > 0 {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		ops = []shArg{shLiteral(".")}
	}
	e := shRead("searches files")
	c.raiseReads(&e, ops...)
	return e
}

func shSort(c *shCall) shEffect {
	if prog, ok := c.value("--compress-program"); ok {
		return shExec("runs " + prog.text + " to compress temporary files")
	}
	return shOutOpt("sorts lines", "-o", "--output")(c)
}

func shUniq(c *shCall) shEffect {
	ops := c.operands("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars")
	e := shRead("filters lines")
	if len(ops) > 0 {
		c.raiseReads(&e, ops[0])
	}
	if len(ops) > 1 {
		w := shWrite(ClassFSWrite, "writes filtered lines into a file")
		c.raiseWrites(&w, ops[1])
		e = shMax(e, w)
	}
	return e
}

func shYq(c *shCall) shEffect {
	if c.has("-i", "--inplace") {
		e := shWrite(ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
	return shReads("processes YAML")(c)
}

// shAwk: a program that calls system(), pipes or redirects runs commands or
// writes files.
func shAwk(c *shCall) shEffect {
	ops := c.operands("-F", "--field-separator", "-v", "--assign", "-f", "--file", "-i", "--include",
		"-l", "--load", "-E", "--exec", "-e", "--source")
	var progs []shArg
	if c.has("-f", "--file", "-E", "--exec") {
		return shExec("runs an awk program file, which Airlock cannot inspect")
	}
	progs = append(progs, c.values("-e", "--source")...)
	if len(progs) == 0 && len(ops) > 0 {
		progs, ops = ops[:1], ops[1:]
	}
	if inc, ok := c.value("-i", "--include"); ok && inc.val == "inplace" {
		e := shWrite(ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, ops...)
		return e
	}
	if c.has("-l", "--load") {
		return shExec("loads an awk extension library")
	}
	for _, p := range progs {
		if !p.static {
			return shExec("runs an awk program only known at run time")
		}
		if shAwkRuns(p.val) {
			return shExec("runs an awk program that runs commands or writes files")
		}
	}
	e := shRead("processes text")
	c.raiseReads(&e, ops...)
	return e
}

// shAwkRuns reports whether an awk program may run commands or write files:
// system(), a pipe, or print/printf redirected with ">".
func shAwkRuns(prog string) bool {
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

func shSed(c *shCall) shEffect {
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
	if !c.has("-e", "--expression", "-f", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	if inPlace {
		e := shWrite(ClassFSWrite, "edits files in place")
		c.raiseWrites(&e, ops...)
		return e
	}
	e := shRead("edits text")
	c.raiseReads(&e, ops...)
	return e
}

func shXxd(c *shCall) shEffect {
	ops := c.operands("-c", "-g", "-l", "-o", "-s", "-n", "--name")
	e := shRead("dumps bytes")
	if len(ops) > 0 {
		c.raiseReads(&e, ops[0])
	}
	if len(ops) > 1 {
		w := shWrite(ClassFSWrite, "writes a file")
		c.raiseWrites(&w, ops[1])
		e = shMax(e, w)
	}
	return e
}

func shDate(c *shCall) shEffect {
	if c.has("-s", "--set") {
		return shAdmin("sets the system clock")
	}
	for _, op := range c.operands("-d", "--date", "-f", "--file", "-r", "--reference") {
		if !strings.HasPrefix(op.val, "+") {
			return shAdmin("sets the system clock")
		}
	}
	return shRead("prints the date")
}

func shHostname(c *shCall) shEffect {
	if c.has("-F", "--file") || len(c.operands()) > 0 {
		return shAdmin("sets the host name")
	}
	return shRead("prints the host name")
}

func shKillRule(c *shCall) shEffect {
	if c.has("-l", "-L", "--list", "--table") && len(c.operands()) == 0 {
		return shRead("lists signals")
	}
	for _, a := range c.args {
		if a.static && (a.val == "-0" || a.val == "-s0" || a.val == "--signal=0") {
			return shRead("checks whether processes exist")
		}
		if a.static && !strings.HasPrefix(a.val, "-") {
			break
		}
	}
	if s, ok := c.value("-s", "-n", "--signal"); ok && s.val == "0" {
		return shRead("checks whether processes exist")
	}
	return shKill("signals processes, usually to stop them")
}

func shFuser(c *shCall) shEffect {
	if c.has("-k", "--kill") {
		return shKill("kills the processes using files")
	}
	return shRead("shows which processes use files")
}

func shMktemp(c *shCall) shEffect {
	e := shWrite(ClassFSWrite, "creates a temporary file")
	c.raiseWrites(&e, c.values("-p", "--tmpdir")...)
	return e
}

// shCopy is a copy: sources are read, the destination written.
func shCopy(class Class, reason string) shRule {
	return func(c *shCall) shEffect {
		e := shWrite(class, reason)
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

func shInstallCmd(c *shCall) shEffect {
	if m, ok := c.value("-m", "--mode"); ok && shSetuidMode(m.val) {
		return shAdmin("installs a setuid or setgid program")
	}
	if c.has("-d", "--directory") {
		e := shWrite(ClassFSMkdir, "creates directories")
		c.raiseWrites(&e, c.operands("-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory")...)
		return e
	}
	e := shWrite(ClassFSCopy, "installs files")
	ops := c.operands("-m", "--mode", "-o", "--owner", "-g", "--group", "-t", "--target-directory", "-S", "--suffix")
	dests := c.values("-t", "--target-directory")
	if len(dests) == 0 && len(ops) > 1 {
		dests, ops = ops[len(ops)-1:], ops[:len(ops)-1]
	}
	c.raiseReads(&e, ops...)
	c.raiseWrites(&e, dests...)
	return e
}

func shLink(c *shCall) shEffect {
	e := shWrite(ClassFSWrite, "creates links")
	ops := c.operands("-t", "--target-directory", "-S", "--suffix")
	dests := c.values("-t", "--target-directory")
	if len(dests) == 0 && len(ops) > 0 {
		dests = ops[len(ops)-1:]
		if len(ops) == 1 {
			dests = []shArg{shLiteral(".")}
		}
	}
	c.raiseWrites(&e, dests...)
	return e
}

func shTruncate(c *shCall) shEffect {
	e := shEffect{class: ClassFSWrite, cap: CapWorkspaceWrite, tier: TierDestructive, reason: "destroys file contents"}
	c.raiseWrites(&e, c.operands("-s", "--size", "-r", "--reference")...)
	return e
}

func shDd(c *shCall) shEffect {
	e := shEffect{class: ClassFSWrite, cap: CapWorkspaceWrite, tier: TierDestructive, reason: "copies raw data, overwriting its output"}
	for _, a := range c.args {
		if !a.static {
			continue
		}
		if v, ok := strings.CutPrefix(a.val, "of="); ok {
			c.raiseWrites(&e, shArg{val: v, static: true, glob: a.glob})
		}
		if v, ok := strings.CutPrefix(a.val, "if="); ok {
			c.raiseReads(&e, shArg{val: v, static: true, glob: a.glob})
		}
	}
	return e
}

// shSetuidMode reports whether a chmod mode sets the setuid or setgid bit:
// 4755, 2755, u+s, g=s.
func shSetuidMode(m string) bool {
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

// shChmod: on a system path, recursively on / or a home directory, or
// setting setuid/setgid bits, permission changes are privileged.
func shChmod(c *shCall) shEffect {
	e := shPerm("changes file permissions")
	ops := c.operands("--reference")
	targets := ops
	if _, ref := c.value("--reference"); !ref && len(ops) > 0 {
		targets = ops[1:]
		if shSetuidMode(ops[0].val) {
			return shEffect{class: ClassFSPermissions, cap: CapHostAdmin, tier: TierPrivileged, reason: "sets the setuid or setgid bit"}
		}
	}
	for _, a := range c.args { // "chmod -x file": a mode may look like an option
		if a.static && strings.HasPrefix(a.val, "-") && !strings.HasPrefix(a.val,
			"--") && shSetuidMode(a.val[1:]) && strings.ContainsRune(a.val, 's') {
			return shEffect{class: ClassFSPermissions, cap: CapHostAdmin, tier: TierPrivileged, reason: "sets the setuid or setgid bit"}
		}
	}
	shRecursiveRoot(c, &e, targets)
	c.raiseWrites(&e, targets...)
	return e
}

func shChown(c *shCall) shEffect {
	e := shPerm("changes file ownership")
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
	shRecursiveRoot(c, &e, targets)
	c.raiseWrites(&e, targets...)
	return e
}

// shRecursiveRoot raises a recursive change of / or of a home directory.
func shRecursiveRoot(c *shCall, e *shEffect, targets []shArg) {
	if !c.has("-R", "--recursive") {
		return
	}
	for _, t := range targets {
		if !t.static {
			continue
		}
		p := cleanPath(c.resolve(t.val), "")
		if _, rest, ok := splitHome(p); p == "/" || ok && rest == "" {
			e.tier, e.cap = TierPrivileged, CapHostAdmin
			e.reason = shVerbFor(e.class) + " recursively on " + p
			return
		}
	}
}

func shPatch(c *shCall) shEffect {
	e := shWrite(ClassFSWrite, "patches files")
	dir := shLiteral(".")
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

// shTar: extracting or creating writes; options that run commands are
// parsed.
func shTar(c *shCall) shEffect {
	for _, o := range []string{"--to-command", "--use-compress-program", "-I", "--info-script",
		"--new-volume-script", "-F", "--rsh-command"} {
		if v, ok := c.value(o); ok {
			c.runWords("tar "+o, []shArg{v}, shInput{})
		}
	}
	for _, v := range c.values("--checkpoint-action") {
		if cmd, ok := strings.CutPrefix(v.val, "exec="); ok {
			c.runScript("tar --checkpoint-action", cmd, shInput{})
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
		e := shWrite(ClassFSWrite, "extracts an archive")
		if has('P', "--absolute-names") {
			return shAdmin("extracts an archive with absolute paths")
		}
		dirs := c.values("-C", "--directory")
		if len(dirs) == 0 {
			dirs = []shArg{shLiteral(".")}
		}
		c.raiseWrites(&e, dirs...)
		return e
	case has('c', "--create") || has('r', "--append") || has('u', "--update") || has('A', "--catenate", "--concatenate") || c.has("--delete"):
		e := shWrite(ClassFSWrite, "writes an archive")
		c.raiseReads(&e, ops...)
		c.raiseWrites(&e, files...)
		return e
	}
	e := shRead("lists an archive")
	c.raiseReads(&e, files...)
	return e
}

func shUnzip(c *shCall) shEffect {
	if c.has("-l", "-v", "-t", "-Z", "-z") {
		return shRead("lists an archive")
	}
	e := shWrite(ClassFSWrite, "extracts an archive")
	dir := shLiteral(".")
	if d, ok := c.value("-d"); ok {
		dir = d
	}
	c.raiseWrites(&e, dir)
	return e
}

func shZip(c *shCall) shEffect {
	e := shWrite(ClassFSWrite, "writes an archive")
	ops := c.operands("-b", "-n", "-t", "-tt", "-x", "-i", "-P", "--password", "-s", "-O", "--output-file", "-TT", "--unzip-command")
	if cmd, ok := c.value("-TT", "--unzip-command"); ok {
		c.runWords("zip -TT", []shArg{cmd}, shInput{})
	}
	if len(ops) > 0 {
		c.raiseWrites(&e, ops[0])
		c.raiseReads(&e, ops[1:]...)
	}
	return e
}

func sh7z(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shRead("shows help")
	}
	switch c.args[0].val {
	case "l", "t", "i", "h", "b":
		return shRead("lists or tests an archive")
	case "x", "e":
		e := shWrite(ClassFSWrite, "extracts an archive")
		dir := shLiteral(".")
		for _, a := range c.args {
			if v, ok := strings.CutPrefix(a.val, "-o"); ok && a.static {
				dir = shArg{val: v, static: true, glob: a.glob}
			}
		}
		c.raiseWrites(&e, dir)
		return e
	}
	e := shWrite(ClassFSWrite, "writes an archive")
	ops := c.operands()
	if len(ops) > 1 {
		c.raiseWrites(&e, ops[1])
		c.raiseReads(&e, ops[2:]...)
	}
	return e
}

func shCpio(c *shCall) shEffect {
	switch {
	case c.has("-t", "--list"):
		return shRead("lists an archive")
	case c.has("-i", "--extract"):
		e := shWrite(ClassFSWrite, "extracts an archive")
		dir := shLiteral(".")
		if d, ok := c.value("-D", "--directory"); ok {
			dir = d
		}
		c.raiseWrites(&e, dir)
		return e
	case c.has("-p", "--pass-through"):
		e := shWrite(ClassFSCopy, "copies files")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
	return shWrite(ClassFSWrite, "writes an archive")
}

func shCompress(c *shCall) shEffect {
	if c.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") {
		return shReads("reads compressed files")(c)
	}
	e := shWrite(ClassFSWrite, "replaces files with their (de)compressed form")
	c.raiseWrites(&e, c.operands("-S", "--suffix", "-o", "--output", "-b", "-T", "--threads", "-p", "--processes")...)
	c.raiseWrites(&e, c.values("-o", "--output")...)
	return e
}

func shEditor(c *shCall) shEffect {
	if c.has("-R") || c.name == "view" {
		return shReads("shows files")(c)
	}
	e := shWrite(ClassFSWrite, "edits files")
	c.raiseWrites(&e, c.operands("-c", "-S", "-u", "-U", "-i", "-T", "-t", "-q", "-r", "-w", "-W", "-s", "--cmd")...)
	return e
}

func shSSHKeygen(c *shCall) shEffect {
	file, hasFile := c.value("-f")
	switch {
	case c.has("-y", "-e"):
		e := shRead("exports a key")
		if hasFile {
			c.raiseReads(&e, file)
		}
		return e
	case c.has("-l", "-L", "-F", "-H", "-B"):
		return shRead("shows key fingerprints or known hosts")
	case c.has("-R"):
		return shWrite(ClassFSWrite, "removes a host from known_hosts")
	}
	e := shWrite(ClassFSWrite, "creates or changes a key")
	if !hasFile {
		file = shLiteral("~/.ssh/id")
	}
	c.raiseWrites(&e, file)
	return e
}

func shGetent(c *shCall) shEffect {
	for _, op := range c.operands("-s", "--service") {
		if op.val == "shadow" || op.val == "gshadow" {
			return shCredentials("/etc/" + op.val)
		}
	}
	return shRead("looks up system databases")
}

func shSecurity(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shRead("shows help")
	}
	sub := c.args[0].val
	switch {
	case strings.HasPrefix(sub, "find-") && strings.HasSuffix(sub, "-password"), sub == "dump-keychain", sub == "export":
		if sub == "export" || c.has("-w", "-g") || sub == "dump-keychain" {
			return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged, reason: "reads secrets from the keychain"}
		}
		return shRead("looks up keychain items")
	case strings.HasPrefix(sub, "add-"), strings.HasPrefix(sub, "delete-"), strings.HasPrefix(sub, "set-"),
		strings.HasPrefix(sub, "import"), strings.HasPrefix(sub, "create-"), strings.HasPrefix(sub, "unlock"):
		return shAdmin("changes the keychain or trust settings")
	}
	return shRead("shows keychain information")
}

func shPass(c *shCall) shEffect {
	sub := ""
	if len(c.args) > 0 {
		sub = c.args[0].val
	}
	switch sub {
	case "ls", "list", "find", "search", "grep", "version", "help", "--help", "--version":
		return shRead("lists stored passwords")
	case "insert", "add", "edit", "generate", "init", "mv", "rename", "cp", "copy", "git":
		return shWrite(ClassFSWrite, "changes the password store")
	case "rm", "remove", "delete":
		return shDelete("deletes stored passwords")
	}
	return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged, reason: "reads a stored password"}
}

// Network.

var shNetCommands = map[string]shRule{
	"curl": shCurl, "wget": shWget, "http": shHTTPie, "https": shHTTPie, "xh": shHTTPie, "xhs": shHTTPie,
	"aria2c": shDownloader("downloads files", "-d", "--dir", "-o", "--out"), "axel": shDownloader("downloads files", "-o", "--output"),
	"scp": shScp, "sftp": shSftp, "rsync": shRsync,
	"nc": shNetcat, "ncat": shNetcat, "netcat": shNetcat, "socat": shSocat,
	"telnet": shConnect("opens a network connection"), "ftp": shConnect("transfers files over FTP"),
	"tftp": shConnect("transfers files over TFTP"), "lftp": shConnect("transfers files"),
	"ping": shConnect("sends network probes"), "ping6": shConnect("sends network probes"),
	"dig": shConnect("queries DNS"), "nslookup": shConnect("queries DNS"), "host": shConnect("queries DNS"),
	"drill": shConnect("queries DNS"), "traceroute": shConnect("traces a network route"),
	"tracepath": shConnect("traces a network route"), "mtr": shConnect("traces a network route"),
	"whois": shConnect("queries WHOIS"), "nmap": shConnect("scans network hosts"), "arping": shConnect("sends network probes"),
	"mosh": shConnect("connects to another host"), "rdesktop": shConnect("connects to another host"),
	"openssl": shOpenssl,
	"mail":    shMail, "mailx": shMail, "sendmail": shMail, "mutt": shMail, "msmtp": shMail, "swaks": shMail,
	"psql": shDatabase, "mysql": shDatabase, "mariadb": shDatabase, "sqlite3": shDatabase, "mongosh": shDatabase,
	"mongo": shDatabase, "redis-cli": shDatabase, "sqlcmd": shDatabase, "clickhouse-client": shDatabase, "cqlsh": shDatabase,
	"npx": shNpx, "pnpx": shNpx, "bunx": shNpx, "uvx": shNpx,
}

func shConnect(reason string) shRule { return shFixed(shNet(ClassNetConnect, reason)) }

// shFileRefs returns the local files an HTTP client would send: "@file",
// "name=@file", "name=<file", "file://path".
func shFileRefs(words []shArg) []shArg {
	var out []shArg
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
		out = append(out, shArg{val: v, static: true, glob: w.glob})
	}
	return out
}

func shCurl(c *shCall) shEffect {
	e := shNet(ClassNetHTTP, "makes HTTP requests")
	if m, ok := c.value("-X", "--request"); ok && strings.EqualFold(m.val, "DELETE") {
		e = shEffect{class: ClassNetHTTP, cap: CapNetworkEgress, tier: TierDestructive, reason: "sends an HTTP DELETE request"}
	}
	outs := c.values("-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
		"--trace-ascii", "--stderr", "--etag-save", "--hsts", "--alt-svc")
	if c.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name") {
		outs = append(outs, shLiteral("."))
	}
	c.raiseWrites(&e, outs...)
	sent := shFileRefs(c.args)
	sent = append(sent, c.values("-T", "--upload-file", "-K", "--config", "--data-binary", "--json")...)
	c.raiseReads(&e, sent...)
	return e
}

func shWget(c *shCall) shEffect {
	e := shNet(ClassNetHTTP, "downloads files")
	outs := c.values("-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-a", "--append-output")
	if len(outs) == 0 {
		outs = []shArg{shLiteral(".")}
	}
	c.raiseWrites(&e, outs...)
	c.raiseReads(&e, c.values("--post-file", "--body-file", "-i", "--input-file")...)
	c.raiseReads(&e, shFileRefs(c.operands())...)
	return e
}

func shHTTPie(c *shCall) shEffect {
	e := shNet(ClassNetHTTP, "makes HTTP requests")
	if ops := c.operands(); len(ops) > 0 && strings.EqualFold(ops[0].val, "DELETE") {
		e = shEffect{class: ClassNetHTTP, cap: CapNetworkEgress, tier: TierDestructive, reason: "sends an HTTP DELETE request"}
	}
	outs := c.values("-o", "--output")
	if c.has("-d", "--download") && len(outs) == 0 {
		outs = []shArg{shLiteral(".")}
	}
	c.raiseWrites(&e, outs...)
	c.raiseReads(&e, shFileRefs(c.operands())...)
	return e
}

func shDownloader(reason string, outOpts ...string) shRule {
	return func(c *shCall) shEffect {
		e := shNet(ClassNetHTTP, reason)
		outs := c.values(outOpts...)
		if len(outs) == 0 {
			outs = []shArg{shLiteral(".")}
		}
		c.raiseWrites(&e, outs...)
		return e
	}
}

// shRemote reports whether an scp or rsync operand names another host
// (host:path, user@host:path, rsync://...).
func shRemote(a shArg) bool {
	if !a.static {
		return false
	}
	if strings.Contains(a.val, "://") {
		return true
	}
	i := strings.IndexByte(a.val, ':')
	return i > 0 && !strings.ContainsRune(a.val[:i], '/')
}

// shTransfer classifies scp-like copies: with a remote operand a network
// transfer, else a local copy; local destinations are checked, sources sent
// may be credentials.
func shTransfer(c *shCall, ops []shArg, reason string) shEffect {
	remote := slices.ContainsFunc(ops, shRemote)
	e := shWrite(ClassFSCopy, "copies files")
	if remote {
		e = shNet(ClassNetConnect, reason)
	}
	if len(ops) > 1 {
		dest := ops[len(ops)-1]
		if !shRemote(dest) {
			c.raiseWrites(&e, dest)
		}
		var local []shArg
		for _, s := range ops[:len(ops)-1] {
			if !shRemote(s) {
				local = append(local, s)
			}
		}
		c.raiseReads(&e, local...)
	}
	return e
}

func shScp(c *shCall) shEffect {
	opts, _ := shSplit(c.args, shOpts{short: "cFiJlOoPS"})
	c.proxyCommands(opts)
	if prog, ok := shOptVal(opts, "-S"); ok {
		c.runWords("scp -S", []shArg{prog}, shInput{})
	}
	return shTransfer(c, c.operands("-c", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-D", "-X"), "copies files to or from another host")
}

func shSftp(c *shCall) shEffect {
	opts, _ := shSplit(c.args, shOpts{short: "BbcDFiJloPRSs"})
	c.proxyCommands(opts)
	e := shNet(ClassNetConnect, "transfers files with another host")
	if b, ok := shOptVal(opts, "-b"); ok {
		c.raiseReads(&e, b)
	}
	return e
}

func shRsync(c *shCall) shEffect {
	if sh, ok := c.value("-e", "--rsh"); ok {
		c.runWords("rsync -e", []shArg{sh}, shInput{})
	}
	ops := c.operands("-e", "--rsh", "--rsync-path", "-f", "--filter", "--exclude", "--include", "--exclude-from",
		"--include-from", "--files-from", "-T", "--temp-dir", "--compare-dest", "--copy-dest", "--link-dest",
		"--backup-dir", "--suffix", "--chmod", "--chown", "--usermap", "--groupmap", "-B", "--block-size",
		"--bwlimit", "--timeout", "--contimeout", "--port", "--password-file", "--log-file", "--partial-dir",
		"--max-size", "--min-size", "--max-delete", "--modify-window", "--out-format", "--skip-compress",
		"--compress-choice", "--checksum-choice", "--info", "--debug", "--iconv", "--address", "--sockopts",
		"--outbuf", "--stop-after", "--stop-at", "--mkpath")
	e := shTransfer(c, ops, "synchronises files with another host")
	if c.has("--delete", "--del", "--delete-before", "--delete-during", "--delete-delay", "--delete-after",
		"--delete-excluded", "--remove-source-files") {
		e.tier = max(e.tier, TierDestructive)
		e.reason = "synchronises files and deletes what the source lacks"
	}
	return e
}

func shNetcat(c *shCall) shEffect {
	if c.has("-e", "-c", "--exec", "--sh-exec", "--lua-exec") {
		return shEffect{class: ClassNetConnect, cap: CapNetworkEgress, tier: TierPrivileged, reason: "gives a network peer a program or shell"}
	}
	return shNet(ClassNetConnect, "opens a network connection")
}

func shSocat(c *shCall) shEffect {
	for _, a := range c.operands() {
		up := strings.ToUpper(a.val)
		if !a.static || strings.HasPrefix(up, "EXEC:") || strings.HasPrefix(up, "SYSTEM:") {
			return shEffect{class: ClassNetConnect, cap: CapNetworkEgress, tier: TierPrivileged, reason: "connects a program or shell to the network"}
		}
	}
	return shNet(ClassNetConnect, "relays network connections")
}

func shOpenssl(c *shCall) shEffect {
	sub := ""
	if len(c.args) > 0 {
		sub = c.args[0].val
	}
	switch sub {
	case "s_client", "s_server", "s_time", "ocsp":
		return shNet(ClassNetConnect, "opens a TLS connection")
	}
	e := shRead("runs a cryptographic operation")
	if outs := c.values("-out", "-keyout"); len(outs) > 0 {
		e = shWrite(ClassFSWrite, "writes keys or certificates")
		c.raiseWrites(&e, outs...)
	}
	c.raiseReads(&e, c.operands()...)
	return e
}

func shMail(c *shCall) shEffect {
	e := shNet(ClassNetConnect, "sends email")
	c.raiseReads(&e, c.values("-a", "-A", "--attach", "--attach-file")...)
	return e
}

// shDatabase is a database client: a query that drops, deletes or updates
// data is destructive.
func shDatabase(c *shCall) shEffect {
	e := shNet(ClassNetConnect, "runs database queries")
	if c.name == "sqlite3" {
		e = shWrite(ClassFSWrite, "runs queries on a local database")
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
	if c.in.kind == shInText {
		queries = append(queries, shLiteral(c.in.text))
	}
	for _, q := range queries {
		if !q.static || shDestructiveQuery(q.val) {
			e.tier = TierDestructive
			e.reason = "runs database queries that delete or change data"
			return e
		}
	}
	return e
}

func shDestructiveQuery(q string) bool {
	q = strings.ToLower(q)
	for _, kw := range []string{"drop ", "delete ", "truncate ", "update ", "alter ", "flushall", "flushdb", "del ", "unlink "} {
		if strings.Contains(q, kw) || strings.HasPrefix(q, strings.TrimSpace(kw)) {
			return true
		}
	}
	return false
}

func shNpx(c *shCall) shEffect {
	if cmd, ok := c.value("-c", "--call"); ok {
		if !cmd.static {
			return shUnknown("runs a command only known at run time")
		}
		c.runScript(c.name+" -c", cmd.val, c.in)
	}
	if c.has("--no-install", "--offline", "--no") {
		return shExec("runs a locally installed package")
	}
	pkg := "a package"
	if ops := c.operands("-p", "--package", "-c", "--call", "--from", "--with", "--python"); len(ops) > 0 {
		pkg = ops[0].text
	}
	return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs " + pkg}
}

// System administration.

var shAdminCommands = map[string]shRule{
	"systemctl": shSystemctl, "service": shService, "launchctl": shLaunchctl,
	"mount": shMount, "umount": shFixed(shAdmin("unmounts file systems")),
	"modprobe": shFixed(shAdmin("loads kernel modules")), "insmod": shFixed(shAdmin("loads kernel modules")),
	"rmmod": shFixed(shAdmin("unloads kernel modules")), "depmod": shFixed(shAdmin("updates kernel module data")),
	"iptables": shFirewall, "ip6tables": shFirewall, "iptables-restore": shFixed(shAdmin("replaces firewall rules")),
	"iptables-save": shFixed(shRead("prints firewall rules")), "nft": shFirewall, "ufw": shFirewall,
	"firewall-cmd": shFirewall, "pfctl": shFirewall,
	"useradd": shFixed(shAdmin("creates users")), "userdel": shFixed(shAdmin("deletes users")),
	"usermod": shFixed(shAdmin("changes users")), "groupadd": shFixed(shAdmin("creates groups")),
	"groupdel": shFixed(shAdmin("deletes groups")), "groupmod": shFixed(shAdmin("changes groups")),
	"adduser": shFixed(shAdmin("creates users")), "deluser": shFixed(shAdmin("deletes users")),
	"addgroup": shFixed(shAdmin("creates groups")), "delgroup": shFixed(shAdmin("deletes groups")),
	"passwd": shFixed(shAdmin("changes passwords")), "chpasswd": shFixed(shAdmin("changes passwords")),
	"chage": shFixed(shAdmin("changes password expiry")), "gpasswd": shFixed(shAdmin("changes groups")),
	"newusers": shFixed(shAdmin("creates users")), "chsh": shFixed(shAdmin("changes a login shell")),
	"chfn": shFixed(shAdmin("changes user information")), "vipw": shFixed(shAdmin("edits the password file")),
	"vigr": shFixed(shAdmin("edits the group file")), "visudo": shVisudo,
	"crontab": shCrontab, "at": shFixed(shAdmin("schedules a command to run later")),
	"batch": shFixed(shAdmin("schedules a command to run later")), "atrm": shFixed(shAdmin("removes scheduled commands")),
	"atq":      shFixed(shRead("lists scheduled commands")),
	"shutdown": shFixed(shAdmin("shuts the machine down")), "reboot": shFixed(shAdmin("reboots the machine")),
	"halt": shFixed(shAdmin("halts the machine")), "poweroff": shFixed(shAdmin("powers the machine off")),
	"init": shFixed(shAdmin("changes the run level")), "telinit": shFixed(shAdmin("changes the run level")),
	"sysctl": shSysctl, "ip": shIP, "ifconfig": shIfconfig, "route": shArgsAdmin("changes routes", "-n", "-e", "-v"),
	"arp":    shArgsAdmin("changes the ARP table", "-a", "-n", "-e", "-v"),
	"setcap": shFixed(shAdmin("grants file capabilities")), "ldconfig": shLdconfig,
	"setenforce": shFixed(shAdmin("changes SELinux enforcement")),
	"swapon":     shArgsAdmin("enables swap", "--show", "-s", "--summary"), "swapoff": shFixed(shAdmin("disables swap")),
	"hwclock": shHwclock, "dmesg": shDmesg, "journalctl": shJournalctl,
	"update-alternatives": shUpdateAlternatives, "update-grub": shFixed(shAdmin("changes the boot loader")),
	"grub-install": shFixed(shAdmin("installs the boot loader")), "grub-mkconfig": shFixed(shAdmin("changes the boot loader")),
	"efibootmgr":       shArgsAdmin("changes boot entries", "-v"),
	"update-initramfs": shFixed(shAdmin("rebuilds the initramfs")), "dracut": shFixed(shAdmin("rebuilds the initramfs")),
	"mkinitcpio": shFixed(shAdmin("rebuilds the initramfs")),
	"tc":         shFixed(shAdmin("changes traffic control")), "ethtool": shEthtool, "nmcli": shNmcli,
	"timedatectl": shCtl("changes time settings"), "hostnamectl": shCtl("changes the host name"),
	"localectl": shCtl("changes locale settings"),
	"fdisk":     shDisk("-l", "--list"), "sfdisk": shDisk("-l", "--list", "-d", "--dump", "-s", "--show-size", "-V", "--verify"),
	"parted": shParted, "gdisk": shDisk("-l"), "sgdisk": shDisk("-p", "--print", "-i", "--info", "-v", "--verify"),
	"cfdisk": shDisk(), "mkfs": shDisk(), "mke2fs": shDisk(), "fsck": shDisk("-n", "-N"), "wipefs": shWipefs,
	"mkswap": shDisk(), "blkdiscard": shDisk(), "diskutil": shDiskutil,
	"defaults": shDefaults, "scutil": shArgsAdmin("changes system configuration", "--get", "--dns", "--proxy", "-r", "--nwi"),
	"networksetup":   shPrefixAdmin("changes network settings", "-get", "-list", "-print", "-show", "-version", "-help"),
	"pmset":          shPrefixAdmin("changes power settings", "-g"),
	"spctl":          shPrefixAdmin("changes Gatekeeper settings", "--status", "--assess", "-a"),
	"csrutil":        shPrefixAdmin("changes System Integrity Protection", "status"),
	"softwareupdate": shPrefixAdmin("installs system updates", "-l", "--list", "--history"),
	"dscl":           shDscl,
}

func shSystemctl(c *shCall) shEffect {
	sub, _, ok := shSubcommand(c.args, shOpts{short: "tpHMno", long: []string{"--type", "--property",
		"--host", "--machine", "--lines", "--output", "--state", "--signal", "--kill-whom", "--root", "--job-mode"}})
	if !ok {
		return shUnknown("runs systemctl with a subcommand only known at run time")
	}
	switch sub {
	case "", "status", "show", "cat", "help", "is-active", "is-enabled", "is-failed", "is-system-running",
		"list-units", "list-unit-files", "list-timers", "list-sockets", "list-dependencies", "list-jobs",
		"list-machines", "list-automounts", "list-paths", "get-default", "show-environment", "--version":
		return shRead("shows services")
	}
	return shAdmin("manages services (systemctl " + sub + ")")
}

func shService(c *shCall) shEffect {
	ops := c.operands()
	if c.has("--status-all") || len(ops) >= 2 && ops[1].val == "status" {
		return shRead("shows services")
	}
	return shAdmin("manages services")
}

func shLaunchctl(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shRead("shows launchd help")
	}
	switch c.args[0].val {
	case "list", "print", "print-disabled", "print-cache", "blame", "dumpstate", "procinfo", "version",
		"help", "managername", "manageruid", "managerpid", "getenv", "hostinfo", "resolveport", "examine":
		return shRead("shows launchd services")
	}
	return shAdmin("manages launchd services")
}

func shMount(c *shCall) shEffect {
	if len(c.operands("-t", "--types", "-o", "--options", "-O", "--test-opts", "-L", "--label", "-U", "--uuid")) == 0 &&
		!c.has("-a", "--all") {
		return shRead("lists mounted file systems")
	}
	return shAdmin("mounts file systems")
}

func shFirewall(c *shCall) shEffect {
	switch c.name {
	case "iptables", "ip6tables":
		if c.has("-L", "--list", "-S", "--list-rules", "-C", "--check") && !c.has("-A", "-D", "-I", "-R",
			"-F", "-X", "-P", "-N", "-E", "-Z") {
			return shRead("lists firewall rules")
		}
	case "nft":
		if ops := c.operands("-f", "--file", "-I", "--includepath"); len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "describe") {
			return shRead("lists firewall rules")
		}
	case "ufw":
		if ops := c.operands(); len(ops) == 0 || ops[0].val == "status" || ops[0].val == "show" || ops[0].val == "version" || ops[0].val == "app" && len(ops) > 1 && ops[1].val == "list" {
			return shRead("shows firewall status")
		}
	case "firewall-cmd":
		read := true
		for _, a := range c.args {
			v := a.val
			if !(strings.HasPrefix(v, "--list") || strings.HasPrefix(v, "--get") || strings.HasPrefix(v, "--query") ||
				v == "--state" || strings.HasPrefix(v, "--zone") || v == "--permanent" || strings.HasPrefix(v, "--info")) {
				read = false
			}
		}
		if read {
			return shRead("shows firewall settings")
		}
	case "pfctl":
		if c.has("-s", "--show") && !c.has("-f", "-e", "-d", "-F", "-k", "-t") {
			return shRead("shows firewall settings")
		}
	}
	return shAdmin("changes firewall rules")
}

func shVisudo(c *shCall) shEffect {
	if c.has("-c", "--check") {
		return shRead("checks the sudoers file")
	}
	return shAdmin("edits the sudoers file")
}

func shCrontab(c *shCall) shEffect {
	if c.has("-l") && !c.has("-r", "-e") {
		return shRead("lists scheduled jobs")
	}
	return shAdmin("changes scheduled jobs (crontab)")
}

func shSysctl(c *shCall) shEffect {
	if c.has("-w", "--write", "-p", "--load", "--system") {
		return shAdmin("changes kernel parameters")
	}
	for _, op := range c.operands() {
		if strings.Contains(op.val, "=") || !op.static {
			return shAdmin("changes kernel parameters")
		}
	}
	return shRead("shows kernel parameters")
}

// shIP is iproute2's ip: "ip addr show" reads, "ip route add" changes the
// network. Objects and commands may be abbreviated.
func shIP(c *shCall) shEffect {
	ops := c.operands("-n", "-netns", "-f", "-family", "-l", "-loops", "-rc", "-rcvbuf", "-b", "-batch")
	if c.has("-b", "-batch", "-force") {
		return shAdmin("changes network settings from a batch file")
	}
	if len(ops) == 0 {
		return shRead("shows network settings")
	}
	if (ops[0].val == "netns" || ops[0].val == "netn") && len(ops) > 2 && ops[1].val == "exec" {
		c.run("ip netns exec", ops[3:], shAdmin("runs in a network namespace"))
		return shEffect{none: true}
	}
	if ops[0].val == "monitor" || ops[0].val == "help" {
		return shRead("shows network settings")
	}
	if len(ops) == 1 {
		return shRead("shows network settings")
	}
	cmd := ops[1].val
	for _, r := range []string{"show", "list", "lst", "get", "help"} {
		if strings.HasPrefix(r, cmd) && cmd != "" {
			return shRead("shows network settings")
		}
	}
	return shAdmin("changes network settings")
}

func shIfconfig(c *shCall) shEffect {
	if len(c.operands()) <= 1 {
		return shRead("shows network interfaces")
	}
	return shAdmin("changes network interfaces")
}

// shArgsAdmin reads when called with no operands (or only the given
// options), and administers the system otherwise.
func shArgsAdmin(reason string, readOpts ...string) shRule {
	return func(c *shCall) shEffect {
		for _, a := range c.args {
			if !slices.Contains(readOpts, a.val) {
				return shAdmin(reason)
			}
		}
		return shRead("shows system settings")
	}
}

// shPrefixAdmin reads when its first word starts with one of readPrefixes.
func shPrefixAdmin(reason string, readPrefixes ...string) shRule {
	return func(c *shCall) shEffect {
		if len(c.args) == 0 {
			return shRead("shows system settings")
		}
		for _, p := range readPrefixes {
			if strings.HasPrefix(c.args[0].val, p) {
				return shRead("shows system settings")
			}
		}
		return shAdmin(reason)
	}
}

func shLdconfig(c *shCall) shEffect {
	if c.has("-p", "--print-cache", "-V", "--version") {
		return shRead("shows the library cache")
	}
	return shAdmin("changes the library cache")
}

func shHwclock(c *shCall) shEffect {
	if c.has("--set", "-w", "--systohc", "-s", "--hctosys", "--adjust", "-a", "--systz") {
		return shAdmin("sets the clock")
	}
	return shRead("shows the hardware clock")
}

func shDmesg(c *shCall) shEffect {
	if c.has("-C", "--clear", "-c", "--read-clear", "-D", "--console-off", "-E", "--console-on", "-n", "--console-level") {
		return shAdmin("changes the kernel log")
	}
	return shRead("shows the kernel log")
}

func shJournalctl(c *shCall) shEffect {
	for _, a := range c.args {
		if strings.HasPrefix(a.val, "--vacuum") || a.val == "--rotate" || a.val == "--flush" || a.val == "--sync" ||
			a.val == "--relinquish-var" || a.val == "--setup-keys" {
			return shAdmin("changes the system journal")
		}
	}
	return shRead("shows the system journal")
}

func shUpdateAlternatives(c *shCall) shEffect {
	if c.has("--display", "--query", "--list", "--get-selections") {
		return shRead("shows alternatives")
	}
	return shAdmin("changes system alternatives")
}

func shEthtool(c *shCall) shEffect {
	for _, a := range c.args {
		if a.static && len(a.val) == 2 && a.val[0] == '-' && a.val[1] >= 'A' && a.val[1] <= 'Z' || a.val == "-s" || a.val == "-r" {
			return shAdmin("changes network interface settings")
		}
	}
	return shRead("shows network interface settings")
}

func shNmcli(c *shCall) shEffect {
	ops := c.operands("-f", "--fields", "-g", "--get-values", "-e", "--escape", "-c", "--colors", "-m", "--mode", "-w", "--wait")
	for _, op := range ops {
		switch op.val {
		case "up", "down", "add", "modify", "delete", "reload", "load", "import", "connect", "disconnect",
			"on", "off", "hotspot", "rescan", "set", "edit", "clone":
			return shAdmin("changes network connections")
		}
	}
	return shRead("shows network connections")
}

// shCtl is timedatectl and kin: status and list-* read, set-* changes.
func shCtl(reason string) shRule {
	return func(c *shCall) shEffect {
		ops := c.operands("-H", "--host", "-M", "--machine")
		if len(ops) == 0 || ops[0].val == "status" || ops[0].val == "show" || strings.HasPrefix(ops[0].val, "list") {
			return shRead("shows system settings")
		}
		return shAdmin(reason)
	}
}

// shDisk is a partitioning or formatting tool: destructive unless it only
// lists (readOpts).
func shDisk(readOpts ...string) shRule {
	return func(c *shCall) shEffect {
		if len(readOpts) > 0 && c.has(readOpts...) {
			return shRead("lists partitions")
		}
		return shAdminDestroy("partitions or formats disks")
	}
}

func shParted(c *shCall) shEffect {
	ops := c.operands("-a", "--align")
	if c.has("-l", "--list") || len(ops) == 2 && (ops[1].val == "print" || ops[1].val == "p") {
		return shRead("lists partitions")
	}
	return shAdminDestroy("partitions disks")
}

func shWipefs(c *shCall) shEffect {
	if c.has("-a", "--all", "-o", "--offset") && !c.has("-n", "--no-act") {
		return shAdminDestroy("wipes file system signatures")
	}
	return shRead("lists file system signatures")
}

func shDiskutil(c *shCall) shEffect {
	if len(c.args) == 0 {
		return shRead("shows disks")
	}
	switch c.args[0].val {
	case "list", "info", "information", "activity", "listFilesystems", "apfs":
		if c.args[0].val != "apfs" || len(c.args) > 1 && strings.HasPrefix(c.args[1].val, "list") {
			return shRead("shows disks")
		}
	}
	return shAdminDestroy("changes disks")
}

func shDefaults(c *shCall) shEffect {
	ops := c.operands("-host")
	if len(ops) > 0 {
		switch ops[0].val {
		case "read", "read-type", "domains", "find", "help", "export":
			return shRead("reads preferences")
		}
	}
	return shWrite(ClassFSWrite, "changes preferences")
}

func shDscl(c *shCall) shEffect {
	for _, a := range c.args {
		switch strings.TrimPrefix(a.val, "-") {
		case "create", "append", "merge", "delete", "change", "changei", "passwd", "auth", "authonly", "mcxedit", "mcxset", "mcxdelete":
			return shAdmin("changes directory services")
		}
	}
	return shRead("reads directory services")
}

// Development tools.

var shDevCommands = map[string]shRule{
	"git": shGit,
	"gh":  shGh,
	"go":  shGo, "gofmt": shFormatter("-w", "", "-l", "-d"), "goimports": shFormatter("-w", "", "-l", "-d"),
	"cargo": shCargo, "rustfmt": shFormatter("", "--check"), "rustup": shRustup,
	"python": shPython, "pypy": shPython,
	"node": shInterp(shLang{name: "Node.js", code: "ep", longCode: []string{"--eval", "--print"},
		values: "rC", long: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions",
			"--env-file", "--input-type", "--title", "--inspect-port", "--stack-size"}, runs: []string{"--test", "--run"}}),
	"nodejs": shInterp(shLang{name: "Node.js", code: "ep", longCode: []string{"--eval", "--print"},
		values: "rC", long: []string{"--require", "--import", "--loader"}}),
	"ruby":   shInterp(shLang{name: "Ruby", code: "e", values: "rICEFK", inPlace: true}),
	"perl":   shInterp(shLang{name: "Perl", code: "eE", values: "IMm", inPlace: true}),
	"php":    shPHP,
	"lua":    shInterp(shLang{name: "Lua", code: "e", values: "l"}),
	"luajit": shInterp(shLang{name: "Lua", code: "e", values: "l"}),
	"java":   shJava,
	"deno":   shDeno,
	"bun":    shBun,
	"ts-node": shInterp(shLang{name: "TypeScript", code: "ep", longCode: []string{"--eval", "--print"},
		values: "rO", long: []string{"--require", "--compiler-options", "--project"}}),
	"tsx":     shInterp(shLang{name: "TypeScript", code: "ep", longCode: []string{"--eval", "--print"}}),
	"esno":    shInterp(shLang{name: "TypeScript", code: "e"}),
	"Rscript": shInterp(shLang{name: "R", code: "e"}), "R": shInterp(shLang{name: "R", code: "e"}),
	"julia": shInterp(shLang{name: "Julia", code: "eE", longCode: []string{"--eval", "--print"}}),
	"swift": shInterp(shLang{name: "Swift", code: "e"}), "kotlin": shInterp(shLang{name: "Kotlin", code: "e"}),
	"scala": shInterp(shLang{name: "Scala", code: "e"}), "groovy": shInterp(shLang{name: "Groovy", code: "e"}),
	"elixir": shInterp(shLang{name: "Elixir", code: "e", longCode: []string{"--eval"}}),
	"erl": shInterp(shLang{name: "Erlang", longCode: []string{"-eval"}, long: []string{"-s", "-run",
		"-pa", "-pz", "-sname", "-name", "-setcookie"}}),
	"escript": shInterp(shLang{name: "Erlang", code: ""}), "runghc": shInterp(shLang{name: "Haskell", code: "e"}),
	"runhaskell": shInterp(shLang{name: "Haskell", code: "e"}), "clojure": shInterp(shLang{name: "Clojure", code: "e"}),
	"clj": shInterp(shLang{name: "Clojure", code: "e"}), "bb": shInterp(shLang{name: "Clojure", code: "e"}),
	"dart": shInterp(shLang{name: "Dart", code: ""}), "osascript": shInterp(shLang{name: "AppleScript", code: "e"}),
	"tclsh": shInterp(shLang{name: "Tcl", code: ""}), "wish": shInterp(shLang{name: "Tcl", code: ""}),
	"guile": shInterp(shLang{name: "Scheme", code: "c"}), "racket": shInterp(shLang{name: "Racket", code: "e"}),
	"sbcl": shInterp(shLang{name: "Lisp", longCode: []string{"--eval", "--load", "--script"}}),
	"irb":  shInterp(shLang{name: "Ruby", code: ""}), "iex": shInterp(shLang{name: "Elixir", code: ""}),
	"ghci": shInterp(shLang{name: "Haskell", code: ""}), "jshell": shInterp(shLang{name: "Java", code: ""}),
	"make": shBuild("runs build recipes"), "gmake": shBuild("runs build recipes"), "bmake": shBuild("runs build recipes"),
	"cmake": shBuild("configures or runs a build"), "ninja": shBuild("runs a build"), "meson": shBuild("configures or runs a build"),
	"bazel": shBuild("runs a build"), "bazelisk": shBuild("runs a build"), "buck": shBuild("runs a build"),
	"buck2": shBuild("runs a build"), "gradle": shGradle, "gradlew": shGradle, "mvn": shMaven, "mvnw": shMaven,
	"ant": shBuild("runs a build"), "sbt": shBuild("runs a build"), "mill": shBuild("runs a build"),
	"lein": shBuild("runs a build"), "just": shBuild("runs recipes"), "task": shBuild("runs tasks"),
	"rake": shBuild("runs tasks"), "invoke": shBuild("runs tasks"), "scons": shBuild("runs a build"),
	"xcodebuild": shBuild("runs a build"), "tox": shBuild("runs tests"), "nox": shBuild("runs sessions"),
	"pytest": shBuild("runs tests"), "py.test": shBuild("runs tests"), "jest": shBuild("runs tests"),
	"vitest": shBuild("runs tests"), "mocha": shBuild("runs tests"), "karma": shBuild("runs tests"),
	"ava": shBuild("runs tests"), "phpunit": shBuild("runs tests"), "rspec": shBuild("runs tests"),
	"cucumber": shBuild("runs tests"), "playwright": shBuild("runs tests"), "cypress": shBuild("runs tests"),
	"mypy": shBuild("type-checks code, loading its plugins"), "pylint": shBuild("lints code, loading its plugins"),
	"pyright": shBuild("type-checks code"), "eslint": shBuild("lints code, loading its configuration"),
	"tsc": shBuild("compiles TypeScript"), "golangci-lint": shBuild("lints code"), "webpack": shBuild("bundles code"),
	"vite": shBuild("builds or serves code"), "esbuild": shBuild("bundles code"), "rollup": shBuild("bundles code"),
	"turbo": shBuild("runs tasks"), "nx": shBuild("runs tasks"), "lerna": shBuild("runs tasks"),
	"gcc": shCompiler, "g++": shCompiler, "cc": shCompiler, "c++": shCompiler, "clang": shCompiler,
	"clang++": shCompiler, "rustc": shCompiler, "javac": shCompiler, "zig": shBuild("compiles code"),
	"nasm": shCompiler, "as": shCompiler, "ld": shCompiler,
	"flake8": shReads("lints code"), "pyflakes": shReads("lints code"), "pycodestyle": shReads("lints code"),
	"shellcheck": shReads("lints shell scripts"), "hadolint": shReads("lints Dockerfiles"), "yamllint": shReads("lints YAML"),
	"markdownlint": shReads("lints Markdown"), "staticcheck": shReads("lints Go code"),
	"govulncheck": shFixed(shNet(ClassNetHTTP, "checks for known vulnerabilities")),
	"ruff":        shRuff, "black": shFormatter("", "--check", "--diff"), "isort": shFormatter("", "--check", "--check-only", "--diff", "-c"),
	"prettier": shFormatter("--write", "-w", "--check", "-c", "--list-different", "-l"), "autopep8": shFormatter("-i", "--in-place"),
	"yapf": shFormatter("-i", "--in-place"), "clang-format": shFormatter("-i", ""), "shfmt": shFormatter("-w", "--write"),
	"stylua": shFormatter("", "--check"), "dprint": shFormatter("fmt", "check"),
}

// shGitExecKey reports whether git runs the value of configuration key as a
// command (or loads configuration that may).
func shGitExecKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.hookspath", "core.askpass",
		"core.gitproxy", "core.alternaterefscommand", "sequence.editor", "diff.external", "gpg.program",
		"credential.helper", "uploadpack.packobjectshook", "include.path", "receive.procreceiverefs",
		"protocol.allow", "ssh.variant", "core.worktree":
		return true
	}
	for _, p := range []string{"alias.", "pager.", "filter.", "includeif.", "url."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	switch k[strings.LastIndexByte(k, '.')+1:] {
	case "textconv", "command", "driver", "cmd", "helper", "program", "uploadpack", "receivepack", "allow", "proxy", "vcs":
		return true
	}
	return false
}

// shGitCommandKey reports whether the value of key is a shell command that
// git runs as such (a pager, an editor): it is analysed like any command.
func shGitCommandKey(key string) bool {
	k := strings.ToLower(key)
	return k == "core.pager" || k == "core.editor" || k == "sequence.editor" || strings.HasPrefix(k, "pager.")
}

// shGitConfigSet analyses setting git configuration key to value: a pager
// or editor is analysed as a command, an alias as what it runs; the other
// keys that make git run something are privileged. It returns the reason
// when they are.
func (c *shCall) shGitConfigSet(key, value shArg) string {
	if !key.static {
		return "sets git configuration only known at run time"
	}
	k := strings.ToLower(key.val)
	switch {
	case shGitCommandKey(k) || strings.HasPrefix(k, "alias."):
		if !value.static {
			return "sets " + key.val + " to a command only known at run time"
		}
		if alias, ok := strings.CutPrefix(value.val, "!"); ok {
			c.runScript("git "+key.val, alias, shInput{})
		} else if strings.HasPrefix(k, "alias.") {
			c.runScript("git "+key.val, "git "+value.val, shInput{})
		} else {
			c.runScript("git "+key.val, value.val, shInput{})
		}
		return ""
	case shGitExecKey(k):
		return "sets " + key.val + ", which makes git run a command"
	}
	return ""
}

// shGitConfigArg analyses a "key=value" given with git -c.
func (c *shCall) shGitConfigArg(a shArg) string {
	if !a.static {
		return "sets git configuration only known at run time"
	}
	key, val, _ := strings.Cut(a.val, "=")
	return c.shGitConfigSet(shLiteral(key), shArg{val: val, static: true, text: shQuote(val)})
}

// shGit parses git's global options, then classifies its subcommand.
func shGit(c *shCall) shEffect {
	args := c.args
	risk := ""
	i := 0
loop:
	for i < len(args) {
		a := args[i]
		v := a.val
		switch {
		case !a.static:
			break loop
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--super-prefix":
			i += 2
		case v == "--config-env":
			risk = shOr(risk, "sets git configuration from the environment")
			i += 2
		case v == "-c":
			if i+1 < len(args) {
				risk = shOr(risk, c.shGitConfigArg(args[i+1]))
			}
			i += 2
		case strings.HasPrefix(v, "--config-env="):
			risk = shOr(risk, "sets git configuration from the environment")
			i++
		case strings.HasPrefix(v, "--exec-path="):
			risk = "runs git programs from " + v[len("--exec-path="):]
			i++
		case strings.HasPrefix(v, "-"):
			i++
		default:
			break loop
		}
	}
	var e shEffect
	switch {
	case i >= len(args):
		e = shGitRead("shows git help or version")
	case !args[i].static:
		e = shUnknown("runs git with a subcommand only known at run time")
	default:
		sub := args[i].val
		if r := shGitCommands[sub]; r != nil {
			e = c.delegate(args[i+1:], r)
		} else {
			e = shExec("runs git " + sub + ", which Airlock does not know (an alias or an extension)")
			e.generic = true
		}
	}
	for _, a := range args {
		if a.static && strings.Contains(a.val, "ext::") {
			return shUnknown("uses git's ext:: transport, which runs a command")
		}
	}
	if risk != "" && e.tier < TierPrivileged {
		return shEnv(risk)
	}
	return e
}

// shGitReader is a subcommand that reads the repository; --output makes
// it write a file.
func shGitReader(reason string) shRule {
	return func(c *shCall) shEffect {
		e := shGitRead(reason)
		if outs := c.values("--output"); len(outs) > 0 {
			w := shWrite(ClassFSWrite, "writes git output into a file")
			c.raiseWrites(&w, outs...)
			e = shMax(e, w)
		}
		return e
	}
}

func shGitWriter(reason string) shRule { return shFixed(shGitWrite(reason)) }

var shGitCommands = shBuildGitCommands()

func shBuildGitCommands() map[string]shRule {
	shGitCommands := map[string]shRule{}
	for _, name := range strings.Fields(`status log diff show blame annotate describe shortlog grep rev-parse rev-list
		ls-files ls-tree cat-file merge-base for-each-ref name-rev check-ignore check-attr check-ref-format
		check-mailmap count-objects help version whatchanged show-ref show-branch var verify-commit verify-tag
		verify-pack fsck range-diff cherry diff-tree diff-index diff-files request-pull get-tar-commit-id
		column fmt-merge-msg stripspace patch-id interpret-trailers merge-tree show-index unpack-file
		rerere-diff`) {
		shGitCommands[name] = shGitReader("reads the repository")
	}
	for _, name := range strings.Fields(`add commit merge cherry-pick revert mv am read-tree write-tree
		commit-tree fast-import mktree mktag unpack-objects index-pack pack-objects pack-refs repack
		prune-packed checkout-index merge-file merge-index rerere mailsplit update-server-info
		fast-export bugreport diagnose`) {
		shGitCommands[name] = shGitWriter("changes the repository")
	}
	shGitCommands["commit"] = shGitWriter("records a commit")
	shGitCommands["add"] = shGitWriter("stages changes")
	shGitCommands["merge"] = shGitWriter("merges branches")
	for name, r := range map[string]shRule{
		"push": shGitPush, "fetch": shGitFetch(ClassGitWrite, "fetches from a remote"),
		"pull":      shGitFetch(ClassGitWrite, "pulls from a remote"),
		"ls-remote": shGitFetch(ClassGitRead, "lists a remote's refs"),
		"clone":     shGitClone, "init": shGitInit, "branch": shGitBranch, "tag": shGitTag, "remote": shGitRemote,
		"config": shGitConfig, "stash": shGitStash, "worktree": shGitWorktree, "reflog": shGitReflog,
		"checkout": shGitCheckout, "switch": shGitSwitch, "restore": shGitRestore, "reset": shGitReset,
		"clean": shGitClean, "rm": shGitRm, "gc": shGitGc, "prune": shGitPrune,
		"filter-branch": shFixed(shGitDestroy("rewrites history")), "filter-repo": shFixed(shGitDestroy("rewrites history")),
		"update-ref": shGitUpdateRef, "symbolic-ref": shGitSymbolicRef, "rebase": shGitRebase, "bisect": shGitBisect,
		"submodule": shGitSubmodule, "notes": shGitNotes, "apply": shGitApply, "archive": shGitArchive,
		"format-patch": shGitFormatPatch, "bundle": shGitBundle, "send-email": shFixed(shNet(ClassNetConnect, "sends patches by email")),
		"daemon":       shFixed(shNet(ClassNetConnect, "serves repositories")),
		"instaweb":     shFixed(shNet(ClassNetConnect, "serves a web interface")),
		"http-backend": shFixed(shNet(ClassNetConnect, "serves repositories")),
		"credential":   shGitCredential, "credential-store": shGitCredential, "credential-cache": shGitCredential,
		"maintenance": shGitMaintenance, "lfs": shGitLFS, "hook": shFixed(shExec("runs a git hook")),
		"difftool": shGitTool, "mergetool": shGitTool, "sparse-checkout": shGitSparse, "replace": shGitReplace,
		"hash-object": shGitHashObject, "update-index": shGitWriter("changes the index"),
		"range-diff": shGitReader("compares commit ranges"),
	} {
		shGitCommands[name] = r
	}
	return shGitCommands
}

// shGitRunsOpts parses options whose value git runs as a command
// (--upload-pack, --receive-pack, --exec).
func shGitRunsOpts(c *shCall, opts ...string) {
	for _, v := range c.values(opts...) {
		c.runWords("git "+opts[0], []shArg{v}, shInput{})
	}
}

func shGitPush(c *shCall) shEffect {
	shGitRunsOpts(c, "--receive-pack", "--exec")
	destroy := func(reason string) shEffect {
		return shEffect{class: ClassGitWrite, cap: CapNetworkEgress, tier: TierDestructive, reason: reason}
	}
	switch {
	case c.has("-f", "--force", "--force-with-lease", "--force-if-includes"):
		return destroy("pushes to a remote with --force")
	case c.has("--mirror"):
		return destroy("mirrors to a remote, overwriting its refs")
	case c.has("-d", "--delete"):
		return destroy("deletes remote refs")
	case c.has("--prune"):
		return destroy("deletes remote branches that do not exist locally")
	}
	ops := c.operands("--repo", "-o", "--push-option", "--receive-pack", "--exec", "--recurse-submodules")
	if len(ops) > 1 {
		for _, r := range ops[1:] {
			if r.static && strings.HasPrefix(r.val, "+") {
				return destroy("force-pushes a refspec (+)")
			}
			if r.static && strings.HasPrefix(r.val, ":") {
				return destroy("deletes a remote ref (:ref)")
			}
		}
	}
	return shGitNet(ClassGitWrite, "pushes to a remote")
}

func shGitFetch(class Class, reason string) shRule {
	return func(c *shCall) shEffect {
		shGitRunsOpts(c, "--upload-pack")
		return shGitNet(class, reason)
	}
}

// shGitSubConfig returns why the configuration given to a subcommand
// ("clone -c key=value", --template, which installs hooks) matters, if it does.
func shGitSubConfig(c *shCall) string {
	for _, v := range c.values("-c", "--config") {
		if r := c.shGitConfigArg(v); r != "" {
			return r
		}
	}
	if t, ok := c.value("--template"); ok {
		return "installs hooks from template " + t.text + ", which run on checkout"
	}
	return ""
}

func shGitClone(c *shCall) shEffect {
	shGitRunsOpts(c, "--upload-pack", "-u")
	if r := shGitSubConfig(c); r != "" {
		return shEnv(r)
	}
	e := shGitNet(ClassGitWrite, "clones a repository")
	ops := c.operands("-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference", "--reference-if-able",
		"--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude", "-c", "--config", "--template",
		"-j", "--jobs", "--filter", "--server-option", "--bundle-uri", "--ref-format")
	dest := shLiteral(".")
	if len(ops) > 1 {
		dest = ops[1]
	}
	c.raiseWrites(&e, dest)
	return e
}

func shGitInit(c *shCall) shEffect {
	if r := shGitSubConfig(c); r != "" {
		return shEnv(r)
	}
	e := shGitWrite("creates a repository")
	ops := c.operands("--template", "--separate-git-dir", "-b", "--initial-branch", "--object-format", "--ref-format", "--shared")
	dir := shLiteral(".")
	if len(ops) > 0 {
		dir = ops[0]
	}
	c.raiseWrites(&e, dir)
	return e
}

func shGitBranch(c *shCall) shEffect {
	switch {
	case c.has("-D"), c.has("-d", "--delete") && c.has("-f", "--force"):
		return shGitDestroy("deletes a branch, even if unmerged")
	case c.has("-M", "-C"):
		return shGitDestroy("renames or copies a branch over an existing one")
	case c.has("-d", "--delete"):
		return shGitWrite("deletes a branch")
	case c.has("-m", "--move", "-c", "--copy", "-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
		return shGitWrite("renames, copies or configures a branch")
	}
	ops := c.operands("--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format",
		"--sort", "--column", "--color", "-t", "--track")
	if len(ops) == 0 || c.has("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "--verbose", "--show-current") {
		return shGitRead("lists branches")
	}
	if c.has("-f", "--force") {
		return shGitDestroy("resets a branch with --force")
	}
	return shGitWrite("creates a branch")
}

func shGitTag(c *shCall) shEffect {
	switch {
	case c.has("-d", "--delete"):
		return shGitDestroy("deletes a tag")
	case c.has("-v", "--verify", "-l", "--list", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged"):
		return shGitRead("lists tags")
	}
	ops := c.operands("-m", "--message", "-F", "--file", "-u", "--local-user", "--cleanup", "--sort", "--format", "--column", "-n")
	if len(ops) == 0 {
		return shGitRead("lists tags")
	}
	if c.has("-f", "--force") {
		return shGitDestroy("moves a tag with --force")
	}
	return shGitWrite("creates a tag")
}

func shGitRemote(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 || ops[0].val == "get-url" {
		return shGitRead("lists remotes")
	}
	switch ops[0].val {
	case "show", "update", "prune":
		return shGitNet(ClassGitRead, "contacts a remote")
	}
	return shGitWrite("changes remotes")
}

func shGitConfig(c *shCall) shEffect {
	if c.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
		return shGitRead("reads git configuration")
	}
	ops := c.operands("-f", "--file", "--blob", "--default", "--comment", "--type", "--value")
	key := shArg{}
	setting := !c.has("--unset", "--unset-all", "--remove-section", "--rename-section")
	if len(ops) > 0 {
		switch ops[0].val {
		case "list", "get":
			return shGitRead("reads git configuration")
		case "set", "unset", "rename-section", "remove-section", "edit":
			setting = ops[0].val == "set"
			ops = ops[1:]
		default:
			if len(ops) == 1 && !c.has("-e", "--edit") && setting {
				return shGitRead("reads git configuration")
			}
		}
	}
	if len(ops) > 0 {
		key = ops[0]
	}
	if setting && len(ops) > 0 {
		value := shLiteral("")
		if len(ops) > 1 {
			value = ops[1]
		}
		if r := c.shGitConfigSet(key, value); r != "" {
			return shEnv(r)
		}
	}
	if c.has("--system") {
		return shEffect{class: ClassGitWrite, cap: CapHostAdmin, tier: TierPrivileged, reason: "changes the system-wide git configuration"}
	}
	e := shGitWrite("changes git configuration")
	c.raiseWrites(&e, c.values("-f", "--file")...)
	return e
}

func shGitStash(c *shCall) shEffect {
	ops := c.operands("-m", "--message", "--pathspec-from-file")
	if len(ops) == 0 {
		return shGitWrite("stashes changes")
	}
	switch ops[0].val {
	case "list", "show":
		return shGitRead("shows stashes")
	case "drop", "clear":
		return shGitDestroy("deletes stashed changes")
	}
	return shGitWrite("stashes or restores changes")
}

func shGitWorktree(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 || ops[0].val == "list" {
		return shGitRead("lists worktrees")
	}
	if ops[0].val == "remove" {
		return shGitDestroy("removes a worktree and its files")
	}
	e := shGitWrite("changes worktrees")
	if ops[0].val == "add" || ops[0].val == "move" {
		c.raiseWrites(&e, ops[1:]...)
	}
	return e
}

func shGitReflog(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "expire" || ops[0].val == "delete" || ops[0].val == "drop") {
		return shGitDestroy("deletes reflog entries")
	}
	return shGitRead("shows the reflog")
}

func shGitCheckout(c *shCall) shEffect {
	if c.has("-f", "--force", "--ours", "--theirs", "-p", "--patch", "--pathspec-from-file") {
		return shGitDestroy("discards uncommitted changes")
	}
	for _, a := range c.args {
		if a.static && a.val == "--" {
			return shGitDestroy("discards changes to files")
		}
	}
	ops := c.operands("-b", "-B", "--orphan", "--conflict", "--track", "-t")
	if len(ops) == 1 && ops[0].static && (ops[0].val == "." || ops[0].glob || strings.HasPrefix(ops[0].val, ":")) {
		return shGitDestroy("discards changes to files")
	}
	if len(ops) >= 2 {
		return shGitDestroy("restores files from a commit, discarding changes")
	}
	return shGitWrite("switches branches")
}

func shGitSwitch(c *shCall) shEffect {
	if c.has("-f", "--force", "--discard-changes", "-C", "--force-create") {
		return shGitDestroy("switches branches, discarding changes or resetting a branch")
	}
	return shGitWrite("switches branches")
}

func shGitRestore(c *shCall) shEffect {
	if c.has("-S", "--staged") && !c.has("-W", "--worktree") {
		return shGitWrite("unstages changes")
	}
	return shGitDestroy("discards uncommitted changes to files")
}

func shGitReset(c *shCall) shEffect {
	if c.has("--hard") {
		return shGitDestroy("discards commits and uncommitted changes (reset --hard)")
	}
	return shGitWrite("moves HEAD or unstages changes")
}

func shGitClean(c *shCall) shEffect {
	if c.has("-n", "--dry-run") {
		return shGitRead("lists untracked files it would delete")
	}
	return shGitDestroy("deletes untracked files")
}

func shGitRm(c *shCall) shEffect {
	switch {
	case c.has("-n", "--dry-run"):
		return shGitRead("lists files it would remove")
	case c.has("--cached"):
		return shGitWrite("stops tracking files")
	}
	return shGitDestroy("deletes files from the work tree")
}

func shGitGc(c *shCall) shEffect {
	for _, v := range c.values("--prune") {
		if v.val == "now" || v.val == "all" {
			return shGitDestroy("deletes unreachable objects now")
		}
	}
	return shGitWrite("compacts the repository")
}

func shGitPrune(c *shCall) shEffect {
	if c.has("-n", "--dry-run") {
		return shGitRead("lists unreachable objects")
	}
	return shGitDestroy("deletes unreachable objects")
}

func shGitUpdateRef(c *shCall) shEffect {
	if c.has("-d", "--stdin") {
		return shGitDestroy("deletes or rewrites refs")
	}
	return shGitWrite("moves a ref")
}

func shGitSymbolicRef(c *shCall) shEffect {
	if c.has("-d", "--delete") {
		return shGitDestroy("deletes a symbolic ref")
	}
	if len(c.operands("-m")) >= 2 {
		return shGitWrite("changes a symbolic ref")
	}
	return shGitRead("reads a symbolic ref")
}

func shGitRebase(c *shCall) shEffect {
	for _, x := range c.values("-x", "--exec") {
		c.runWords("git rebase --exec", []shArg{x}, shInput{})
	}
	return shGitWrite("rebases commits")
}

func shGitBisect(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 {
		return shGitRead("shows bisect help")
	}
	switch ops[0].val {
	case "run":
		if len(ops) > 1 {
			c.run("git bisect run", ops[1:], shEffect{})
		}
		return shGitWrite("bisects history")
	case "log", "view", "visualize", "help", "terms":
		return shGitRead("shows the bisect state")
	}
	return shGitWrite("bisects history")
}

func shGitSubmodule(c *shCall) shEffect {
	ops := c.operands("-b", "--branch", "--name", "--reference", "--depth", "-j", "--jobs")
	if len(ops) == 0 {
		return shGitRead("shows submodules")
	}
	switch ops[0].val {
	case "status", "summary":
		return shGitRead("shows submodules")
	case "foreach":
		c.runWords("git submodule foreach", ops[1:], shInput{})
		return shGitWrite("runs a command in each submodule")
	case "update", "add":
		return shGitNet(ClassGitWrite, "fetches submodules")
	}
	return shGitWrite("changes submodules")
}

func shGitNotes(c *shCall) shEffect {
	ops := c.operands("--ref", "-m", "--message", "-F", "--file", "-c", "--reedit-message", "-C", "--reuse-message")
	if len(ops) == 0 || ops[0].val == "list" || ops[0].val == "show" || ops[0].val == "get-ref" {
		return shGitRead("shows notes")
	}
	return shGitWrite("changes notes")
}

func shGitApply(c *shCall) shEffect {
	if c.has("--check", "--stat", "--numstat", "--summary") && !c.has("--apply") {
		return shGitRead("checks a patch")
	}
	return shGitWrite("applies a patch")
}

func shGitArchive(c *shCall) shEffect {
	e := shGitRead("writes an archive of the repository")
	if c.has("--remote") {
		e = shGitNet(ClassGitRead, "fetches an archive from a remote")
	}
	if outs := c.values("-o", "--output"); len(outs) > 0 {
		w := shWrite(ClassFSWrite, "writes an archive")
		c.raiseWrites(&w, outs...)
		e = shMax(e, w)
	}
	shGitRunsOpts(c, "--exec")
	return e
}

func shGitFormatPatch(c *shCall) shEffect {
	e := shWrite(ClassFSWrite, "writes patch files")
	c.raiseWrites(&e, c.values("-o", "--output-directory")...)
	return e
}

func shGitBundle(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "verify" || ops[0].val == "list-heads") {
		return shGitRead("reads a bundle")
	}
	e := shGitWrite("writes or unpacks a bundle")
	if len(ops) > 1 && ops[0].val == "create" {
		c.raiseWrites(&e, ops[1])
	}
	return e
}

func shGitCredential(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "fill" || ops[0].val == "get") {
		return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged, reason: "reads stored git credentials"}
	}
	return shWrite(ClassFSWrite, "changes stored git credentials")
}

func shGitMaintenance(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) > 0 && (ops[0].val == "start" || ops[0].val == "register") {
		return shAdmin("schedules background git maintenance")
	}
	return shGitWrite("runs git maintenance")
}

func shGitLFS(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 {
		return shGitRead("shows git lfs help")
	}
	switch ops[0].val {
	case "push", "pull", "fetch", "clone":
		return shGitNet(ClassGitWrite, "transfers large files with a remote")
	case "ls-files", "status", "env", "version", "logs":
		return shGitRead("shows large files")
	case "track":
		if len(ops) == 1 {
			return shGitRead("lists tracked patterns")
		}
	case "migrate":
		return shGitDestroy("rewrites history")
	}
	return shGitWrite("changes large file settings")
}

func shGitTool(c *shCall) shEffect {
	for _, x := range c.values("-x", "--extcmd") {
		c.runWords("git difftool --extcmd", []shArg{x}, shInput{})
	}
	return shExec("runs a diff or merge tool")
}

func shGitSparse(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) > 0 && ops[0].val == "list" {
		return shGitRead("lists sparse checkout patterns")
	}
	return shGitWrite("changes sparse checkout")
}

func shGitReplace(c *shCall) shEffect {
	if c.has("-l", "--list") || len(c.operands()) == 0 {
		return shGitRead("lists replacements")
	}
	return shGitWrite("replaces objects")
}

func shGitHashObject(c *shCall) shEffect {
	if c.has("-w") {
		return shGitWrite("writes objects")
	}
	return shGitRead("hashes files")
}

// gh, the GitHub CLI.
func shGh(c *shCall) shEffect {
	ops := c.operands("-R", "--repo", "-X", "--method", "-f", "--field", "-F", "--raw-field", "-H", "--header",
		"-q", "--jq", "-t", "--template", "--input", "-b", "--body", "-T", "--title", "-B", "--base", "-l", "--label",
		"-a", "--assignee", "-m", "--milestone", "-L", "--limit", "-s", "--state", "-w", "--web")
	if len(ops) == 0 {
		return shRead("shows gh help")
	}
	group := ops[0].val
	verb := ""
	if len(ops) > 1 {
		verb = ops[1].val
	}
	destroy := shEffect{class: ClassNetHTTP, cap: CapNetworkEgress, tier: TierDestructive, reason: "deletes on GitHub (gh " + group + " " + verb + ")"}
	switch group {
	case "auth":
		if verb == "token" || verb == "status" && c.has("-t", "--show-token") {
			return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged, reason: "prints the GitHub token"}
		}
		if verb == "status" {
			return shNet(ClassNetHTTP, "checks GitHub authentication")
		}
		return shWrite(ClassFSWrite, "changes GitHub credentials")
	case "api":
		m, _ := c.value("-X", "--method")
		if strings.EqualFold(m.val, "DELETE") || !m.static && m.text != "" {
			destroy.reason = "sends a DELETE request to the GitHub API"
			return destroy
		}
		return shNet(ClassNetHTTP, "calls the GitHub API")
	case "alias":
		if verb == "set" && c.has("-s", "--shell") && len(ops) > 3 {
			c.runWords("gh alias", ops[3:4], shInput{})
		}
		return shWrite(ClassFSWrite, "changes gh aliases")
	case "extension", "ext":
		if verb == "install" || verb == "upgrade" {
			return shNet(ClassPackageInstall, "installs a gh extension")
		}
	case "repo", "pr":
		if verb == "clone" || verb == "checkout" || verb == "co" || verb == "fork" {
			e := shGitNet(ClassGitWrite, "clones or checks out from GitHub")
			if verb == "clone" && len(ops) > 3 {
				c.raiseWrites(&e, ops[3])
			}
			return e
		}
	}
	switch verb {
	case "delete", "remove", "rm", "archive", "unarchive":
		return destroy
	case "view", "list", "ls", "status", "diff", "checks", "watch", "download", "search":
		return shNet(ClassNetHTTP, "reads from GitHub")
	}
	return shNet(ClassNetHTTP, "changes things on GitHub (gh "+group+" "+verb+")")
}

func shGo(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shOpts{short: "C"})
	if !ok {
		return shUnknown("runs go with a subcommand only known at run time")
	}
	ops := shOperands(rest, "-o", "-C", "-p", "-run", "-bench", "-count", "-timeout", "-tags", "-ldflags",
		"-gcflags", "-asmflags", "-mod", "-modfile", "-coverprofile", "-cpuprofile", "-memprofile", "-exec",
		"-toolexec", "-overlay", "-pgo", "-covermode", "-coverpkg", "-parallel", "-skip", "-shuffle", "-vet",
		"-fuzz", "-fuzztime", "-f", "-json", "-buildmode", "-compiler", "-installsuffix", "-pkgdir", "-trimpath")
	remote := slices.ContainsFunc(ops, func(a shArg) bool { return strings.Contains(a.val, "@") })
	switch sub {
	case "", "help", "version", "doc", "list", "vet", "bug":
		return shRead("shows Go information")
	case "env":
		if shHas(rest, "-w", "-u") {
			return shWrite(ClassFSWrite, "changes Go settings")
		}
		return shRead("shows Go settings")
	case "get", "install":
		return shInstall(TierNetworkEgress, "downloads and installs Go modules")
	case "mod":
		if len(ops) > 0 {
			switch ops[0].val {
			case "graph", "why", "verify":
				return shRead("shows module information")
			case "edit", "init":
				return shWrite(ClassFSWrite, "changes go.mod")
			}
		}
		return shInstall(TierNetworkEgress, "downloads Go modules")
	case "work", "fix", "fmt":
		return shWrite(ClassFSWrite, "changes Go files")
	case "clean":
		return shWrite(ClassFSWrite, "removes build outputs")
	case "telemetry":
		return shWrite(ClassFSWrite, "changes Go telemetry settings")
	case "build", "test", "run", "generate", "tool":
		if x, ok := shValueOf(rest, "-exec", "-toolexec"); ok {
			c.runWords("go "+sub+" -exec", []shArg{x}, shInput{})
		}
		if remote && (sub == "run" || sub == "build") {
			return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs a Go module"}
		}
		e := shExec("builds and runs Go code")
		if o, ok := shValueOf(rest, "-o"); ok {
			c.raiseWrites(&e, o)
		}
		return e
	}
	return shExec("runs go " + sub)
}

func shValueOf(args []shArg, opts ...string) (shArg, bool) {
	vs := shValues(args, true, opts...)
	if len(vs) == 0 {
		return shArg{}, false
	}
	return vs[0], true
}

var shCargo = shUse(shExec("runs a cargo command")).withNone(shRead("shows cargo help")).on(
	shOn("build b test t run r check c clippy doc d bench rustc rustdoc fix", shExec("builds and runs Rust code")),
	shOn("install add update fetch vendor generate-lockfile", shInstall(TierNetworkEgress, "downloads Rust crates")),
	shOn("publish yank", shPublish("publishes a crate to a registry")),
	shOn("owner login logout", shNet(ClassNetHTTP, "changes registry settings")),
	shOn("search info", shNet(ClassNetHTTP, "queries a registry")),
	shOn("remove rm uninstall clean new init", shWrite(ClassFSWrite, "changes the project")),
	shOn("tree metadata locate-project pkgid verify-project version help --version -V read-manifest", shRead("shows project information")),
	shOnR("fmt", shFormatter("", "--check")),
)

func shRustup(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 {
		return shRead("shows rustup help")
	}
	switch ops[0].val {
	case "show", "which", "help", "--version", "doc", "check":
		return shRead("shows toolchains")
	case "default", "override", "set", "completions":
		return shWrite(ClassFSWrite, "changes toolchain settings")
	case "run":
		if len(ops) > 2 {
			c.run("rustup run", ops[2:], shEffect{})
		}
		return shEffect{none: true}
	}
	return shInstall(TierNetworkEgress, "installs Rust toolchains")
}

// shFormatter rewrites files unless a check option is given; writeOpt, when
// set, is the option that makes it write.
func shFormatter(writeOpt string, checkOpts ...string) shRule {
	return func(c *shCall) shEffect {
		if writeOpt != "" && !c.has(writeOpt) && !slices.ContainsFunc(c.operands(), func(a shArg) bool { return a.val == writeOpt }) {
			return shReads("checks formatting")(c)
		}
		for _, o := range checkOpts {
			if o != "" && (c.has(o) || slices.ContainsFunc(c.operands(), func(a shArg) bool { return a.val == o })) {
				return shReads("checks formatting")(c)
			}
		}
		e := shWrite(ClassFSWrite, "formats files in place")
		c.raiseWrites(&e, c.operands()...)
		return e
	}
}

func shRuff(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) > 0 && ops[0].val == "format" && !c.has("--check", "--diff") || c.has("--fix") && !c.has("--diff") {
		e := shWrite(ClassFSWrite, "rewrites Python files")
		c.raiseWrites(&e, ops...)
		return e
	}
	return shReads("lints Python code")(c)
}

// shBuild is a build tool or test runner: it runs the project's code.
func shBuild(reason string) shRule {
	return func(c *shCall) shEffect {
		e := shExec(reason)
		c.raiseReads(&e, c.operands()...)
		return e
	}
}

func shGradle(c *shCall) shEffect {
	for _, op := range c.operands() {
		if strings.HasPrefix(op.val, "publish") && !strings.Contains(op.val,
			"MavenLocal") || strings.Contains(op.val, ":publish") && !strings.Contains(op.val, "MavenLocal") {
			return shPublish("publishes artifacts")
		}
	}
	return shExec("runs a build")
}

func shMaven(c *shCall) shEffect {
	for _, op := range c.operands("-f", "--file", "-s", "--settings", "-P", "--activate-profiles", "-pl",
		"--projects", "-T", "--threads", "-D") {
		if op.val == "deploy" || op.val == "release:perform" || strings.HasSuffix(op.val, ":deploy") {
			return shPublish("publishes artifacts")
		}
	}
	return shExec("runs a build")
}

func shCompiler(c *shCall) shEffect {
	e := shWrite(ClassFSWrite, "compiles code")
	c.raiseWrites(&e, c.values("-o", "-d")...)
	return e
}

// shOptName is an option word without its "=value".
func shOptName(v string) string {
	name, _, _ := strings.Cut(v, "=")
	return name
}

// shLang describes an interpreter's options.
type shLang struct {
	name     string   // the language, for reasons
	code     string   // short options whose value is code (python's c, node's e)
	longCode []string // long options whose value is code (--eval)
	values   string   // short options that take a value
	long     []string // long options that take a value
	inPlace  bool     // -i edits files in place (perl, ruby)
	runs     []string // options that run something without a script (node --test)
}

// shInterp is an interpreter: inline code or a script runs and cannot be
// inspected; code read from a pipe is unknown.
func shInterp(l shLang) shRule {
	return func(c *shCall) shEffect {
		args := c.args
		code, inPlace, info, runs := false, false, false, false
		i := 0
	loop:
		for i < len(args) {
			a := args[i]
			v := a.val
			if !a.static || len(v) < 2 || v[0] != '-' {
				break
			}
			i++
			switch {
			case v == "--":
				break loop
			case v == "--version" || v == "--help" || v == "-h" || v == "-v" || v == "-V" || v == "-version":
				info = true
			case slices.Contains(l.runs, v):
				runs = true
			case strings.HasPrefix(v, "--") || slices.Contains(l.long, shOptName(v)) || slices.Contains(l.longCode, shOptName(v)):
				name, _, eq := strings.Cut(v, "=")
				if slices.Contains(l.longCode, name) {
					code = true
					if !eq {
						i++
					}
					break loop
				}
				if !eq && slices.Contains(l.long, name) {
					i++
				}
			default:
				for j := 1; j < len(v); j++ {
					ch := v[j]
					if strings.IndexByte(l.code, ch) >= 0 {
						code = true
						if j == len(v)-1 {
							i++
						}
						break loop
					}
					if l.inPlace && ch == 'i' {
						inPlace = true
						break
					}
					if strings.IndexByte(l.values, ch) >= 0 {
						if j == len(v)-1 {
							i++
						}
						break
					}
				}
			}
		}
		ops := args[min(i, len(args)):]
		switch {
		case inPlace:
			e := shWrite(ClassFSWrite, "edits files in place")
			c.raiseWrites(&e, ops...)
			return e
		case code:
			e := shExec("runs " + l.name + " code Airlock cannot inspect")
			c.raiseReads(&e, ops...)
			return e
		case len(ops) > 0:
			e := c.runsFile(ops[0], l.name, false)
			c.raiseReads(&e, ops[1:]...)
			return e
		case runs:
			return shExec("runs " + l.name + " code")
		case info:
			return shRead("prints version or help")
		}
		return c.stdinCode(l.name, false)
	}
}

func shPython(c *shCall) shEffect {
	args := c.args
	info := false
	i := 0
	for i < len(args) {
		a := args[i]
		v := a.val
		if !a.static || len(v) < 2 || v[0] != '-' {
			break
		}
		i++
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "--") {
			info = info || v == "--version" || v == "--help"
			if v == "--check-hash-based-pycs" {
				i++
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			switch v[j] {
			case 'c':
				e := shExec("runs Python code Airlock cannot inspect")
				if j == len(v)-1 {
					i++
				}
				c.raiseReads(&e, args[min(i, len(args)):]...)
				return e
			case 'm':
				mod := v[j+1:]
				if mod == "" && i < len(args) {
					mod = args[i].val
					if !args[i].static {
						return shExec("runs a Python module only known at run time")
					}
					i++
				}
				return shPythonModule(c, mod, args[min(i, len(args)):])
			case 'W', 'X':
				if j == len(v)-1 {
					i++
				}
				j = len(v)
			case 'V', 'h':
				info = true
			}
		}
	}
	ops := args[min(i, len(args)):]
	switch {
	case len(ops) > 0:
		e := c.runsFile(ops[0], "Python", false)
		c.raiseReads(&e, ops[1:]...)
		return e
	case info:
		return shRead("prints version or help")
	}
	return c.stdinCode("Python", false)
}

func shPythonModule(c *shCall, mod string, rest []shArg) shEffect {
	switch mod {
	case "pip", "pip3":
		return c.delegate(rest, shPip)
	case "uv":
		return c.delegate(rest, shUv)
	case "pipx":
		return c.delegate(rest, shPipx)
	case "twine":
		return c.delegate(rest, shTwine)
	case "poetry":
		return c.delegate(rest, shPoetry)
	case "http.server", "SimpleHTTPServer", "smtpd", "aiosmtpd", "xmlrpc.server", "CGIHTTPServer":
		return shNet(ClassNetConnect, "serves the network")
	case "venv", "virtualenv":
		e := shWrite(ClassFSWrite, "creates a virtual environment")
		c.raiseWrites(&e, shOperands(rest, "--prompt")...)
		return e
	case "pytest", "unittest", "doctest", "nose", "nose2", "tox", "nox", "coverage":
		return shExec("runs tests")
	case "json.tool", "pydoc", "site", "sysconfig", "platform", "this", "tabnanny", "pyclbr", "tokenize",
		"ast", "dis", "calendar", "uuid", "timeit", "pstats", "tomllib", "sqlite3", "zipfile", "tarfile", "gzip", "base64":
		e := shRead("runs a standard library tool")
		c.raiseReads(&e, rest...)
		return e
	case "build", "compileall", "py_compile", "ensurepip":
		return shWrite(ClassFSWrite, "builds or compiles Python code")
	}
	return shExec("runs Python module " + mod)
}

func shPHP(c *shCall) shEffect {
	switch {
	case c.has("-S"):
		return shNet(ClassNetConnect, "serves the network")
	case c.has("-l", "--syntax-check", "-v", "--version", "-i", "--info", "-m", "--modules"):
		return shRead("checks PHP code or prints information")
	}
	if f, ok := c.value("-f", "--file"); ok {
		return c.runsFile(f, "PHP", false)
	}
	return shInterp(shLang{name: "PHP", code: "rBRE", values: "cdtz", long: []string{"--php-ini", "--define",
		"--docroot", "--zend-extension"}})(c)
}

func shJava(c *shCall) shEffect {
	ops := c.operands("-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-opens", "--add-exports",
		"--add-modules", "--add-reads", "--limit-modules", "--upgrade-module-path", "--patch-module", "--source", "--release", "-d")
	if len(ops) == 0 && c.has("-version", "--version", "-showversion", "-help", "--help", "-h", "-?", "-X") {
		return shRead("prints version or help")
	}
	e := shExec("runs Java code Airlock cannot inspect")
	c.raiseReads(&e, ops...)
	return e
}

func shDeno(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 {
		if c.has("--version", "-V", "--help", "-h") {
			return shRead("prints version or help")
		}
		return c.stdinCode("JavaScript", false)
	}
	remote := slices.ContainsFunc(ops, func(a shArg) bool {
		return strings.Contains(a.val, "://") || strings.HasPrefix(a.val, "npm:") || strings.HasPrefix(a.val, "jsr:")
	})
	switch ops[0].val {
	case "install", "cache", "upgrade", "add", "x", "jupyter", "outdated":
		return shInstall(TierNetworkEgress, "downloads JavaScript modules")
	case "fmt":
		return shFormatter("", "--check")(c)
	case "lint", "check", "info", "doc", "types", "help", "completions", "coverage":
		return shRead("checks or describes code")
	case "compile", "bundle", "init", "vendor":
		return shWrite(ClassFSWrite, "writes project files")
	case "publish":
		return shPublish("publishes a package")
	case "remove", "uninstall", "clean":
		return shWrite(ClassFSWrite, "removes packages or caches")
	}
	if remote {
		return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs code"}
	}
	e := shExec("runs JavaScript code Airlock cannot inspect")
	if c.has("-e", "--eval") || ops[0].val == "eval" {
		return e
	}
	c.raiseReads(&e, ops...)
	return e
}

func shBun(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 {
		switch {
		case c.has("-e", "--eval", "-p", "--print"):
			return shExec("runs JavaScript code Airlock cannot inspect")
		case c.has("--version", "-v", "--help", "-h", "--revision"):
			return shRead("prints version or help")
		}
		return shExec("runs bun")
	}
	switch ops[0].val {
	case "install", "i", "add", "a", "remove", "rm", "update", "link", "unlink", "pm", "outdated", "patch":
		return shNodeInstall(c)
	case "x":
		return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs a package"}
	case "publish":
		return shPublish("publishes a package")
	case "create", "init", "upgrade":
		return shInstall(TierNetworkEgress, "downloads templates or bun itself")
	case "build":
		return shWrite(ClassFSWrite, "bundles code")
	}
	return shExec("runs JavaScript code Airlock cannot inspect")
}

// Package managers.

var shPackageCommands = map[string]shRule{
	"apt": shSysPkg("apt", shAptChange, shAptRead), "apt-get": shSysPkg("apt-get", shAptChange, shAptRead),
	"aptitude": shSysPkg("aptitude", shAptChange, shAptRead), "apt-cache": shFixed(shRead("shows package information")),
	"apt-mark": shSysPkg("apt-mark", "hold unhold auto manual minimize-manual", "showhold showauto showmanual"),
	"dnf":      shSysPkg("dnf", shRpmChange, shRpmRead), "yum": shSysPkg("yum", shRpmChange, shRpmRead),
	"microdnf": shSysPkg("microdnf", shRpmChange, shRpmRead), "tdnf": shSysPkg("tdnf", shRpmChange, shRpmRead),
	"zypper": shSysPkg("zypper", "install in remove rm update up dist-upgrade dup patch refresh ref addrepo ar removerepo rr modifyrepo mr addlock al removelock rl source-install si clean",
		"search se info if list-updates lu repos lr packages pa patches lp products pd locks ll what-provides wp"),
	"apk": shSysPkg("apk", "add del upgrade update fix cache", "search info list policy version stats dot audit"),
	"snap": shSysPkg("snap",
		"install remove refresh revert enable disable connect disconnect set unset alias unalias switch prefer restart start stop save restore forget", "list info find search version services logs connections changes change get known aliases warnings help"),
	"port": shSysPkg("port",
		"install uninstall upgrade selfupdate sync activate deactivate clean load unload setrequested", "search info list installed outdated deps rdeps contents provides variants echo location dependents log help"),
	"flatpak": shSysPkg("flatpak",
		"install uninstall update remote-add remote-delete remote-modify repair override mask pin", "list info search remotes remote-ls remote-info history ps --version documents permissions"),
	"emerge": shSysPkg("emerge", "", "--search -s --info --pretend -p"),
	"pkg":    shSysPkg("pkg", "install add delete remove upgrade update autoremove clean lock unlock", "info search query audit version which check stats help"),
	"pacman": shPacman, "yay": shPacman, "paru": shPacman,
	"dpkg": shDpkg, "rpm": shRpm,
	"brew": shBrew,
	"npm":  shNpm, "pnpm": shNpm, "yarn": shNpm,
	"pip": shPip, "pipx": shPipx, "uv": shUv, "poetry": shPoetry, "pipenv": shPipenv, "twine": shTwine,
	"conda": shConda, "mamba": shConda, "micromamba": shConda,
	"gem": shGem, "bundle": shBundle, "bundler": shBundle,
	"composer": shComposer, "dotnet": shDotnet, "nuget": shNuget,
	"nvm": shUse(shWrite(ClassFSWrite, "changes the Node.js version")).on(shOn("install",
		shInstall(TierNetworkEgress, "installs Node.js")), shOn("ls list current version which --version",
		shRead("shows Node.js versions")), shOnR("exec run", shToolExec("nvm", 1))),
	"pyenv": shUse(shWrite(ClassFSWrite, "changes the Python version")).on(shOn("install",
		shInstall(TierNetworkEgress, "installs Python")),
		shOn("versions version which whence root prefix --version", shRead("shows Python versions")),
		shOnR("exec", shToolExec("pyenv", 0))),
	"rbenv": shUse(shWrite(ClassFSWrite, "changes the Ruby version")).on(shOn("install",
		shInstall(TierNetworkEgress, "installs Ruby")),
		shOn("versions version which whence root prefix --version", shRead("shows Ruby versions")), shOnR("exec",
			shToolExec("rbenv", 0))),
	"asdf": shUse(shWrite(ClassFSWrite, "changes tool versions")).on(shOn("install plugin",
		shInstall(TierNetworkEgress, "installs tools")), shOn("list current where which version info help",
		shRead("shows tool versions")), shOnR("exec", shToolExec("asdf", 0))),
	"mise": shUse(shWrite(ClassFSWrite, "changes tool versions")).on(shOn("install use upgrade plugins",
		shInstall(TierNetworkEgress, "installs tools")), shOn("ls list current where which version doctor env",
		shRead("shows tool versions")), shOnR("exec x", shToolExec("mise", 0)), shOnR("run r", shFixed(shExec("runs tasks")))),
}

const (
	shAptChange = "install reinstall remove purge autoremove autopurge upgrade full-upgrade dist-upgrade update build-dep satisfy markauto unmarkauto hold unhold safe-upgrade clean autoclean"
	shAptRead   = "search show list policy depends rdepends showsrc madison changelog showpkg stats dump pkgnames why why-not help moo -v --version"
	shRpmChange = "install reinstall remove erase upgrade update downgrade autoremove distro-sync groupinstall groupremove groupupdate swap makecache clean config-manager module mark"
	shRpmRead   = "search info list provides whatprovides repolist repoquery check-update deplist history help"
)

// shSysPkg is a system package manager: changes are privileged, queries
// read. An unknown verb is treated as a change.
func shSysPkg(tool, change, read string) shRule {
	changes, reads := strings.Fields(change), strings.Fields(read)
	return func(c *shCall) shEffect {
		for _, a := range c.args {
			if a.static && slices.Contains(reads, a.val) {
				return shRead("shows package information")
			}
		}
		for _, op := range c.operands("-o", "-c", "-t", "--target-release", "-a", "--setopt", "--enablerepo",
			"--disablerepo", "--installroot", "--releasever") {
			if op.static && slices.Contains(changes, op.val) {
				return shInstall(TierPrivileged, "changes system packages ("+tool+" "+op.val+")")
			}
			break
		}
		if len(c.operands()) == 0 && len(changes) > 0 {
			return shRead("shows package manager help")
		}
		return shInstall(TierPrivileged, "changes system packages ("+tool+")")
	}
}

func shPacman(c *shCall) shEffect {
	if len(c.args) == 0 {
		if c.name == "pacman" {
			return shRead("shows pacman help")
		}
		return shInstall(TierPrivileged, "upgrades system packages")
	}
	op := c.args[0].val
	switch {
	case strings.HasPrefix(op, "-Q"), strings.HasPrefix(op, "-T"), strings.HasPrefix(op, "-F"),
		op == "--query", op == "-V", op == "--version", op == "-h", op == "--help":
		return shRead("shows package information")
	case strings.HasPrefix(op, "-S") && strings.ContainsAny(op[2:], "sigl") && !strings.ContainsAny(op[2:], "yu"):
		return shRead("shows package information")
	}
	return shInstall(TierPrivileged, "changes system packages")
}

func shDpkg(c *shCall) shEffect {
	if c.has("-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--print-avail", "-c",
		"--contents", "-I", "--info", "--get-selections", "--print-architecture", "--compare-versions", "--version",
		"--help", "-C", "--audit", "-V", "--verify", "--print-foreign-architectures") {
		return shRead("shows package information")
	}
	return shInstall(TierPrivileged, "changes system packages (dpkg)")
}

func shRpm(c *shCall) shEffect {
	for _, a := range c.args {
		if !a.static || !strings.HasPrefix(a.val, "-") {
			continue
		}
		switch {
		case strings.HasPrefix(a.val, "-q"), strings.HasPrefix(a.val, "-V"), strings.HasPrefix(a.val, "-K"),
			a.val == "--query", a.val == "--verify", a.val == "--checksig", a.val == "--eval", a.val == "--version", a.val == "--help":
			return shRead("shows package information")
		}
	}
	return shInstall(TierPrivileged, "changes system packages (rpm)")
}

var shBrew = shUse(shExec("runs a brew command")).withNone(shRead("shows brew help")).on(
	shOn("install reinstall upgrade update tap bundle fetch", shInstall(TierNetworkEgress, "installs packages with Homebrew")),
	shOn("uninstall remove rm untap cleanup autoremove link unlink pin unpin postinstall",
		shInstall(TierWrite, "removes or relinks Homebrew packages")),
	shOn("list ls info abv search outdated deps uses leaves config doctor dr --prefix --cellar --repository --version -v home homepage desc cat log commands shellenv --env missing options tap-info formulae casks docs help", shRead("shows package information")),
	shOn("edit create extract", shWrite(ClassFSWrite, "edits formulae")),
	shOnR("services", func(c *shCall) shEffect {
		ops := c.operands()
		if len(ops) == 0 || ops[0].val == "list" || ops[0].val == "info" {
			return shRead("lists services")
		}
		if ops[0].val == "start" || ops[0].val == "run" || ops[0].val == "restart" {
			return shAdmin("registers a background service")
		}
		return shWrite(ClassFSWrite, "stops or cleans services")
	}),
)

// shNpm covers npm, pnpm and yarn.
func shNpm(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shOpts{long: []string{"--prefix", "--cwd", "-C", "--filter", "--workspace", "-w", "--dir"}})
	if !ok {
		return shUnknown("runs " + c.name + " with a subcommand only known at run time")
	}
	global := shHas(c.args, "-g", "--global", "--location=global")
	switch sub {
	case "":
		if c.name == "yarn" {
			return shInstall(TierNetworkEgress, "installs packages")
		}
		if shHas(c.args, "-v", "--version", "-h", "--help") || c.name == "npm" {
			return shRead("prints version or help")
		}
		return shInstall(TierNetworkEgress, "installs packages")
	case "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
		"ci", "clean-install", "ic", "install-clean", "isntall-clean", "update", "up", "upgrade", "udpate",
		"install-test", "it", "install-ci-test", "cit", "link", "ln", "dedupe", "ddp", "prune", "uninstall",
		"un", "unlink", "remove", "rm", "r", "import", "fetch":
		if global {
			return shInstall(TierPrivileged, "installs packages globally")
		}
		return shInstall(TierNetworkEgress, "installs packages (and runs their install scripts)")
	case "global":
		return shInstall(TierPrivileged, "installs packages globally")
	case "dlx":
		return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs a package"}
	case "publish", "unpublish":
		return shPublish("publishes a package to a registry")
	case "view", "v", "info", "show", "search", "s", "se", "find", "outdated", "audit", "doctor", "ping",
		"whoami", "fund", "repo", "docs", "bugs", "home", "dist-tag", "dist-tags", "owner", "access", "team",
		"token", "org", "hook", "star", "stars", "unstar", "deprecate", "profile", "npm":
		if sub == "audit" && len(rest) > 0 && rest[0].val == "fix" {
			return shInstall(TierNetworkEgress, "installs package updates")
		}
		if sub == "npm" && len(rest) > 0 && rest[0].val == "publish" {
			return shPublish("publishes a package to a registry")
		}
		return shNet(ClassNetHTTP, "talks to the package registry")
	case "ls", "list", "la", "ll", "explain", "why", "root", "bin", "prefix", "help", "help-search", "get",
		"query", "sbom", "completion", "licenses", "-v", "--version", "store", "config", "c", "pkg", "version":
		if len(rest) > 0 && (sub == "config" || sub == "c" || sub == "pkg" || sub == "version") {
			switch rest[0].val {
			case "get", "list", "ls", "path":
			default:
				return shWrite(ClassFSWrite, "changes package settings")
			}
		}
		return shRead("shows package information")
	case "init", "create", "innit":
		if len(shOperands(rest)) > 0 {
			return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs a project generator"}
		}
		return shWrite(ClassFSWrite, "creates package files")
	case "pack", "shrinkwrap", "cache", "login", "adduser", "add-user", "logout", "set", "edit", "set-script":
		return shWrite(ClassFSWrite, "changes package files or settings")
	}
	script := sub
	if ops := shOperands(rest); (sub == "run" || sub == "run-script") && len(ops) > 0 {
		script = ops[0].text
	}
	return shExec("runs package script " + script)
}

// shNodeInstall is bun's install family.
func shNodeInstall(c *shCall) shEffect {
	if c.has("-g", "--global") {
		return shInstall(TierPrivileged, "installs packages globally")
	}
	return shInstall(TierNetworkEgress, "installs packages")
}

func shPip(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shOpts{long: []string{"--python", "--cache-dir", "--log", "--proxy",
		"--retries", "--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert", "--use-feature",
		"--use-deprecated", "--keyring-provider"}})
	if !ok {
		return shUnknown("runs pip with a subcommand only known at run time")
	}
	switch sub {
	case "install", "download", "wheel", "lock":
		if shHas(rest, "--break-system-packages") {
			return shInstall(TierPrivileged, "installs Python packages over the system's (--break-system-packages)")
		}
		e := shInstall(TierNetworkEgress, "installs Python packages")
		shRaiseWrite(&e, "", false)
		for _, d := range shValues(rest, false, "--root", "--prefix", "--target", "-t", "--src", "-d", "--dest") {
			if d.static {
				shRaiseWrite(&e, c.resolve(d.val), d.glob)
			}
		}
		return e
	case "uninstall":
		return shInstall(TierWrite, "removes Python packages")
	case "", "list", "show", "freeze", "check", "inspect", "debug", "help", "hash", "completion":
		return shRead("shows Python packages")
	case "search", "index":
		return shNet(ClassNetHTTP, "queries the package index")
	case "config", "cache":
		if ops := shOperands(rest); len(ops) > 0 && (ops[0].val == "get" || ops[0].val == "list" || ops[0].val == "debug" || ops[0].val == "info" || ops[0].val == "dir") {
			return shRead("shows pip settings")
		}
		return shWrite(ClassFSWrite, "changes pip settings or cache")
	}
	return shInstall(TierNetworkEgress, "runs pip "+sub)
}

func shPipx(c *shCall) shEffect {
	ops := c.operands()
	if len(ops) == 0 {
		return shRead("shows pipx help")
	}
	switch ops[0].val {
	case "install", "upgrade", "upgrade-all", "reinstall", "reinstall-all", "inject", "install-all":
		return shInstall(TierNetworkEgress, "installs Python applications")
	case "run":
		return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs a Python application"}
	case "uninstall", "uninstall-all", "uninject", "pin", "unpin":
		return shInstall(TierWrite, "removes Python applications")
	case "ensurepath":
		return shEffect{class: ClassFSWrite, cap: CapHostAdmin, tier: TierPrivileged, reason: "edits shell start-up files"}
	}
	return shRead("shows Python applications")
}

func shUv(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shOpts{long: []string{"--directory", "--project", "--cache-dir", "--config-file", "--color"}})
	if !ok {
		return shUnknown("runs uv with a subcommand only known at run time")
	}
	switch sub {
	case "pip":
		return c.delegate(rest, shPip)
	case "run":
		_, cmd := shSplit(rest, shOpts{short: "pw", long: []string{"--with", "--with-editable", "--with-requirements",
			"--python", "--project", "--directory", "--package", "--env-file", "--extra", "--group", "--index",
			"--default-index", "--index-url", "--extra-index-url", "--find-links", "--only-group", "--no-group"}})
		if len(cmd) == 0 {
			return shExec("runs the project")
		}
		c.run("uv run", cmd, shEffect{})
		return shInstall(TierNetworkEgress, "syncs the project's environment")
	case "tool":
		if len(rest) > 0 && (rest[0].val == "run") {
			return shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "downloads and runs a tool"}
		}
		if len(rest) > 0 && (rest[0].val == "list" || rest[0].val == "dir") {
			return shRead("lists tools")
		}
		return shInstall(TierNetworkEgress, "installs tools")
	case "add", "remove", "sync", "lock", "python", "self", "export":
		return shInstall(TierNetworkEgress, "changes project dependencies")
	case "publish":
		return shPublish("publishes a package")
	case "build", "init", "venv", "cache", "format":
		return shWrite(ClassFSWrite, "writes project files")
	case "", "tree", "version", "help", "--version":
		return shRead("shows project information")
	}
	return shExec("runs uv " + sub)
}

var shPoetry = shUse(shExec("runs a poetry command")).withNone(shRead("shows poetry help")).on(
	shOn("add install update lock sync self source", shInstall(TierNetworkEgress, "changes project dependencies")),
	shOn("remove", shInstall(TierWrite, "removes a dependency")),
	shOnR("run", shToolExec("poetry run", 0)),
	shOn("shell", shExec("opens a shell in the project's environment")),
	shOn("build init new", shWrite(ClassFSWrite, "writes project files")),
	shOn("publish", shPublish("publishes a package")),
	shOn("show check env version search about list help config", shRead("shows project information")),
)

var shPipenv = shUse(shExec("runs a pipenv command")).withNone(shInstall(TierNetworkEgress, "installs dependencies")).on(
	shOn("install uninstall update sync lock upgrade", shInstall(TierNetworkEgress, "changes project dependencies")),
	shOnR("run", shToolExec("pipenv run", 0)),
	shOn("shell", shExec("opens a shell in the project's environment")),
	shOn("graph check requirements scripts verify --venv --where --py", shRead("shows project information")),
	shOn("clean", shWrite(ClassFSWrite, "removes packages")),
)

func shTwine(c *shCall) shEffect {
	if ops := c.operands(); len(ops) > 0 && ops[0].val == "upload" {
		return shPublish("publishes a package to PyPI")
	}
	return shRead("checks packages")
}

var shConda = shUse(shExec("runs a conda command")).withNone(shRead("shows conda help")).on(
	shOn("install create update upgrade env", shInstall(TierNetworkEgress, "changes conda environments")),
	shOn("remove uninstall clean", shInstall(TierWrite, "removes conda packages")),
	shOn("activate deactivate", shWrite(ClassFSWrite, "activates a conda environment, changing PATH")),
	shOn("list info search compare doctor notices --version", shRead("shows conda information")),
	shOn("config", shWrite(ClassFSWrite, "changes conda settings")),
	shOnR("run", shToolExec("conda run", 0)),
)

func shGem(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shOpts{})
	if !ok {
		return shUnknown("runs gem with a subcommand only known at run time")
	}
	switch sub {
	case "install", "i", "update":
		if shHas(rest, "--user-install") {
			return shInstall(TierNetworkEgress, "installs Ruby gems for the user")
		}
		return shInstall(TierPrivileged, "installs Ruby gems system-wide")
	case "push", "yank":
		return shPublish("publishes a gem")
	case "uninstall", "cleanup":
		return shInstall(TierWrite, "removes Ruby gems")
	case "build", "sources", "cert", "signin", "signout":
		return shWrite(ClassFSWrite, "changes gem files or settings")
	case "owner":
		return shNet(ClassNetHTTP, "changes gem owners")
	}
	return shRead("shows gem information")
}

var shBundle = shUse(shExec("runs a bundler command")).withNone(shInstall(TierNetworkEgress, "installs gems")).on(
	shOn("install update add lock cache package outdated binstubs", shInstall(TierNetworkEgress, "installs gems")),
	shOnR("exec", shToolExec("bundle exec", 0)),
	shOn("list show info check platform doctor version help", shRead("shows gem information")),
	shOn("config remove clean init gem", shWrite(ClassFSWrite, "changes bundler files or settings")),
)

var shComposer = shUse(shExec("runs a composer command")).withNone(shRead("shows composer help")).on(
	shOn("install i require update upgrade u remove rm create-project reinstall", shInstall(TierNetworkEgress, "changes PHP dependencies")),
	shOn("global", shInstall(TierNetworkEgress, "changes global PHP tools")),
	shOn("run-script run exec test", shExec("runs a package script")),
	shOn("show info outdated validate depends why why-not licenses search check-platform-reqs diagnose about help list audit", shRead("shows package information")),
	shOn("dump-autoload dumpautoload init config clear-cache", shWrite(ClassFSWrite, "changes project files")),
)

var shDotnet = shUse(shExec("runs a dotnet command")).withNone(shRead("shows dotnet help")).on(
	shOn("build test run publish pack watch msbuild clean", shExec("builds or runs .NET code")),
	shOn("restore add remove tool workload new", shInstall(TierNetworkEgress, "changes .NET packages or tools")),
	shOn("list sln --info --version --list-sdks --list-runtimes help", shRead("shows .NET information")),
	shOnR("nuget", shNuget),
)

func shNuget(c *shCall) shEffect {
	if ops := c.operands(); len(ops) > 0 && (ops[0].val == "push" || ops[0].val == "delete") {
		return shPublish("publishes or deletes a NuGet package")
	}
	return shInstall(TierNetworkEgress, "manages NuGet packages")
}

// shToolExec runs the words after skip operands as a command (poetry run X,
// bundle exec X).
func shToolExec(via string, skip int) shRule {
	return func(c *shCall) shEffect {
		_, rest := shSplit(c.args, shOpts{short: "npe", long: []string{"--name", "--prefix", "-n", "-p"}})
		if len(rest) <= skip {
			return shExec("runs a command in a tool's environment")
		}
		c.run(via, rest[skip:], shEffect{})
		return shEffect{none: true}
	}
}

// Infrastructure and cloud.

var shInfraCommands = map[string]shRule{
	"kubectl": shKubectl, "oc": shKubectl,
	"helm": shHelm, "terraform": shTerraform, "tofu": shTerraform, "terragrunt": shTerraform,
	"docker": shDocker, "podman": shDocker, "nerdctl": shDocker,
	"docker-compose": shCompose, "podman-compose": shCompose,
	"aws": shAWS, "gcloud": shCloud("gcloud"), "az": shCloud("az"), "gsutil": shCloud("gsutil"),
	"doctl": shCloud("doctl"), "hcloud": shCloud("hcloud"), "linode-cli": shCloud("linode-cli"), "oci": shCloud("oci"),
	"eksctl": shCloud("eksctl"), "flyctl": shCloud("flyctl"), "fly": shCloud("fly"), "heroku": shCloud("heroku"),
	"vercel": shCloud("vercel"), "netlify": shCloud("netlify"), "wrangler": shCloud("wrangler"),
	"firebase": shCloud("firebase"), "serverless": shCloud("serverless"), "sls": shCloud("sls"),
	"pulumi": shPulumi, "ansible-playbook": shAnsible, "ansible": shAnsible,
	"packer": shUse(shInfraChange(TierSpend,
		"builds machine images")).on(shOn("validate fmt inspect version init console", shInfraRead("checks templates"))),
	"vagrant": shUse(shInfraChange(TierWrite, "manages virtual machines")).on(shOn("destroy",
		shInfraChange(TierDestructive, "destroys virtual machines")),
		shOn("status global-status ssh-config version box", shRead("shows virtual machines")), shOn("ssh",
			shInfraChange(TierPrivileged, "opens a shell in a virtual machine"))),
}

var shKubeOpts = shOpts{short: "nsv", long: []string{"--namespace", "--context", "--cluster", "--kubeconfig", "--server",
	"--token", "--user", "--as", "--as-group", "--as-uid", "--certificate-authority", "--client-certificate",
	"--client-key", "--request-timeout", "--tls-server-name", "--cache-dir", "--profile", "--profile-output",
	"--vmodule", "--log-file"}}

func shKubectl(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shKubeOpts)
	if !ok {
		return shUnknown("runs kubectl with a subcommand only known at run time")
	}
	ops := shOperands(rest, "-n", "--namespace", "-o", "--output", "-l", "--selector", "-f", "--filename",
		"-c", "--container", "--field-selector", "--sort-by", "--template", "-p", "--patch", "--type", "--replicas")
	switch sub {
	case "get", "describe":
		for _, op := range ops {
			r := strings.ToLower(op.val)
			if r == "secret" || r == "secrets" || strings.HasPrefix(r, "secret/") || strings.HasPrefix(r,
				"secrets/") || strings.Contains(r, ",secret") {
				if sub == "get" {
					return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead,
						tier: TierPrivileged, reason: "reads Kubernetes secrets"}
				}
			}
		}
		return shInfraRead("reads cluster resources")
	case "", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "diff", "wait",
		"events", "auth", "completion", "options", "help", "kustomize", "plugin":
		return shInfraRead("reads cluster resources")
	case "config":
		if len(ops) > 0 && ops[0].val == "view" && shHas(rest, "--raw") {
			return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged, reason: "prints cluster credentials"}
		}
		if len(ops) == 0 || strings.HasPrefix(ops[0].val, "get-") || ops[0].val == "view" || ops[0].val == "current-context" {
			return shInfraRead("reads kubeconfig")
		}
		return shWrite(ClassFSWrite, "changes kubeconfig")
	case "rollout":
		if len(ops) > 0 && (ops[0].val == "status" || ops[0].val == "history") {
			return shInfraRead("reads rollout status")
		}
		return shInfraChange(TierDestructive, "changes a rollout")
	case "apply", "create", "patch", "replace", "scale", "set", "edit", "label", "annotate", "cordon", "uncordon",
		"autoscale", "expose", "taint", "certificate":
		return shInfraChange(TierDestructive, "changes cluster resources (kubectl "+sub+")")
	case "delete", "drain":
		return shInfraChange(TierDestructive, "deletes or evicts cluster resources (kubectl "+sub+")")
	case "exec", "cp", "port-forward", "run", "debug", "attach", "proxy":
		return shInfraChange(TierPrivileged, "runs or reaches into workloads (kubectl "+sub+")")
	}
	return shInfraChange(TierDestructive, "runs kubectl "+sub)
}

var shHelm = shUse(shInfraChange(TierDestructive, "runs a helm command")).withNone(shRead("shows helm help")).with(
	shOpts{short: "n", long: []string{"--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver",
		"--kube-token", "--registry-config", "--repository-config", "--repository-cache"}}).on(
	shOn("install upgrade rollback uninstall delete del un test", shInfraChange(TierDestructive, "changes releases in a cluster")),
	shOn("list ls status get history hist show inspect search verify", shInfraRead("reads releases or charts")),
	shOn("template lint version env completion help create", shRead("renders or checks charts")),
	shOn("package", shWrite(ClassFSWrite, "packages a chart")),
	shOn("repo pull fetch dependency dep plugin registry", shNet(ClassNetHTTP, "downloads charts or plugins")),
	shOn("push", shPublish("publishes a chart")),
)

func shTerraform(c *shCall) shEffect {
	args := c.args
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") {
		args = args[1:] // -chdir=DIR, -help, -version
	}
	if len(args) > 0 && args[0].val == "run-all" || len(args) > 0 && args[0].val == "run" && shHas(args, "--all") {
		args = args[1:]
	}
	if len(args) == 0 {
		return shRead("shows terraform help")
	}
	ops := shOperands(args[1:])
	switch sub := args[0].val; sub {
	case "plan", "validate", "show", "output", "init", "providers", "graph", "version", "get", "console", "metadata", "modules", "query":
		return shInfraRead("reads or plans infrastructure")
	case "fmt":
		if shHas(args, "-check") {
			return shRead("checks formatting")
		}
		return shWrite(ClassFSWrite, "formats configuration files")
	case "state":
		if len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "show" || ops[0].val == "pull") {
			return shInfraRead("reads state")
		}
		return shInfraChange(TierDestructive, "changes infrastructure state")
	case "workspace":
		if len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "show") {
			return shRead("lists workspaces")
		}
		if len(ops) > 0 && ops[0].val == "delete" {
			return shInfraChange(TierDestructive, "deletes a workspace")
		}
		return shWrite(ClassFSWrite, "changes the workspace")
	case "login", "logout":
		return shWrite(ClassFSWrite, "changes credentials")
	}
	return shInfraChange(TierDestructive, "changes infrastructure (terraform "+args[0].val+")")
}

func shPulumi(c *shCall) shEffect {
	sub, _, _ := shSubcommand(c.args, shOpts{short: "sC", long: []string{"--stack", "--cwd"}})
	switch sub {
	case "", "preview", "pre", "stack", "config", "whoami", "version", "about", "logs", "help", "plugin", "schema":
		return shInfraRead("reads or previews infrastructure")
	case "up", "update", "destroy", "refresh", "import", "state", "cancel", "watch":
		return shInfraChange(TierDestructive, "changes infrastructure (pulumi "+sub+")")
	}
	return shInfraChange(TierDestructive, "runs pulumi "+sub)
}

func shAnsible(c *shCall) shEffect {
	if c.has("--check", "-C", "--syntax-check", "--list-hosts", "--list-tasks", "--list-tags", "--version") {
		return shInfraRead("checks playbooks")
	}
	return shInfraChange(TierDestructive, "runs tasks on other hosts")
}

var shDockerGroups = map[string]bool{
	"container": true, "image": true, "volume": true, "network": true, "system": true, "builder": true,
	"buildx": true, "context": true, "plugin": true, "manifest": true, "node": true, "service": true,
	"stack": true, "secret": true, "config": true, "swarm": true, "trust": true, "compose": true, "scout": true,
}

// shDockerVerbs classifies docker subcommands, "group verb" for the
// management commands ("container rm").
var shDockerVerbs = shBuildDockerVerbs()

func shBuildDockerVerbs() map[string]shEffect {
	verbs := map[string]shEffect{}
	add := func(e shEffect, names string) {
		for _, n := range strings.Split(names, ",") {
			verbs[strings.TrimSpace(n)] = e
		}
	}
	read := shEffect{class: ClassInfraRead, cap: CapWorkspaceRead, tier: TierRead, reason: "reads containers or images"}
	add(read, `ps, images, logs, inspect, version, info, top, stats, port, diff, events, history, wait,
		container ls, container list, container ps, container inspect, container logs, container top,
		container port, container diff, container stats, container wait, image ls, image list, image inspect,
		image history, volume ls, volume list, volume inspect, network ls, network list, network inspect,
		system df, system info, system events, context ls, context list, context show, context inspect,
		plugin ls, plugin list, plugin inspect, node ls, node inspect, node ps, service ls, service ps,
		service inspect, service logs, stack ls, stack ps, stack services, secret ls, secret inspect,
		config ls, config inspect, buildx ls, buildx inspect, buildx version, buildx du, builder ls,
		builder inspect, trust inspect, compose ps, compose logs, compose config, compose ls, compose images,
		compose top, compose version, compose port, compose events, manifest inspect, scout cves, scout quickview`)
	add(shNet(ClassNetHTTP, "talks to an image registry"), `pull, push, login, search, image pull, image push,
		manifest push, manifest create, manifest annotate, compose pull, compose push, trust sign, trust revoke`)
	add(shEffect{class: ClassProcessExec, cap: CapNetworkEgress, tier: TierNetworkEgress, reason: "builds an image, running its steps"},
		`build, image build, buildx build, buildx bake, compose build, builder build`)
	add(shEffect{class: ClassProcessExec, cap: CapHostAdmin, tier: TierPrivileged, reason: "runs a container, which can mount the host and act as root"},
		`run, exec, create, start, restart, attach, update, debug, container run, container exec, container create,
		container start, container restart, container attach, container update, compose up, compose run,
		compose exec, compose start, compose create, compose restart, compose watch, service create,
		service update, service scale, stack deploy, stack up, swarm init, swarm join, plugin install,
		plugin enable, plugin upgrade`)
	add(shInfraChange(TierDestructive, "removes containers, images, volumes or networks"),
		`rm, rmi, kill, container rm, container prune, container kill, image rm, image prune, volume rm,
		volume prune, network rm, network prune, system prune, builder prune, buildx prune, buildx rm,
		compose down, compose rm, compose kill, stack rm, service rm, secret rm, config rm, swarm leave,
		plugin rm, plugin disable, context rm, node rm`)
	add(shInfraChange(TierWrite, "changes containers or images"),
		`stop, pause, unpause, rename, tag, cp, save, load, export, import, commit, logout, container stop,
		container pause, container unpause, container rename, container cp, container export, container commit,
		image tag, image save, image load, image import, volume create, network create, network connect,
		network disconnect, context create, context update, context use, context export, context import,
		compose stop, compose pause, compose unpause, compose cp, secret create, config create, buildx create,
		buildx use, buildx stop`)
	return verbs
}

var shDockerOpts = shOpts{short: "Hcl", long: []string{"--host", "--context", "--config", "--log-level",
	"--tlscacert", "--tlscert", "--tlskey", "--url", "--connection", "--identity", "--root", "--runroot", "--storage-driver"}}

func shDocker(c *shCall) shEffect {
	sub, rest, ok := shSubcommand(c.args, shDockerOpts)
	if !ok {
		return shUnknown("runs " + c.name + " with a subcommand only known at run time")
	}
	if sub == "" {
		return shRead("shows help")
	}
	key := sub
	if shDockerGroups[sub] {
		o := shOpts{short: "fp", long: []string{"--file", "--project-name", "--project-directory", "--profile", "--env-file"}}
		if sub2, _, ok := shSubcommand(rest, o); ok && sub2 != "" {
			key = sub + " " + sub2
		}
	}
	e, ok := shDockerVerbs[key]
	if !ok {
		return shEffect{class: ClassInfraChange, cap: CapHostAdmin, tier: TierPrivileged, reason: "runs " + c.name + " " + key + ", which Airlock does not know"}
	}
	if key == "cp" || key == "container cp" || key == "compose cp" {
		if ops := shOperands(rest); len(ops) > 0 && !strings.Contains(ops[len(ops)-1].val, ":") {
			c.raiseWrites(&e, ops[len(ops)-1])
		}
	}
	return e
}

// shCompose is docker-compose: the docker verbs under "compose".
func shCompose(c *shCall) shEffect {
	sub, _, ok := shSubcommand(c.args, shOpts{short: "fp", long: []string{"--file", "--project-name",
		"--project-directory", "--profile", "--env-file"}})
	if !ok {
		return shUnknown("runs " + c.name + " with a subcommand only known at run time")
	}
	if e, ok := shDockerVerbs["compose "+sub]; ok {
		return e
	}
	return shEffect{class: ClassInfraChange, cap: CapHostAdmin, tier: TierPrivileged, reason: "runs " + c.name + " " + sub}
}

var shAWSOpts = shOpts{long: []string{"--profile", "--region", "--output", "--endpoint-url", "--query", "--color",
	"--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format"}}

func shAWS(c *shCall) shEffect {
	_, rest := shSplit(c.args, shAWSOpts)
	ops := shOperands(rest, shAWSOpts.long...)
	if len(ops) == 0 {
		return shRead("shows aws help")
	}
	if !ops[0].static || len(ops) > 1 && !ops[1].static {
		return shUnknown("runs aws with a command only known at run time")
	}
	if ops[0].val == "configure" {
		if len(ops) > 1 && (ops[1].val == "list" || ops[1].val == "get" || ops[1].val == "list-profiles") {
			if ops[1].val == "get" {
				return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged, reason: "reads AWS configuration, which may hold keys"}
			}
			return shRead("shows AWS configuration")
		}
		return shWrite(ClassFSWrite, "changes AWS credentials or configuration")
	}
	words := []string{ops[0].val}
	if len(ops) > 1 {
		words = append(words, ops[1].val)
	}
	if ops[0].val == "s3" && len(ops) > 1 && ops[1].val == "mv" {
		return shInfraChange(TierDestructive, "moves objects, deleting the source")
	}
	return shCloudEffect("aws", words)
}

// shCloud classifies CLIs whose command path is a run of words
// ("gcloud compute instances delete NAME"): the verbs decide.
func shCloud(cli string) shRule {
	return func(c *shCall) shEffect {
		var words []string
		for _, a := range c.args {
			if !a.static || strings.HasPrefix(a.val, "-") {
				break
			}
			words = append(words, a.val)
		}
		if len(words) == 0 {
			if len(c.args) > 0 && !c.args[0].static {
				return shUnknown("runs " + cli + " with a command only known at run time")
			}
			return shRead("shows " + cli + " help")
		}
		return shCloudEffect(cli, words)
	}
}

var (
	shCloudReads = shSet("describe", "list", "ls", "get", "show", "head", "lookup", "search", "query",
		"scan", "validate", "estimate", "preview", "check", "wait", "print", "cat", "du", "stat", "logs", "log",
		"tail", "version", "help", "info", "status", "whoami", "view", "inspect", "simulate", "filter",
		"batch-get", "select", "presign", "history", "diff", "open", "docs", "browse")
	shCloudDestroys = shSet("delete", "remove", "rm", "terminate", "destroy", "rb", "purge", "deregister",
		"deprovision", "drop", "erase", "wipe", "kill", "uninstall", "unpublish", "disable", "revoke", "detach",
		"cancel", "down")
	shCloudLocal = shSet("login", "logout", "configure", "config", "init", "auth", "link", "unlink",
		"completion", "completions", "alias", "profile", "use", "switch")
	shCloudSecrets = []string{"secret", "token", "password", "credential", "decrypt", "assume", "access-key",
		"api-key", "keys", "kubeconfig", "connection-string", "sas"}
	shCloudIdentity = shSet("iam", "sts", "organizations", "sso-admin", "identitystore", "roles", "role",
		"ad", "identity", "service-accounts", "policy", "add-iam-policy-binding", "set-iam-policy",
		"remove-iam-policy-binding", "permissions", "rbac")
)

func shSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// shCloudEffect: a credential read (secrets, tokens) or a deletion anywhere
// wins; otherwise the first known verb decides; identity changes are
// privileged; anything else creates or changes billed resources.
func shCloudEffect(cli string, words []string) shEffect {
	read, identity := false, false
	first := ""
	for _, w := range words {
		w = strings.ToLower(w)
		verb, _, _ := strings.Cut(w, "-")
		isRead := shCloudReads[w] || shCloudReads[verb] || w == "access" || strings.HasPrefix(w, "print-")
		if shCloudIdentity[w] {
			identity = true
		}
		for _, s := range shCloudSecrets {
			if strings.Contains(w, s) && (isRead || w == "assume-role" || strings.HasPrefix(w, "assume-role") || w == "decrypt") {
				return shEffect{class: ClassCredentialsRead, cap: CapCredentialsRead, tier: TierPrivileged,
					reason: "reads cloud credentials or secrets (" + cli + " " + strings.Join(words, " ") + ")"}
			}
		}
		if shCloudDestroys[w] || shCloudDestroys[verb] {
			return shInfraChange(TierDestructive, "deletes cloud resources ("+cli+" "+strings.Join(words, " ")+")")
		}
		if first == "" {
			switch {
			case isRead:
				first = "read"
			case shCloudLocal[w]:
				first = "local"
			}
		}
		read = read || isRead
	}
	switch {
	case first == "local" && read && (words[0] == "configure" || words[0] == "config"):
		return shRead("shows " + cli + " configuration")
	case first == "local":
		return shWrite(ClassFSWrite, "changes "+cli+" configuration or login")
	case first == "read" || read:
		return shInfraRead("reads cloud resources (" + cli + " " + strings.Join(words, " ") + ")")
	case identity:
		return shInfraChange(TierPrivileged, "changes cloud identities or permissions ("+cli+" "+strings.Join(words, " ")+")")
	}
	return shSpend("creates or changes billed cloud resources (" + cli + " " + strings.Join(words, " ") + ")")
}
