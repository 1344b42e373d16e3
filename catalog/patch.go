package catalog

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/sensitive"
)

// Codex's apply_patch format (codex-rs/apply-patch, and the grammar its
// 0.169 binary gives the model):
//
//	*** Begin Patch
//	[*** Environment ID: ID]
//	*** Add File: PATH       then lines "+..."
//	*** Delete File: PATH
//	*** Update File: PATH    [*** Move to: PATH] then chunks of "@@", " ", "+", "-" lines
//	*** End Patch
//
// The parser below follows the structure of Codex's own parser rather than
// the grammar: Codex trims a hunk header before matching it, ends an added
// file at its first line without "+", and ends an updated file at the first
// line that starts with "***". Reading the hunks the way Codex reads them
// is what makes every path Codex would touch one that Airlock sees; a patch
// that Codex might read differently is one Airlock refuses to read.
//
// Paths are read as Codex writes them (patchPath, moveLine): a path with
// spaces inside is one path, and which white space around it counts is
// Codex's choice, not the grammar's. Sources: openai/codex,
// codex-rs/apply-patch/src/parser.rs (parse_one_hunk, read at commits
// 0ffd5a8ddfc0 and 0e0fb63d0290) and streaming_parser.rs (15d5409c84a3),
// and the @openai/codex 0.169.0 binary itself, which the tests run where
// it is installed (TestPatchPathsAsCodexWrites).

const (
	patchBegin   = "*** Begin Patch"
	patchEnd     = "*** End Patch"
	patchEnv     = "*** Environment ID: "
	patchAdd     = "*** Add File: "
	patchDelete  = "*** Delete File: "
	patchUpdate  = "*** Update File: "
	patchMoveTo  = "*** Move to: "
	patchEOF     = "*** End of File"
	maxPatchOps  = 10000 // more hunks than any real patch; beyond it the patch is not read
	reasonPathsN = 5     // paths a reason names before "and N more"
)

type patchVerb uint8

const (
	patchAdds patchVerb = iota
	patchUpdates
	patchDeletes
)

// patchOp is one file a patch touches.
type patchOp struct {
	verb patchVerb
	path string
	to   string // the destination of an update that moves the file
	// read are path and to as the patch spells them, where Codex writes
	// another path (patchPath): judged too, in case a Codex that does not
	// write what it parsed the way 0.169.0 does writes there.
	read []string
}

// parsePatch returns the files an apply_patch patch touches, in order.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	lines = unwrapHeredoc(lines)
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != patchBegin {
		return nil, errors.New("the patch does not start with " + patchBegin)
	}
	if strings.TrimSpace(lines[len(lines)-1]) != patchEnd {
		return nil, errors.New("the patch does not end with " + patchEnd)
	}
	body := lines[1 : len(lines)-1]
	if len(body) > 0 {
		// The header is trimmed, so an empty ID does not match: Codex
		// refuses it, and so does the hunk loop below.
		if strings.HasPrefix(strings.TrimSpace(body[0]), patchEnv) {
			body = body[1:]
		}
	}
	var ops []patchOp
	for i := 0; i < len(body); {
		if len(ops) == maxPatchOps {
			return nil, fmt.Errorf("the patch touches more than %d files", maxPatchOps)
		}
		header := strings.TrimSpace(body[i])
		line := i + 2 // 1-based, after the Begin line
		i++
		var op patchOp
		switch {
		case header == "":
			// Codex lets blank lines separate hunks.
			continue
		case strings.HasPrefix(header, patchAdd):
			op = newPatchOp(patchAdds, header[len(patchAdd):])
			for i < len(body) && strings.HasPrefix(body[i], "+") {
				i++
			}
		case strings.HasPrefix(header, patchDelete):
			op = newPatchOp(patchDeletes, header[len(patchDelete):])
		case strings.HasPrefix(header, patchUpdate):
			op = newPatchOp(patchUpdates, header[len(patchUpdate):])
			if i < len(body) {
				if to, ok := moveLine(body[i]); ok {
					op.to = patchPath(to)
					if op.to != to {
						op.read = append(op.read, to)
					}
					i++
				}
			}
			for ; i < len(body) && (body[i] == patchEOF || !strings.HasPrefix(body[i], "***")); i++ {
				if !updateLine(body[i]) {
					return nil, fmt.Errorf("line %d: %q is neither a change nor a hunk header", i+2, body[i])
				}
			}
		default:
			return nil, fmt.Errorf("line %d: %q is not a hunk header", line, header)
		}
		if op.path == "" {
			return nil, fmt.Errorf("line %d: %q names no file", line, header)
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, errors.New("the patch touches no file")
	}
	return ops, nil
}

// newPatchOp is the op of a hunk header whose path, as spelled, is p.
func newPatchOp(verb patchVerb, p string) patchOp {
	op := patchOp{verb: verb, path: patchPath(p)}
	if op.path != p {
		op.read = []string{p}
	}
	return op
}

// patchPath is the path Codex 0.169.0 writes for the path of a hunk
// header, read from the header trimmed of Unicode white space at both ends
// (as Codex's parse_one_hunk reads it: lines[0].trim(), then strip_prefix
// of the marker; Go's strings.TrimSpace and Rust's str::trim both trim the
// White_Space property). What follows the marker's one space is the path,
// spaces inside and at its start included. Codex then writes the file with
// every tab and carriage return removed from its path, wherever they are
// (observed of the 0.169.0 binary, see TestPatchPathsAsCodexWrites); other
// characters, invisible or not, stay.
func patchPath(p string) string {
	if !strings.ContainsAny(p, "\t\r") {
		return p
	}
	return strings.NewReplacer("\t", "", "\r", "").Replace(p)
}

