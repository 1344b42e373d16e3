package gate_test

import (
	"github.com/airlock-dev/airlock/gate"
	"github.com/airlock-dev/airlock/shell"
)

func init() { gate.ShellForTests = shell.Analyser{} }
