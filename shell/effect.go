package shell

import "github.com/airlock-dev/airlock"

// effect is what one command does.
type effect struct {
	class   airlock.Class
	cap     airlock.Capability
	tier    airlock.RiskTier
	reason  string
	generic bool
	inert   bool
	none    bool // a pure wrapper: only what it runs is recorded
}

// rule classifies one command. It may also ask for what the command runs
// to be analysed (call.run, call.runScript).
type rule func(c *call) effect

func read(reason string) effect {
	return effect{class: airlock.ClassFSRead, cap: airlock.CapWorkspaceRead, tier: airlock.TierRead, reason: reason}
}

func write(class airlock.Class, reason string) effect {
	return effect{class: class, cap: airlock.CapWorkspaceWrite, tier: airlock.TierWrite, reason: reason}
}

func perm(reason string) effect {
	return effect{class: airlock.ClassFSPermissions, cap: airlock.CapWorkspaceWrite, tier: airlock.TierWrite, reason: reason}
}

func remove(reason string) effect {
	return effect{class: airlock.ClassFSDelete, cap: airlock.CapWorkspaceDelete, tier: airlock.TierDestructive, reason: reason}
}

func exec(reason string) effect {
	return effect{class: airlock.ClassProcessExec, cap: airlock.CapProcessExec, tier: airlock.TierWrite, reason: reason}
}

// loadsNative is loading a native library into a program (ssh-keygen -D,
// openssl -engine, sqlite3's .load): it runs any code with the program's
// rights, as LD_PRELOAD does.
func loadsNative(reason string) effect {
	return effect{class: airlock.ClassProcessExec, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: reason}
}

func kill(reason string) effect {
	return effect{class: airlock.ClassProcessKill, cap: airlock.CapProcessSignal, tier: airlock.TierDestructive, reason: reason}
}

func net(class airlock.Class, reason string) effect {
	return effect{class: class, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: reason}
}

func admin(reason string) effect {
	return effect{class: airlock.ClassSystemAdmin, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: reason}
}

func adminDestroy(reason string) effect {
	return effect{class: airlock.ClassSystemAdmin, cap: airlock.CapHostAdmin, tier: airlock.TierDestructive, reason: reason}
}

func unknown(reason string) effect {
	return effect{class: airlock.ClassUnknown, cap: airlock.CapUnknown, tier: airlock.TierPrivileged, reason: reason}
}

func inert(reason string) effect {
	return effect{class: airlock.ClassShellBuiltin, cap: airlock.CapShellState, tier: airlock.TierRead, reason: reason, inert: true}
}

func env(reason string) effect {
	return effect{class: airlock.ClassShellEnv, cap: airlock.CapUnknown, tier: airlock.TierPrivileged, reason: reason}
}

func gitRead(reason string) effect {
	return effect{class: airlock.ClassGitRead, cap: airlock.CapGitRead, tier: airlock.TierRead, reason: reason}
}

func gitWrite(reason string) effect {
	return effect{class: airlock.ClassGitWrite, cap: airlock.CapGitWrite, tier: airlock.TierWrite, reason: reason}
}

func gitNet(class airlock.Class, reason string) effect {
	return effect{class: class, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: reason}
}

func gitDestroy(reason string) effect {
	return effect{class: airlock.ClassGitWrite, cap: airlock.CapGitWrite, tier: airlock.TierDestructive, reason: reason}
}

func infraRead(reason string) effect {
	return effect{class: airlock.ClassInfraRead, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: reason}
}

func infraChange(tier airlock.RiskTier, reason string) effect {
	return effect{class: airlock.ClassInfraChange, cap: airlock.CapHostAdmin, tier: tier, reason: reason}
}

func spend(reason string) effect {
	return effect{class: airlock.ClassSpend, cap: airlock.CapSpend, tier: airlock.TierSpend, reason: reason}
}

func install(tier airlock.RiskTier, reason string) effect {
	e := effect{class: airlock.ClassPackageInstall, cap: airlock.CapNetworkEgress, tier: tier, reason: reason}
	if tier == airlock.TierPrivileged {
		e.cap = airlock.CapHostAdmin
	} else if tier < airlock.TierNetworkEgress {
		e.cap = airlock.CapWorkspaceWrite
	}
	return e
}

func publish(reason string) effect {
	return effect{class: airlock.ClassPackagePublish, cap: airlock.CapNetworkEgress, tier: airlock.TierDestructive, reason: reason}
}

// worse returns the more dangerous of two effects (a on ties).
func worse(a, b effect) effect {
	if b.tier > a.tier {
		return b
	}
	return a
}
