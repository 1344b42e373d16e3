package shell

import (
	"testing"

	"github.com/airlock-dev/airlock"
)

// TestReadContract holds the analyser to its contract (docs/POLICY.md,
// "What read means"), one family at a time: a command is read-tier only
// when every part of it is understood. Each family has cases that must
// not be reads, written from the family's description, and everyday cases
// of the same shape that must stay reads.
func TestReadContract(t *testing.T) {
	for _, fam := range []struct {
		name     string
		notRead  []string
		stayRead []string
	}{
		{"strings the shell evaluates later", []string{
			`n='z[$(id>/tmp/o)]'; echo $(( n * 2 ))`,
			`w='z[$(id>/tmp/o)]'; for (( i = 0; i < w; i++ )); do :; done`,
			`k='z[$(id>/tmp/o)]'; [[ 3 -lt k ]]`,
			`let 'total = q[$(id>/tmp/o)]'`,
			`builtin let 'q[$(id>/tmp/o)]=1'`,
			`typeset -i cnt; cnt='q[$(id>/tmp/o)]'`,
			`local_var='q[$(id>/tmp/o)]'; arr[local_var]=x`,
			`idx='q[$(id>/tmp/o)]'; arr=(a b); echo "${arr[idx]}"`,
			`off='q[$(id>/tmp/o)]'; s=abc; echo "${s:1:off}"`,
			`printf -v 'out[$(id>/tmp/o)]' %s x`,
			`readarray -t lines < README.md; read -r 'v[$(id>/tmp/o)]' < README.md`,
			`[ -v 'q[$(id>/tmp/o)]' ] && echo set`,
			`getopts ab 'q[$(id>/tmp/o)]'`,
			`r='q[$(id>/tmp/o)]'; echo "${!r}"`,
			`fmt='\u@\h $(id>/tmp/o)'; echo "${fmt@P}"`,
			`echo $(( COUNT + 1 ))`,
			`c=$(cat count.txt); (( c > 3 )) && echo many`,
			`f() { echo $(( $1 + 1 )); }; f 'q[$(id>/tmp/o)]'`,
		}, []string{
			`n=3; echo $(( n * 2 ))`,
			`for (( i = 0; i < 3; i++ )); do echo $i; done`,
			`i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i`,
			`n=$(git ls-files | wc -l); echo $(( n + 1 ))`,
			`arr=(a b c); echo "${arr[1]}" "${#arr[@]}"`,
			`s=hello; echo "${s:1:3}"`,
		}},
		{"a word only known at run time used as a path", []string{
			`cat "$TARGET"`,
			`head -n 5 "$(ls ~/.gnupg | head -1)"`,
			`p=$(printf %s ~/.aws/config); less "$p"`,
			`while read -r f; do cat "$f"; done < files.txt`,
			`sort -u < "$INPUT"`,
			`cat files.txt | xargs head -1`,
			`xargs -a files.txt wc -c`,
			`bash -c 'tail "$1"' sh "$SOMEFILE"`,
			`grep -h . "${DIR}/notes"`,
			`set -- "$HOMEDIR"; cat "$1/x"`,
		}, []string{
			`f=go.mod; head -3 "$f"`,
			`for f in cmd/*.go; do wc -l "$f"; done`,
			`set -- go.mod go.sum; wc -l "$@"`,
			`sh -c 'wc -l "$1"' sh go.mod`,
			`git ls-files '*.go' | xargs grep -n TODO`,
			`find docs -name '*.md' | xargs wc -l`,
			`for f in $(git diff --name-only); do head -2 "$f"; done`,
			`git ls-files | while read -r f; do wc -l "$f"; done`,
			`cat "$HOME/project/README.md"`,
		}},
		{"a value that may be a secret, printed or used", []string{
			`echo "$STRIPE_KEY"`,
			`printf '%s\n' "$PGPASSWORD"`,
			`name=OPENAI_API_KEY; echo "${!name}"`,
			`copy="$SLACK_BOT_TOKEN"; other=$copy; echo "$other"`,
			`cat <<< "$VAULT_TOKEN"`,
			`cat <<EOF\n$SENTRY_DSN\nEOF`,
			`printenv MONGO_URI`,
			`grep -c "$API_SECRET" config.yaml`,
			`jq -n '$ENV.HOME'`,
			`yq -n 'strenv(TOKEN)'`,
			`awk 'BEGIN { print ENVIRON["AWS_SESSION_TOKEN"] }'`,
			`declare -p DB_PASS`,
		}, []string{
			`echo "$HOME" "$PWD" "$SHELL" "$PATH"`,
			`printenv HOME`,
			`jq '.name' package.json`,
			`awk '{ print $1 }' README.md`,
			`msg=hello; echo "$msg"`,
		}},
		{"an option not known to be inert", []string{
			`git log --ext-diff -p`,
			`git diff --textconv HEAD~1`,
			`git -p log -1`,
			`sort --compress-program=./pack data.txt`,
			`wc --files0-from=names.txt`,
			`ls --frobnicate`,
			`cat --bogus-option README.md`,
			`du --files0-from=dirs.txt`,
			`tree -o listing.txt`,
			`date --set='2020-01-01'`,
			`md5sum -c sums.txt`,
			`find . -fprint out.txt`,
			`jq -f prog.jq data.json`,
		}, []string{
			`git log --oneline -n 5 --stat`,
			`git diff --stat HEAD~1`,
			`sort -u -k2,2 -t, data.txt`,
			`wc -l README.md`,
			`ls -lah --color=never`,
			`grep -rn --include='*.go' TODO .`,
			`head -20 README.md`,
			`tail -n +3 go.mod`,
			`find . -maxdepth 2 -type f -name '*.md' -print`,
		}},
		{"a configuration key or an environment variable not known to be inert", []string{
			`git -c diff.external=./x diff --ext-diff`,
			`git -c core.hooksPath=.h status`,
			`git -c gpg.program=./x log --show-signature`,
			`git -c credential.helper=x log -1`,
			`git -c some.unknown=1 status`,
			`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log`,
			`MYAPP_PLUGIN=./x.so cat README.md`,
			`LESSOPEN='|id' less README.md`,
		}, []string{
			`git -c core.quotepath=off status`,
			`git -c color.ui=always log --oneline -3`,
			`LC_ALL=C sort data.txt`,
			`TZ=UTC date`,
			`GIT_PAGER=cat git log -2`,
		}},
		{"control flow: what a branch or a loop may leave", []string{
			`f=README.md; if [ -n "$X" ]; then f=~/.ssh/id_ed25519; fi; cat "$f"`,
			`f=~/.netrc; test -z "$Y" && f=README.md; cat "$f"`,
			`f=README.md; case $1 in x) f=~/.aws/credentials;; esac; cat "$f"`,
			`f=README.md; for i in 1 2 3; do head "$f"; f=~/.git-credentials; done`,
			`g() { cat "$1"; }; g ~/.pgpass`,
			`d=README.md; h() { d=~/.ssh/id_rsa; }; h; cat "$d"`,
			`cd ~/.ssh; cat config id_rsa`,
			`cd "$SOMEWHERE"; cat secrets.txt`,
			`if true; then cd ~/.aws; fi; cat credentials`,
		}, []string{
			`f=README.md; if [ -d docs ]; then f=docs/index.md; fi; cat "$f"`,
			`lc() { wc -l "$1"; }; lc go.mod; lc go.sum`,
			`cd docs && ls -la && cat index.md`,
		}},
		{"loading a native library", []string{
			`ssh-keygen -D ./libpkcs11.so -e`,
			`openssl x509 -engine ./e.so -in cert.pem -noout`,
			`sqlite3 app.db '.load ./ext'`,
			`sqlite3 app.db "SELECT load_extension('./ext')"`,
			`gawk -l ./ext 'BEGIN { }'`,
		}, nil},
	} {
		t.Run(fam.name, func(t *testing.T) {
			for _, script := range fam.notRead {
				script = shellUnescape(script)
				cmds, err := analyseShell(script, "/home/u/project")
				if err != nil {
					continue // denied outright: not a read either
				}
				if tier, class := shellOverall(cmds); tier <= airlock.TierRead {
					t.Errorf("%q is %s %s, want more than a read\n%v", script, tier, class, shellEntries(cmds))
				}
			}
			for _, script := range fam.stayRead {
				cmds, err := analyseShell(script, "/home/u/project")
				if err != nil {
					t.Errorf("%q: %v", script, err)
					continue
				}
				if tier, class := shellOverall(cmds); tier != airlock.TierRead {
					t.Errorf("%q is %s %s, want a read\n%v", script, tier, class, shellEntries(cmds))
				}
			}
		})
	}
}
