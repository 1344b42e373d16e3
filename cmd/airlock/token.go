package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/sqlite"
	"github.com/airlock-dev/airlock/visible"
)

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke the server's bearer tokens",
		Long: `Every call to the server carries a bearer token, and the token decides who
the caller is. An agent token checks actions as exactly one agent; a
reviewer token reads requests and the audit log and resolves requests as
the person it names; an admin token may do everything, tokens included.
The server keeps only a hash of each secret, so a secret is shown once, at
creation. These commands need an admin token, except recover: the way back
from a lost admin token, for whoever can write the server's data directory.`,
		Example: `  airlock token create --role agent --agent coder-1
  airlock token create --role reviewer --name bob --expires 720h
  airlock token list
  airlock token revoke 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f
  airlock token recover --data /var/lib/airlock`,
	}
	cmd.AddCommand(newTokenCreateCmd(), newTokenListCmd(), newTokenRevokeCmd(), newTokenRecoverCmd())
	return cmd
}

func newTokenRecoverCmd() *cobra.Command {
	var configPath, dataDir, name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "recover [--data DIR | --config FILE] [--name N]",
		Short: "Make an admin token directly in the database, when none is left",
		Long: `Recover is the way back from a lost admin token. It needs no token: it
writes a new admin token straight into the server's database, so it takes
what only the server's operator has, write access to the data directory
(the same --data or --config as 'airlock serve'). The new token is audited
like any other (token.created), as made by 'airlock token recover' and the
system user who ran it; its secret is printed once.

It works while the server runs: SQLite lets a second process write beside
it (WAL, one writer at a time, waiting for the lock), and the server finds
the token on its first use. Recover never creates a database, and refuses
one whose schema is not exactly this airlock's: run the server's version.

Then revoke the lost token ('airlock token list' shows it).`,
		Example: `  airlock token recover --data /var/lib/airlock
  airlock token recover --config /etc/airlock/airlock.yaml --name ops --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageError("--name is the person the admin token authenticates: it may not be empty")
			}
			cfg, err := LoadConfig(configPath)
			if err != nil {
				return checkFailed(err)
			}
			cfg.overrideDataDir(dataDir)
			if cfg.Store.Driver != "sqlite" {
				return usageError("token recover writes SQLite databases, not %s ones", cfg.Store.Driver)
			}
			t, secret, err := recoverAdmin(cmd, cfg.Store.Path, name)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, airlock.NewToken{Token: t, Secret: secret}); err != nil {
					return checkFailed(err)
				}
				return nil
			}
			fmt.Fprintf(out, "created admin token %s for %s in %s\n", t.ID, tokenHolder(&t), visible.Escaped(cfg.Store.Path))
			fmt.Fprintf(out, "secret: %s\n", secret)
			fmt.Fprintln(cmd.ErrOrStderr(), "airlock: store the secret now: it is not shown again.\n"+
				"Then revoke the lost token with it: 'airlock token list' shows it, 'airlock token revoke ID' ends it.")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", os.Getenv("AIRLOCK_CONFIG"), "the server's configuration file (env AIRLOCK_CONFIG)")
	f.StringVar(&dataDir, "data", "", "the server's data directory, overriding the configuration (default ./airlock-data, env AIRLOCK_DATA)")
	f.StringVar(&name, "name", "admin", "the person the admin token authenticates")
	f.BoolVar(&asJSON, "json", false, "print the token and its secret as JSON")
	return cmd
}

// recoverAdmin creates an admin token in the database at path, which must
// exist and have this airlock's schema (a read-write open would migrate
// it, under a server that may not know the new schema).
func recoverAdmin(cmd *cobra.Command, path, name string) (airlock.Token, string, error) {
	ctx := cmd.Context()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return airlock.Token{}, "", usageError("no airlock database at %s: --data names the server's data directory, --config its configuration", path)
	}
	if err := checkDBFile(cmd, path); err != nil {
		return airlock.Token{}, "", err
	}
	check := sqlite.NewDB(path)
	check.ReadOnly = true
	if err := check.Open(ctx); err != nil {
		return airlock.Token{}, "", storeFailed(err)
	}
	check.Close()
	db := sqlite.NewDB(path)
	if err := db.Open(ctx); err != nil {
		return airlock.Token{}, "", storeFailed(err)
	}
	defer db.Close()
	id, err := uuid.NewV7()
	if err != nil {
		return airlock.Token{}, "", checkFailed(err)
	}
	by := "airlock token recover"
	if u, err := user.Current(); err == nil {
		by += " (system user " + u.Username + ")"
	}
	secret, h := airlock.NewTokenSecret()
	t, err := db.CreateToken(ctx, airlock.Token{ID: id.String(), Role: airlock.RoleAdmin, Name: name, CreatedBy: by}, h)
	if err != nil {
		return airlock.Token{}, "", storeFailed(err)
	}
	return t, secret, nil
}

func newTokenCreateCmd() *cobra.Command {
	var (
		role, name, agent, outFile string
		expires                    time.Duration
		asJSON                     bool
	)
	cmd := &cobra.Command{
		Use:   "create --role agent --agent A | --role reviewer|admin --name N [--expires 720h]",
		Short: "Create a token and print its secret, once",
		Long: `Create makes a token and prints its secret. Airlock keeps only the secret's
hash: the secret is not shown again, so store it now and hand it over
through a private channel. Its holder gives it to airlock in $AIRLOCK_TOKEN
or a file named by --token-file (mode 0600), never on a command line.

--out FILE writes the secret to FILE (mode 0600) instead of printing it,
making its directory (0700) when missing. The file is made ready first: a
directory that cannot be written stops the command before the server
makes the token, so no secret is lost and no token is left unused.

  --role agent --agent A       checks actions as agent A, and nothing else
  --role reviewer --name N     resolves requests as person N
  --role admin --name N        everything, as person N

A token lives until revoked, or until --expires has passed.`,
		Example: `  airlock token create --role agent --agent coder-1 --name "coder-1 on ci"
  airlock token create --role agent --agent claude-laptop --out ~/.config/airlock/claude.token
  airlock token create --role reviewer --name bob --expires 720h
  airlock token create --role admin --name ops --json > ops-token.json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := airlock.ParseRole(role)
			switch {
			case role == "":
				return usageError("token create needs --role: agent, reviewer or admin")
			case err != nil:
				return usageError("--role: %s", airlock.ErrorMessage(err))
			case r == airlock.RoleAgent && agent == "":
				return usageError("an agent token needs --agent, the one agent it acts as")
			case r != airlock.RoleAgent && agent != "":
				return usageError("a %s token acts as a person, not as an agent: give --name instead of --agent", r)
			case r != airlock.RoleAgent && name == "":
				return usageError("a %s token needs --name, the person it authenticates", r)
			case expires < 0:
				return usageError("--expires takes a positive duration (720h), or 0 for a token that lives until revoked")
			}
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			// The file is made ready before the token exists: a secret
			// that cannot be written is never created.
			var file *secretFile
			if outFile != "" {
				if file, err = prepareSecretFile(outFile); err != nil {
					return checkFailed(fmt.Errorf("airlock: --out: %w; no token created", err))
				}
			}
			ctx := cmd.Context()
			t, err := c.CreateToken(ctx, r, name, agent, expires)
			if err != nil {
				if file != nil {
					file.abort()
				}
				return serverInvalid(c, err)
			}
			out := cmd.OutOrStdout()
			if file != nil {
				if err := file.commit(t.Secret); err != nil {
					return lostSecret(cmd, c, t, err)
				}
				t.Secret = "" // in the file, and nowhere else
			}
			switch {
			case asJSON:
				if err := writeJSON(out, t); err != nil {
					return checkFailed(err)
				}
			case file != nil:
				fmt.Fprintf(out, "created %s token %s for %s (expires %s)\n", t.Token.Role, t.Token.ID,
					tokenHolder(&t.Token), expiresText(t.Token.Expires))
				fmt.Fprintf(out, "secret written to %s (mode 0600)\n", visible.Escaped(outFile))
			default:
				fmt.Fprintf(out, "created %s token %s for %s (expires %s)\n", t.Token.Role, t.Token.ID,
					tokenHolder(&t.Token), expiresText(t.Token.Expires))
				fmt.Fprintf(out, "secret: %s\n", t.Secret)
			}
			// A script reading --json needs no advice on standard error; a
			// person does; a secret in a file needs none.
			if errOut := cmd.ErrOrStderr(); file == nil && (!asJSON || isTerminal(errOut)) {
				fmt.Fprintln(errOut, "airlock: store the secret now: the server keeps only its hash and it is not shown again.")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&role, "role", "", "what the token may do: agent, reviewer or admin (required)")
	f.StringVar(&agent, "agent", "", "the one agent an agent token acts as")
	f.StringVar(&name, "name", "", "the person a reviewer or admin token authenticates; a label for an agent token")
	f.DurationVar(&expires, "expires", 0, "how long the token is valid (720h); 0: until revoked")
	f.BoolVar(&asJSON, "json", false, "print the token and its secret as JSON")
	f.StringVar(&outFile, "out", "", "write the secret to this file (mode 0600; its directory is made, 0700) instead of printing it")
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions(
		[]cobra.Completion{"agent", "reviewer", "admin"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newTokenListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tokens, revoked ones included (never their secrets)",
		Long: `List prints every token the server knows, those from its configuration file
and those created with 'token create', revoked and expired ones included:
its ID, role, holder, when it was created and by whom, when it expires and
whether it was revoked. Secrets are never shown: the server does not have
them.`,
		Example: `  airlock token list
  airlock token list --json`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			ts, err := c.Tokens(cmd.Context())
			if err != nil {
				return serverFailed(c, err)
			}
			return printList(cmd.OutOrStdout(), asJSON, ts, func(w io.Writer, ts []airlock.Token) error {
				return printTokenTable(w, ts, time.Now())
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tokens as JSON")
	return cmd
}

// printTokenTable prints one row per token.
func printTokenTable(out io.Writer, ts []airlock.Token, now time.Time) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(out, "no tokens")
		return err
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return visible.Escaped(s)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tROLE\tNAME\tAGENT\tCREATED\tBY\tEXPIRES\tREVOKED")
	for _, t := range ts {
		created := "-"
		if !t.Created.IsZero() {
			created = t.Created.UTC().Format(time.RFC3339)
		}
		expires := expiresText(t.Expires)
		if !t.Expires.IsZero() && !now.Before(t.Expires) {
			expires += " (expired)"
		}
		revoked := "-"
		if !t.Revoked.IsZero() {
			revoked = t.Revoked.UTC().Format(time.RFC3339)
			if t.RevokedBy != "" {
				revoked += " by " + visible.Escaped(t.RevokedBy)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(t.ID), t.Role, dash(t.Name), dash(t.Agent),
			created, dash(t.CreatedBy), expires, revoked)
	}
	return tw.Flush()
}

func newTokenRevokeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: it stops working at once",
		Long: `Revoke ends a token's validity. The server that revokes it refuses it at
once; other replicas within seconds. A token from the server's
configuration file cannot be revoked here: remove it from the file.`,
		Example: `  airlock token revoke 01937b6c-3f9e-7c4a-9d2e-6a1b2c3d4e5f`,
		Args:    argsExactly(1, "one token ID ('airlock token list' shows them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			t, err := c.RevokeToken(cmd.Context(), args[0])
			if err != nil {
				return serverFailed(c, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, t); err != nil {
					return checkFailed(err)
				}
				return nil
			}
			by := ""
			if t.RevokedBy != "" {
				by = " by " + visible.Escaped(t.RevokedBy)
			}
			fmt.Fprintf(out, "revoked %s token %s for %s at %s%s\n", t.Role, visible.Escaped(t.ID), tokenHolder(&t),
				t.Revoked.UTC().Format(time.RFC3339), by)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the revoked token as JSON")
	return cmd
}

// tokenHolder names who holds a token: "agent coder-1", "bob".
func tokenHolder(t *airlock.Token) string {
	if t.Role == airlock.RoleAgent {
		s := "agent " + visible.Escaped(t.Agent)
		if t.Name != "" && t.Name != t.Agent {
			s += " (" + visible.Escaped(t.Name) + ")"
		}
		return s
	}
	return visible.Escaped(t.Name)
}

// expiresText prints a token's expiry.
func expiresText(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// lostSecret reports a secret that could not be written to its file after
// the server made its token: the token is revoked, so that none is left
// whose secret nobody holds; if even that fails, the secret is printed.
func lostSecret(cmd *cobra.Command, c *client.Client, t airlock.NewToken, werr error) error {
	if _, err := c.RevokeToken(cmd.Context(), t.Token.ID); err == nil {
		return checkFailed(fmt.Errorf("airlock: %v; token %s was created and is now revoked: run the command again", werr, t.Token.ID))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "created %s token %s for %s (expires %s)\nsecret: %s\n", t.Token.Role, t.Token.ID,
		tokenHolder(&t.Token), expiresText(t.Token.Expires), t.Secret)
	return checkFailed(fmt.Errorf("airlock: %v, nor could the token be revoked: its secret is printed above; "+
		"store it now, or revoke token %s", werr, t.Token.ID))
}
