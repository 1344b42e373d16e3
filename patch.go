package airlock

import (
	"errors"
	"fmt"
	"strings"

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
			op = patchOp{verb: patchAdds, path: header[len(patchAdd):]}
			for i < len(body) && strings.HasPrefix(body[i], "+") {
				i++
			}
		case strings.HasPrefix(header, patchDelete):
			op = patchOp{verb: patchDeletes, path: header[len(patchDelete):]}
		case strings.HasPrefix(header, patchUpdate):
			op = patchOp{verb: patchUpdates, path: header[len(patchUpdate):]}
			if i < len(body) && strings.HasPrefix(body[i], patchMoveTo) {
				op.to = body[i][len(patchMoveTo):]
				if op.to == "" {
					return nil, fmt.Errorf("line %d: %q moves the file to an empty path", line+1, body[i])
				}
				i++
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
func classifyPatch(c Classification, text, cwd string, cat *sensitive.Catalogue) Classification {
	ops, err := parsePatch(text)
	if err != nil {
		return opaquePatch(c, err.Error())
	}
	var what []string
	var best Classification
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
func patchOpClass(op patchOp, cwd string, cat *sensitive.Catalogue) (c Classification, place string) {
	paths := []string{op.path}
	switch {
	case op.verb == patchDeletes:
		c = Classification{Class: ClassFSDelete, Capability: CapWorkspaceDelete, Tier: TierDestructive, Reason: "deletes " + op.path}
	case op.to != "":
		// Moving a file away from a system path changes the system as much
		// as writing one there.
		c = Classification{Class: ClassFSMove, Capability: CapWorkspaceWrite, Tier: TierWrite, Reason: "moves " + op.path + " to " + op.to}
		paths = append(paths, op.to)
	case op.verb == patchAdds:
		c = Classification{Class: ClassFSWrite, Capability: CapWorkspaceWriteText, Tier: TierWrite, Reason: "adds " + op.path}
	default:
		c = Classification{Class: ClassFSWrite, Capability: CapWorkspaceWriteText, Tier: TierWrite, Reason: "updates " + op.path}
	}
	for _, p := range paths {
		abs := sensitive.Clean(p, cwd)
		if what, ok := cat.GateConfig(abs, false); ok {
			c.Class, c.Tier, c.Capability = ClassGateConfigure, TierPrivileged, CapGateConfigure
			return c, "configures the gate (" + what + "): " + abs
		}
	}
	for _, p := range paths {
		abs := sensitive.Clean(p, cwd)
		if where, ok := cat.SystemPlace(abs, false); ok {
			c.Tier, c.Capability = TierPrivileged, CapHostAdmin
			return c, "touches a system path (" + where + "): " + abs
		}
	}
	return c, ""
}

// opaquePatch marks a patch that could not be read: the decision will be
// the strictest one.
func opaquePatch(c Classification, why string) Classification {
	c.Class, c.Capability, c.Tier = ClassUnknown, CapUnknown, TierPrivileged
	c.Source, c.Reason, c.Opaque = "patch", "the patch could not be read", why
	return c
}
