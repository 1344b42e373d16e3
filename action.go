package airlock

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Limits on an action's arguments. They bound the work one action can cost
// the gate; an action beyond them is refused as invalid.
const (
	MaxArgsBytes = 8 << 20 // 8 MiB of JSON
	MaxArgsDepth = 64      // nesting of objects and arrays
	maxNameBytes = 512     // agent, tool, session and similar identifiers
)

// Action is what an agent attempts: one call of one tool. Every field an
// agent sends is data to be judged, never a claim to be trusted; the only
// thing it can say about risk is Hints, which may raise it.
type Action struct {
	// Agent identifies the agent making the call.
	Agent string `json:"agent"`
	// Tool is the tool's name as the host calls it: "write_file", "Bash",
	// "mcp__github__create_issue", "git.push".
	Tool string `json:"tool"`
	// Args are the tool's arguments: a JSON object. Duplicate keys, invalid
	// UTF-8 and numbers that JSON canonicalization would change are refused.
	Args json.RawMessage `json:"args,omitempty"`
	// TraceID, SessionID and CallID tie the action to the agent's run.
	TraceID   string `json:"trace_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	// RequestedBy is the person the agent acts for, if any. That person can
	// never approve the action.
	RequestedBy string `json:"requested_by,omitempty"`
	// Cwd is the working directory the tool runs in; relative paths in the
	// arguments are resolved against it.
	Cwd string `json:"cwd,omitempty"`
	// Hints are the agent's own (or an adapter's) statements about risk. They
	// can only make the decision stricter.
	Hints *Hints `json:"hints,omitempty"`
	// MCPServer names, for an MCP tool (mcp__<server>__<tool>), the server
	// of the MCP server catalogue (package mcpcatalog) that the executor
	// runs the call on: "filesystem", "github". The MCP gateway sets it from
	// the command its operator configured, never from what the server says
	// about itself. A tool the catalogue lists for that server is then
	// classified as the catalogue says — its paths like Read's and Write's,
	// its URLs like WebFetch's — instead of as mcp.call; any other tool,
	// or a name the catalogue does not know, changes nothing. It tells no
	// more than naming a built-in tool would: the executor that sets it is
	// the one that runs the call.
	MCPServer string `json:"mcp_server,omitempty"`
}

// Hints let an agent or an adapter raise an action's risk, never lower it.
// The MCP proxy, for instance, turns a server's destructiveHint into
// Tier: TierDestructive.
type Hints struct {
	// Tier raises the classified tier to at least this one.
	Tier RiskTier `json:"tier,omitempty"`
	// NeedsHuman asks that a person decides, whatever the policy says.
	NeedsHuman bool `json:"needs_human,omitempty"`
	// ReadOnly is the tool's own claim that it only reads: an MCP server's
	// readOnlyHint, which the MCP gateway passes on. It lowers nothing by
	// itself; a classifier whose condition reads hints.read_only trusts it,
	// for the tools it names.
	ReadOnly bool `json:"read_only,omitempty"`
	// Reason is shown to reviewers; it does not change the decision.
	Reason string `json:"reason,omitempty"`
}

// HintNames are the names of the hints, as JSON, policy tests and
// conditions (hints.NAME) write them.
var HintNames = []string{"tier", "needs_human", "read_only", "reason"}

// Set sets the hint named name (one of HintNames) from its text: a tier's
// name, true or false (empty means true), or a reason. An unknown name, or
// a value the hint cannot take, is EINVALID, with the names it could be.
func (h *Hints) Set(name, value string) error {
	flag := func(dst *bool) error {
		switch value {
		case "", "true":
			*dst = true
		case "false":
			*dst = false
		default:
			return Errorf(EINVALID, "hint %s is true or false, not %q", name, value)
		}
		return nil
	}
	switch name {
	case "tier":
		t, err := ParseRiskTier(value)
		if err != nil {
			return Errorf(EINVALID, "hint tier: %s", ErrorMessage(err))
		}
		h.Tier = t
		return nil
	case "needs_human":
		return flag(&h.NeedsHuman)
	case "read_only":
		return flag(&h.ReadOnly)
	case "reason":
		h.Reason = value
		return nil
	}
	return Errorf(EINVALID, "unknown hint %q%s", name, suggest(name, HintNames))
}

// String returns the hints as a CLI's --hint flags write them:
// "read_only, tier=spend".
func (h *Hints) String() string {
	var parts []string
	if h.Tier != 0 {
		parts = append(parts, "tier="+h.Tier.String())
	}
	if h.NeedsHuman {
		parts = append(parts, "needs_human")
	}
	if h.ReadOnly {
		parts = append(parts, "read_only")
	}
	if h.Reason != "" {
		parts = append(parts, "reason="+strconv.Quote(h.Reason))
	}
	return strings.Join(parts, ", ")
}

// MustArgs marshals v (typically a map literal) into arguments for an
// Action. It panics if v cannot be marshalled; use it for literals only.
func MustArgs(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("airlock.MustArgs: %v", err))
	}
	return b
}

// Validate reports whether the action is well formed: an agent and a tool
// name, arguments that are one strict JSON object, identifiers without
// control characters. The error's code is EINVALID and its message says what
// is wrong and where.
func (a Action) Validate() error {
	if err := a.validateFields(); err != nil {
		return err
	}
	return validateArgs(a.Args)
}

// validateFields checks everything but the arguments.
func (a Action) validateFields() error {
	for _, f := range []struct{ name, value string }{
		{"agent", a.Agent}, {"tool", a.Tool}, {"session_id", a.SessionID},
		{"trace_id", a.TraceID}, {"call_id", a.CallID}, {"requested_by", a.RequestedBy},
		{"mcp_server", a.MCPServer},
	} {
		if err := validateName(f.name, f.value); err != nil {
			return err
		}
	}
	switch {
	case a.Agent == "":
		return Errorf(EINVALID, "action has no agent")
	case a.Tool == "":
		return Errorf(EINVALID, "action has no tool")
	case !utf8.ValidString(a.Cwd) || strings.ContainsRune(a.Cwd, 0):
		return Errorf(EINVALID, "cwd is not valid text")
	}
	if a.Hints != nil && a.Hints.Tier != 0 && !a.Hints.Tier.Valid() {
		return Errorf(EINVALID, "hints.tier is not a risk tier")
	}
	return nil
}

func validateName(field, s string) error {
	if len(s) > maxNameBytes {
		return Errorf(EINVALID, "%s is longer than %d bytes", field, maxNameBytes)
	}
	printable := true // the common case: printable ASCII, checked byte by byte
	for i := 0; i < len(s) && printable; i++ {
		printable = s[i] >= 0x20 && s[i] < 0x7f
	}
	if printable {
		return nil
	}
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	for i, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) {
			return Errorf(EINVALID, "%s has control character %U at byte %d", field, r, i)
		}
	}
	return nil
}

// isBidiControl reports whether r reorders displayed text (Trojan Source).
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

// emptyArgs stands for absent arguments, so that absent, null and {} hash alike.
var emptyArgs = []byte("{}")

// scanner is a pooled JSON decoder: validating arguments must not cost an
// allocation per action.
type scanner struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

var scanners = sync.Pool{New: func() any {
	s := &scanner{}
	s.dec = jsontext.NewDecoder(&s.r)
	return s
}}

// validateArgs checks raw strictly without building anything: one JSON
// object, no duplicate names, valid UTF-8, no trailing data, nesting no
// deeper than MaxArgsDepth, and only numbers whose canonical form denotes
// the same value (see checkNumber).
func validateArgs(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > MaxArgsBytes {
		return Errorf(EINVALID, "args are %d bytes, more than the limit of %d", len(raw), MaxArgsBytes)
	}
	if raw[0] != '{' {
		return Errorf(EINVALID, "args must be a JSON object")
	}
	s := scanners.Get().(*scanner)
	defer scanners.Put(s)
	s.r.Reset(raw)
	s.dec.Reset(&s.r)
	if err := scan(s.dec); err != nil {
		return Errorf(EINVALID, "args: %s", argsErrorMessage(err))
	}
	return nil
}

func scan(dec *jsontext.Decoder) error {
	for {
		switch dec.PeekKind() {
		case '{', '[':
			if dec.StackDepth() >= MaxArgsDepth {
				return fmt.Errorf("nesting deeper than %d at %s", MaxArgsDepth, pointerOrRoot(dec.StackPointer()))
			}
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
		case '0':
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			if err := checkNumber(v, pointerOrRoot(dec.StackPointer())); err != nil {
				return err
			}
		default:
			if _, err := dec.ReadToken(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
		if dec.StackDepth() == 0 {
			if _, err := dec.ReadToken(); err != io.EOF {
				if err == nil {
					err = errors.New("unexpected data after the object")
				}
				return err
			}
			return nil
		}
	}
}

// CanonicalArgs returns arguments as an approval binds them: checked as
// Action.Validate checks them and as CheckJSON does (no member name that
// differs from another only in case), in RFC 8785 canonical form, and {}
// when absent or null. An adapter that forwards a call's arguments
// forwards these bytes, so that what runs is byte for byte what was
// decided and hashed. Errors: EINVALID.
func CanonicalArgs(raw json.RawMessage) (json.RawMessage, error) {
	if err := validateArgs(raw); err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(emptyArgs), nil
	}
	if err := CheckJSON(raw); err != nil {
		return nil, Errorf(EINVALID, "args: %s", ErrorMessage(err))
	}
	v := jsontext.Value(bytes.Clone(raw))
	if err := v.Canonicalize(); err != nil {
		return nil, Errorf(EINVALID, "args: %s", argsErrorMessage(err))
	}
	return json.RawMessage(v), nil
}

// PickArgs decodes only the top-level members of raw (already validated)
// named in want, skipping the rest unread: classification looks at a path
// or a command, not at a file's content.
func PickArgs(raw []byte, want map[string]bool) map[string]any {
	s, ok := openArgs(raw)
	if !ok {
		return nil
	}
	defer scanners.Put(s)
	var out map[string]any
	for {
		name, ok := s.nextName()
		if !ok {
			return out
		}
		if !want[string(name)] { // no allocation: a map lookup
			if s.dec.SkipValue() != nil {
				return out
			}
			continue
		}
		key := string(name) // the name is void after the next read
		v, err := decodeValue(s.dec, 2)
		if err != nil {
			return out
		}
		if out == nil {
			out = make(map[string]any, 2)
		}
		out[key] = v
	}
}

// FirstArg returns the value of the best ranked (lowest) of the top-level
// members of raw that want ranks: what pickArgs would hold under that name,
// read the same way, without building a map. The action's summary needs
// one argument, on every decision.
func FirstArg(raw []byte, want map[string]int) (any, bool) {
	s, ok := openArgs(raw)
	if !ok {
		return nil, false
	}
	defer scanners.Put(s)
	var first any
	best := len(want)
	for {
		name, ok := s.nextName()
		if !ok {
			return first, best < len(want)
		}
		rank, wanted := want[string(name)]
		if !wanted {
			if s.dec.SkipValue() != nil {
				return first, best < len(want)
			}
			continue
		}
		v, err := decodeValue(s.dec, 2)
		if err != nil {
			return first, best < len(want)
		}
		if rank <= best { // on a repeated name the last wins, as in a map
			first, best = v, rank
		}
	}
}

// openArgs returns a pooled scanner positioned inside the object raw, or
// false when raw is not an object. The caller puts the scanner back.
func openArgs(raw []byte) (*scanner, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	s := scanners.Get().(*scanner)
	s.r.Reset(raw)
	s.dec.Reset(&s.r)
	if _, err := s.dec.ReadToken(); err != nil {
		scanners.Put(s)
		return nil, false
	}
	return s, true
}

// nextName reads the name of the object's next member, unquoted; it is
// valid until the next read. A name whose escapes cannot be decoded is
// returned empty, to be skipped. ok is false at the end of the object or
// where it cannot be read.
func (s *scanner) nextName() (name []byte, ok bool) {
	if s.dec.PeekKind() != '"' {
		return nil, false
	}
	quoted, err := s.dec.ReadValue()
	if err != nil {
		return nil, false
	}
	if bytes.IndexByte(quoted, '\\') < 0 {
		return quoted[1 : len(quoted)-1], true
	}
	var unquoted string
	if jsonv2.Unmarshal(quoted, &unquoted) != nil {
		return nil, true
	}
	return []byte(unquoted), true
}

// DecodeArgs decodes raw, already validated, into Go values: objects as
// map[string]any, integers that fit as int64, other numbers as float64.
func DecodeArgs(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	v, err := decodeValue(dec, 1)
	if err != nil {
		return nil, Errorf(EINVALID, "args: %s", argsErrorMessage(err))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(EINVALID, "args must be a JSON object")
	}
	return m, nil
}

func decodeValue(dec *jsontext.Decoder, depth int) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if k := tok.Kind(); (k == '{' || k == '[') && depth > MaxArgsDepth {
		return nil, fmt.Errorf("nesting deeper than %d at %s", MaxArgsDepth, pointerOrRoot(dec.StackPointer()))
	}
	switch tok.Kind() {
	case '{':
		m := make(map[string]any)
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := name.String() // the token is void after the next read
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		s := []any{}
		for dec.PeekKind() != ']' {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		_, err := dec.ReadToken()
		return s, err
	case '"':
		return tok.String(), nil
	case '0':
		return decodeNumber(tok.String(), dec.StackPointer())
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// decodeNumber converts a validated JSON number literal.
func decodeNumber(lit string, where jsontext.Pointer) (any, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil && i >= -(1<<53) && i <= 1<<53 {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s at %s is out of range", lit, pointerOrRoot(where))
	}
	return f, nil
}

// checkNumber refuses a number literal whose canonical form would denote a
// different value. RFC 8785 hashes numbers as IEEE 754 doubles, so two
// literals that round to the same double (9007199254740993 and
// 9007199254740992, or 1e-1000 and 0) would share an action hash while a
// program reading them exactly would see two values: an approval must bind
// exactly what runs. A literal of at most 15 characters without an exponent
// always survives the round trip, so only the others are examined.
func checkNumber(lit []byte, where string) error {
	if where != "" {
		where = " at " + where
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return fmt.Errorf("number %s%s is out of range", lit, where)
	}
	if !numberNeedsCheck(lit) {
		return nil
	}
	shortest := strconv.FormatFloat(f, 'g', -1, 64)
	exact, ok := new(big.Rat).SetString(string(lit))
	canon, _ := new(big.Rat).SetString(shortest)
	if !ok || exact.Cmp(canon) != 0 {
		return fmt.Errorf("number %s%s cannot be represented exactly (canonical JSON would turn it into %s); send it as a string",
			lit, where, shortest)
	}
	return nil
}

// numberNeedsCheck reports whether a number literal might not survive the
// round trip through a double: it is long or has an exponent.
func numberNeedsCheck(lit []byte) bool {
	return len(lit) > 15 || bytes.ContainsAny(lit, "eE")
}

func pointerOrRoot(p jsontext.Pointer) string {
	if p == "" {
		return "the top level"
	}
	return string(p)
}

// argsErrorMessage makes a decoder error readable: the decoder already names
// the byte offset and the JSON pointer of the problem.
func argsErrorMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "jsontext: ")
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of JSON input"
	}
	return msg
}

// Hash identifies an action for approvals: the SHA-256 of the RFC 8785
// canonical JSON of every field the decision or the effect depends on.
type Hash [sha256.Size]byte

// String returns the hash as 64 lowercase hex digits.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash (no action).
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText implements encoding.TextMarshaler.
func (h Hash) MarshalText() ([]byte, error) {
	return hex.AppendEncode(make([]byte, 0, hex.EncodedLen(len(h))), h[:]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHash parses 64 hex digits (an optional "sha256:" prefix is allowed).
func ParseHash(s string) (Hash, error) {
	var h Hash
	s = strings.TrimPrefix(s, "sha256:")
	if len(s) != hex.EncodedLen(len(h)) {
		return h, Errorf(EINVALID, "action hash must be 64 hex digits, got %d characters", len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, Errorf(EINVALID, "action hash is not hex: %v", err)
	}
	return h, nil
}

// hashBuffers holds the canonical JSON of actions being hashed.
var hashBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendCanonical appends the RFC 8785 canonical JSON of the part of an
// action an approval binds: agent, args, cwd, hints, mcp_server (when
// set), requested_by, session_id, tool — already in canonical member order, so the object is
// assembled directly, with strings quoted and the arguments canonicalized
// by the JSON library. trace_id and call_id are left out on purpose: a
// retry of the same action carries new ones and must match its grant.
// Hints' reason is left out too: it changes nothing.
func (a Action) appendCanonical(b []byte) ([]byte, error) {
	var err error
	str := func(key, v string) {
		b = append(b, key...)
		if err == nil {
			b, err = jsontext.AppendQuote(b, v)
		}
	}
	str(`{"agent":`, a.Agent)
	b = append(b, `,"args":`...)
	args := bytes.TrimSpace(a.Args)
	if len(args) == 0 || string(args) == "null" {
		b = append(b, emptyArgs...)
	} else {
		start := len(b)
		b = append(b, args...)
		v := jsontext.Value(b[start:])
		if cerr := v.Canonicalize(); cerr != nil && err == nil {
			err = cerr
		}
		b = append(b[:start], v...)
	}
	str(`,"cwd":`, a.Cwd)
	b = append(b, `,"hints":`...)
	if h := a.Hints; h != nil && (h.NeedsHuman || h.Tier != 0 || h.ReadOnly) {
		b = append(b, `{"needs_human":`...)
		b = strconv.AppendBool(b, h.NeedsHuman)
		if h.ReadOnly { // only when claimed: the hashes of actions before the claim existed stay as they were
			b = append(b, `,"read_only":true`...)
		}
		tier := ""
		if h.Tier != 0 {
			tier = h.Tier.String()
		}
		str(`,"tier":`, tier)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	if a.MCPServer != "" { // only when set: the hashes of actions before it existed stay as they were
		str(`,"mcp_server":`, a.MCPServer)
	}
	str(`,"requested_by":`, a.RequestedBy)
	str(`,"session_id":`, a.SessionID)
	str(`,"tool":`, a.Tool)
	return append(b, '}'), err
}

// CanonicalJSON returns the RFC 8785 canonical JSON that Hash digests.
func (a Action) CanonicalJSON() ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	b, err := a.appendCanonical(nil)
	if err != nil {
		return nil, Errorf(EINVALID, "args: %v", err)
	}
	return b, nil
}

// Hash validates the action and returns its hash: SHA-256 over the RFC 8785
// canonical JSON of agent, tool, args, cwd, session_id, requested_by,
// hints and mcp_server. Key order and whitespace in args do not change it; any other byte
// does. An invalid action has no hash (EINVALID, as Validate).
func (a Action) Hash() (Hash, error) {
	var h Hash
	if err := a.validateFields(); err != nil {
		return h, err
	}
	// Canonicalizing the arguments parses them strictly (syntax, UTF-8,
	// duplicate names); what it does not check — the top-level kind, depth
	// and inexact numbers — a byte scan does, so the arguments are read
	// twice, not three times. Errors are reported by the full validator,
	// which locates them.
	if err := quickCheckArgs(a.Args); err != nil {
		return h, cmp.Or(validateArgs(a.Args), err)
	}
	buf := hashBuffers.Get().(*[]byte)
	b, err := a.appendCanonical((*buf)[:0])
	if cap(b) <= 64<<10 { // keep small buffers only: one huge action must not pin memory
		*buf = b
		defer hashBuffers.Put(buf)
	}
	if err != nil {
		return h, cmp.Or(validateArgs(a.Args), error(Errorf(EINVALID, "args: %v", err)))
	}
	return sha256.Sum256(b), nil
}

// effectDomain separates effect hashes from action hashes.
const effectDomain = "airlock.effect.v1\x00"

// EffectHash validates the action and returns the hash of what it would do,
// whichever session of its agent asked and for whom: SHA-256 over a domain
// prefix and the canonical JSON of agent, tool, args, cwd and hints (the
// action hash without session_id and requested_by). Pending requests with
// the same effect hash are the "identical requests" a reviewer may approve
// together; identical actions within one session already share a request.
func (a Action) EffectHash() (Hash, error) {
	a.SessionID, a.RequestedBy = "", ""
	if err := a.validateFields(); err != nil {
		return Hash{}, err
	}
	b, err := a.appendCanonical([]byte(effectDomain))
	if err != nil {
		return Hash{}, cmp.Or(validateArgs(a.Args), error(Errorf(EINVALID, "args: %v", err)))
	}
	return sha256.Sum256(b), nil
}

// quickCheckArgs checks, in one pass over the bytes, what canonicalization
// does not: one object at the top, nesting, and numbers whose canonical
// form would change their value.
func quickCheckArgs(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > MaxArgsBytes || raw[0] != '{' {
		return Errorf(EINVALID, "args must be one JSON object of at most %d bytes", MaxArgsBytes)
	}
	depth, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxArgsDepth {
				return Errorf(EINVALID, "args nest deeper than %d", MaxArgsDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(raw) && strings.IndexByte("0123456789.eE+-", raw[j]) >= 0 {
				j++
			}
			if lit := raw[i:j]; numberNeedsCheck(lit) {
				if err := checkNumber(lit, ""); err != nil {
					return Errorf(EINVALID, "args: %v", err)
				}
			}
			i = j - 1
		}
	}
	return nil
}
