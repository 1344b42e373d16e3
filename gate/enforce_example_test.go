package gate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
	"github.com/airlock-dev/airlock/sqlite"
)

// Enforcing decisions with the embedded store: every outcome is recorded
// before anything runs, and a proposal, once approved, runs exactly once.
func ExampleEnforcer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "airlock-example")
	defer os.RemoveAll(dir)
	db := sqlite.NewDB(filepath.Join(dir, "airlock.db"))
	if err := db.Open(ctx); err != nil {
		panic(err)
	}
	defer db.Close()

	policy, err := gate.LoadPolicy("policy.yaml", []byte(`
agents:
  release-bot: {owner: alice}
rules:
  - {id: reads, tool: read_file, outcome: auto}
  - {id: publish, tool: publish, outcome: suggest}
`))
	if err != nil {
		panic(err)
	}
	g, err := gate.New(shell.Analyser{}, policy)
	if err != nil {
		panic(err)
	}
	enforcer := &gate.Enforcer{Gate: g, Store: db}

	publish := airlock.Action{Agent: "release-bot", Tool: "publish", Args: airlock.MustArgs(map[string]any{"version": "1.2.0"})}
	_, err = enforcer.Run(ctx, publish, func(context.Context, airlock.Action) error {
		fmt.Println("publishing") // not reached: the action is only proposed
		return nil
	})
	fmt.Println(result(err))

	// The owner approves the proposal, echoing the hash of what they saw.
	page, _ := db.FindApprovals(ctx, airlock.ApprovalFilter{Status: []airlock.ApprovalStatus{airlock.StatusPending}})
	ap := page.Approvals[0]
	_, err = db.ResolveApproval(ctx, airlock.Resolution{
		ApprovalID: ap.ID, Status: airlock.StatusApproved, ActionHash: ap.ActionHash,
		Reviewer: airlock.Reviewer{Name: "alice"}, Surface: airlock.SurfaceCLI,
	})
	if err != nil {
		panic(err)
	}

	// The agent retries: the same action runs once, and only once.
	for range 2 {
		_, err = enforcer.Run(ctx, publish, func(context.Context, airlock.Action) error {
			fmt.Println("publishing 1.2.0")
			return nil
		})
		fmt.Println(result(err))
	}

	rep, _ := db.Verify(ctx)
	fmt.Println("audit log intact:", rep.OK())
	// Output:
	// AIRLOCK-SUGGESTED
	// publishing 1.2.0
	// ran
	// AIRLOCK-SUGGESTED
	// audit log intact: true
}

func result(err error) string {
	if err == nil {
		return "ran"
	}
	return airlock.ErrorCode(err)
}
