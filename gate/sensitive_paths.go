package gate

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/airlock-dev/airlock/sensitive"
)

// A policy's sensitive_paths add to the built-in catalogue of package
// sensitive: paths whose reading reveals a secret, whose writing
// configures the gate, or whose writing runs code later. A layer can only
// add (a pattern cannot take a path out), so a lower layer only tightens.
//
//	sensitive_paths:
//	  secrets: ["~/work/vault/**", "**/*.secret.json"]
//	  gate_config: ["ops/airlock/**"]
//	  runs_later: ["~/.config/mytool/hooks/**"]

// sensitivePathFields are the keys of sensitive_paths, each with the kind
// of entry it adds and the words a reason uses for it. They are checked
// against schema/policy.schema.json by a test.
var sensitivePathFields = []struct {
	name string
	kind sensitive.Kind
	what string
}{
	{"secrets", sensitive.KindSecret, "a secret named in sensitive_paths"},
	{"gate_config", sensitive.KindGateConfig, "the gate's configuration, named in sensitive_paths"},
	{"runs_later", sensitive.KindRunsLater, "a place named in sensitive_paths, where a write runs code later"},
}

// sensitivePaths decodes a policy's sensitive_paths into p: its entries
// and the catalogue they make with the built-in one.
func (d *policyDecoder) sensitivePaths(n ast.Node, p *Policy) {
	const where = "sensitive_paths"
	before := len(d.problems)
	var entries []sensitive.Entry
	var fs []field
	for _, f := range sensitivePathFields {
		fs = append(fs, field{f.name, func(n ast.Node) {
			at := where + "." + f.name
			nodes := []ast.Node{n}
			if _, ok := d.resolve(n).(*ast.SequenceNode); ok {
				nodes = d.seq(n, at)
			}
			for i, e := range nodes {
				ew := at
				if e != n {
					ew = fmt.Sprintf("%s[%d]", at, i)
				}
				s, ok := d.scalar(e, ew)
				if !ok {
					continue
				}
				if err := sensitive.Compile(f.kind, s); err != nil {
					d.errorf(e, "%s: %v (patterns: /abs/path, ~/in/every/home, **/at/any/depth or rel/at/any/depth; *, ?, [..] and **)", ew, err)
					continue
				}
				at := pos(e)
				entries = append(entries, sensitive.Entry{Kind: f.kind, Pattern: s, What: f.what,
					Source: fmt.Sprintf("%s:%d:%d", d.file, at.Line, at.Col)})
			}
		}})
	}
	d.fields(n, where, fs)
	if len(d.problems) > before || len(entries) == 0 {
		return
	}
	c, err := sensitive.Builtin().Extend(entries...)
	if err != nil {
		d.errorf(n, "%s: %v", where, err)
		return
	}
	p.sensitivePaths, p.sensitive = entries, c
}

// SensitivePaths returns the paths the policy adds to the built-in
// catalogue of package sensitive (its sensitive_paths), in file order.
func (p *Policy) SensitivePaths() []sensitive.Entry {
	return append([]sensitive.Entry(nil), p.sensitivePaths...)
}

// catalogue returns the sensitive paths of the stack: the built-in
// catalogue and every layer's sensitive_paths. It is nil (the built-in
// catalogue) when no layer adds any.
func (s stack) catalogue() *sensitive.Catalogue {
	var c *sensitive.Catalogue
	for _, p := range s {
		if p.sensitive != nil {
			c = sensitive.Join(c, p.sensitive)
		}
	}
	return c
}

// sensitivePathNames lists the keys of sensitive_paths.
func sensitivePathNames() []string {
	var out []string
	for _, f := range sensitivePathFields {
		out = append(out, f.name)
	}
	return out
}
