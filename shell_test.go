package airlock_test

import (
	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/shell"
)

func init() { airlock.ShellForTests = shell.Analyser{} }
