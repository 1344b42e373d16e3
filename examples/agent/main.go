// Command agent is the smallest Go agent behind an Airlock server: it runs
// one shell command only when the server allows it, and waits while a
// person decides. It imports the vocabulary and the client, nothing of the
// engine (docs/ARCHITECTURE.md; client's TestAgentLinksLittle counts it).
package main

import (
	"context"
	"log"
	"os"
	"os/exec"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
)

func main() {
	guard := client.New(os.Getenv("AIRLOCK_SERVER"), os.Getenv("AIRLOCK_TOKEN"))
	a := airlock.Action{Agent: "example", Tool: "Bash", Args: airlock.MustArgs(map[string]any{"command": "git status"})}
	_, err := guard.Run(context.Background(), a, func(ctx context.Context) error {
		return exec.CommandContext(ctx, "git", "status").Run()
	})
	if err != nil {
		log.Fatal(err)
	}
}
