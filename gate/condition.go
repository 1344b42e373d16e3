package gate

import (
	"context"
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"github.com/airlock-dev/airlock"
)

// Conditions (`when:` on rules and classifiers) are CEL expressions over the
// action, compiled once at load. Evaluation is bounded by a cost limit, so
// a policy cannot make the gate slow.
const (
	conditionCostLimit = 100_000 // CEL cost units per evaluation
	conditionMaxChars  = 4096    // code points per expression
)

// conditionEnv declares what a condition can see. It is immutable and
// shared by every policy.
var conditionEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("agent", cel.StringType),
		cel.Variable("tool", cel.StringType),
		cel.Variable("cwd", cel.StringType),
		cel.Variable("session_id", cel.StringType),
		cel.Variable("requested_by", cel.StringType),
		cel.Variable("class", cel.StringType),
		cel.Variable("capability", cel.StringType),
		cel.Variable("tier", cel.StringType),
		cel.Variable("command", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("hints", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		cel.ParserExpressionSizeLimit(conditionMaxChars),
		ext.Strings(),
	)
})

// condition is a compiled CEL expression.
type condition struct {
	src  string
	prog cel.Program
	pos  Pos
}

// celIssue is a compile error inside an expression, located within it
// (line 1-based, column 0-based, as CEL reports them).
type celIssue struct {
	line, col int
	msg       string
}

func compileCondition(src string) (*condition, []celIssue) {
	env, err := conditionEnv()
	if err != nil {
		return nil, []celIssue{{msg: fmt.Sprintf("condition environment: %v", err)}}
	}
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		var out []celIssue
		for _, e := range iss.Errors() {
			out = append(out, celIssue{line: e.Location.Line(), col: e.Location.Column(), msg: e.Message})
		}
		return nil, out
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, []celIssue{{line: 1, msg: fmt.Sprintf("condition must be a bool, but it is %s", t)}}
	}
	prog, err := env.Program(ast, cel.CostLimit(conditionCostLimit))
	if err != nil {
		return nil, []celIssue{{line: 1, msg: err.Error()}}
	}
	return &condition{src: src, prog: prog}, nil
}

// activation exposes an action and one of its views to a condition without
// building a map per evaluation.
type activation struct {
	a      *airlock.Action
	v      *view
	grants *grantSet // the standing grants in force, nil for none
	// spent holds the budgets known spent, by key: their rules and grants
	// do not apply.
	spent   map[string]airlock.BudgetCharge
	args    map[string]any
	decoded bool
}

// argsMap decodes the action's arguments the first time something needs
// them: most decisions never do.
func (x *activation) argsMap() map[string]any {
	if !x.decoded {
		x.decoded = true
		x.args, _ = airlock.DecodeArgs(x.a.Args) // validated before any decision
		if x.args == nil {
			x.args = map[string]any{}
		}
	}
	return x.args
}

// decodedArgs is the arguments if a condition decoded them already, else
// nil: the catalog then reads only the members it looks at.
func (x *activation) decodedArgs() map[string]any {
	if !x.decoded {
		return nil
	}
	return x.args
}

var _ interpreter.Activation = (*activation)(nil)

func (x *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "args":
		return x.argsMap(), true
	case "agent":
		return x.a.Agent, true
	case "tool":
		return x.a.Tool, true
	case "cwd":
		return x.a.Cwd, true
	case "session_id":
		return x.a.SessionID, true
	case "requested_by":
		return x.a.RequestedBy, true
	case "class":
		return string(x.v.class), true
	case "capability":
		return string(x.v.capability), true
	case "tier":
		return x.v.tier.String(), true
	case "command":
		if x.v.cmd == nil {
			return map[string]any{}, true
		}
		return map[string]any{"text": x.v.cmd.Text, "name": x.v.cmd.Name}, true
	case "hints":
		h := airlock.Hints{}
		if x.a.Hints != nil {
			h = *x.a.Hints
		}
		tier := ""
		if h.Tier != 0 {
			tier = h.Tier.String()
		}
		return map[string]any{"read_only": h.ReadOnly, "needs_human": h.NeedsHuman, "tier": tier}, true
	}
	return nil, false
}

func (x *activation) Parent() interpreter.Activation { return nil }

// eval runs the condition. An error (a missing key, a wrong type, the cost
// limit) is returned to the caller, which fails closed.
func (c *condition) eval(ctx context.Context, x *activation) (bool, error) {
	out, _, err := c.prog.ContextEval(ctx, x)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("condition returned %s, not a bool", out.Type().TypeName())
	}
	return b, nil
}