// moveLine reads a "*** Move to: " line as Codex 0.169.0 does: the line,
// trimmed of white space at its end only, starts with the marker (a line
// indented, or whose path is only white space, is not a move line), and
// the rest is the destination as spelled (patchPath gives the one
// written). The sources disagree here — parser.rs strips the marker from
// the raw line, streaming_parser.rs from the line trimmed at both ends —
// so this is what the binary was seen to do: "*** Move to: b.txt  " moves
// to "b.txt", " *** Move to: b.txt" is a context line.
func moveLine(l string) (string, bool) {
	l = strings.TrimRightFunc(l, unicode.IsSpace)
	if !strings.HasPrefix(l, patchMoveTo) {
		return "", false
	}
	return l[len(patchMoveTo):], true
}

// updateLine reports whether a line may stand inside an updated file's
// chunks. Codex ends a chunk at any other line and then reads that line as
// the next hunk header, which fails; refusing it here keeps the two parsers
// from disagreeing about where a hunk ends.
func updateLine(l string) bool {
	if strings.TrimSpace(l) == "" || l == patchEOF || strings.HasPrefix(l, "@@") {
		return true
	}
	switch l[0] {
	case ' ', '+', '-':
		return true
	}
	return false
}

// unwrapHeredoc strips the here-document a model sometimes wraps a patch in
// (<<'EOF' ... EOF), which Codex's lenient parser strips too.
func unwrapHeredoc(lines []string) []string {
	if len(lines) < 4 {
		return lines
	}
	first := strings.TrimSpace(lines[0])
	switch first {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
	default:
		return lines
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "EOF") {
		return lines
	}
	return lines[1 : len(lines)-1]
}

// classifyPatch classifies an apply_patch call by the files its patch
// touches, relative to cwd: each counts, and the strictest wins (an added
// or updated file is a write, a deleted one destructive, one under a system
// path or where a write persists privileged). A patch that cannot be read
// is opaque: it might touch anything, so it gets the strictest outcome.
func classifyPatch(c airlock.Classification, text, cwd string, cat *sensitive.Catalogue) airlock.Classification {
	ops, err := parsePatch(text)
	if err != nil {
		return opaquePatch(c, err.Error())
	}
	var what []string
	var best airlock.Classification
	var bestPlace string
	for _, op := range ops {
		oc, place := patchOpClass(op, cwd, cat)
		if oc.Tier > best.Tier {
			best, bestPlace = oc, place
		}
		what = append(what, oc.Reason)
	}
	if len(what) > reasonPathsN {
		what = append(what[:reasonPathsN], fmt.Sprintf("and %d more", len(what)-reasonPathsN))
	}
	c.Class, c.Capability, c.Tier = best.Class, best.Capability, best.Tier
	c.Reason = "patch " + strings.Join(what, ", ")
	if bestPlace != "" {
		c.Reason += "; " + bestPlace
	}
	return c
}

// patchOpClass classifies one file of a patch: its Reason says what the
// patch does to the file, and place names the system path or the gate's
// configuration that made it privileged, if one did.
func patchOpClass(op patchOp, cwd string, cat *sensitive.Catalogue) (c airlock.Classification, place string) {
	paths := []string{op.path}
	switch {
	case op.verb == patchDeletes:
		c = airlock.Classification{Class: airlock.ClassFSDelete, Capability: airlock.CapWorkspaceDelete, Tier: airlock.TierDestructive, Reason: "deletes " + op.path}
	case op.to != "":
		// Moving a file away from a system path changes the system as much
		// as writing one there.
		c = airlock.Classification{Class: airlock.ClassFSMove, Capability: airlock.CapWorkspaceWrite, Tier: airlock.TierWrite, Reason: "moves " + op.path + " to " + op.to}
		paths = append(paths, op.to)
	case op.verb == patchAdds:
		c = airlock.Classification{Class: airlock.ClassFSWrite, Capability: airlock.CapWorkspaceWriteText, Tier: airlock.TierWrite, Reason: "adds " + op.path}
	default:
		c = airlock.Classification{Class: airlock.ClassFSWrite, Capability: airlock.CapWorkspaceWriteText, Tier: airlock.TierWrite, Reason: "updates " + op.path}
	}
	// The paths Codex writes, and as spelled (op.read): the stricter wins.
	paths = append(paths, op.read...)
	for _, p := range paths {
		abs := sensitive.Clean(p, cwd)
		if what, ok := cat.GateConfig(abs, false); ok {
			c.Class, c.Tier, c.Capability = airlock.ClassGateConfigure, airlock.TierPrivileged, airlock.CapGateConfigure
			return c, "configures the gate (" + what + "): " + abs
		}
	}
	for _, p := range paths {
		abs := sensitive.Clean(p, cwd)
		if where, ok := cat.SystemPlace(abs, false); ok {
			c.Tier, c.Capability = airlock.TierPrivileged, airlock.CapHostAdmin
			return c, "touches a system path (" + where + "): " + abs
		}
	}
	return c, ""
}

// opaquePatch marks a patch that could not be read: the decision will be
// the strictest one.
func opaquePatch(c airlock.Classification, why string) airlock.Classification {
	c.Class, c.Capability, c.Tier = airlock.ClassUnknown, airlock.CapUnknown, airlock.TierPrivileged
	c.Source, c.Reason, c.Opaque = "patch", "the patch could not be read", why
	return c
}
