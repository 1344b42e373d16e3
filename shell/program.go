package shell

import (
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// The programs Airlock knows, and how their subcommands and options change
// what they do: one table per family, each in its own file (builtin.go,
// wrapper.go, file.go, network.go, admin.go, dev.go, git.go, package.go,
// infra.go), with its cases in testdata/corpus.txt. Every rule reads its
// program's options with one parser, getopt (getopt.go), and a program
// known by what its options do is a tool whose options have roles
// (tool.go). A program that is in no table runs as "process.exec" (write),
// marked Generic so that a policy classifier may say more.

// programs maps a program name to its rule. Each name is in exactly one
// table (a test checks it).
var programs = sync.OnceValue(mergePrograms)

func mergePrograms() map[string]rule {
	m := map[string]rule{}
	for _, name := range readOnly {
		m[name] = reads("reads files")
	}
	for _, name := range listing {
		m[name] = fixed(read("shows information"))
	}
	for _, table := range programTables() {
		for name, r := range table {
			m[name] = r
		}
	}
	return m
}

func programTables() []map[string]rule {
	return []map[string]rule{
		builtins(), wrappers(), fileCommands(), netCommands(), adminCommands(),
		devCommands(), packageCommands(), infraCommands(),
	}
}

// Table-building helpers.

func fixed(e effect) rule { return func(*call) effect { return e } }

func inertRule(reason string) rule { return fixed(inert(reason)) }

// reads is a program that reads the files it is given: reading a
// credential is a credential read.
func reads(reason string, valueOpts ...string) rule {
	return func(c *call) effect {
		e := read(reason)
		c.raiseReads(&e, c.operands(valueOpts...)...)
		return e
	}
}

// writes is a program that writes the files it is given.
func writes(class airlock.Class, reason string, valueOpts ...string) rule {
	return func(c *call) effect {
		e := write(class, reason)
		c.raiseWrites(&e, c.operands(valueOpts...)...)
		return e
	}
}

// verbs classifies a program by its subcommand.
type verbs struct {
	opts  getopt            // global options that take a value
	none  effect            // no subcommand
	def   effect            // a subcommand not listed; its reason gets the subcommand
	by    map[string]effect // fixed effects
	rules map[string]rule   // subcommands with rules of their own
}

// verbEntry lists subcommands (space-separated) with a fixed effect or a rule.
type verbEntry struct {
	names string
	e     effect
	r     rule
}

func on(names string, e effect) verbEntry   { return verbEntry{names: names, e: e} }
func onRule(names string, r rule) verbEntry { return verbEntry{names: names, r: r} }
func use(e effect) verbs                    { return verbs{none: e, def: e} }
func (v verbs) with(o getopt) verbs         { v.opts = o; return v }
func (v verbs) withNone(e effect) verbs     { v.none = e; return v }

func (v verbs) on(verbs ...verbEntry) rule {
	v.by = map[string]effect{}
	v.rules = map[string]rule{}
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

func (v verbs) classify(c *call) effect {
	sub, rest, ok := subcommand(c.args, v.opts)
	switch {
	case !ok:
		return unknown("runs " + c.name + " with a subcommand only known at run time")
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

// lazy is a rule built the first time it runs. The program tables are built
// on first use, not at package init, so that a process that links this
// package but classifies no shell command (airlock hook, airlock token)
// does not pay for them.
func lazy(build func() rule) rule {
	r := sync.OnceValue(build)
	return func(c *call) effect { return r()(c) }
}
