package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/hook/relay"
)

// Where the server is and which token to present.
const (
	envServer     = relay.EnvServer
	envToken      = relay.EnvToken
	defaultServer = relay.DefaultServer
)

// serverHelp is the root command's help on reaching a server.
const serverHelp = `

Commands that talk to a server (check, trust, token, approvals and audit
without --db, policy explain without files, policy show) find it at
--server, else $AIRLOCK_SERVER, else ` + defaultServer + `, and
authenticate with the bearer token in $AIRLOCK_TOKEN or in the file
--token-file names. There is deliberately no --token flag: a
command line is visible to every user of the machine (ps, /proc/PID/cmdline)
and is saved in shell history, so a secret written there leaks. An admin
creates tokens with 'airlock token create'; 'airlock serve' prints the first
admin token when it starts on an empty database.`

// addServerFlags declares the flags every server command shares.
func addServerFlags(root *cobra.Command) {
	root.Long += serverHelp
	f := root.PersistentFlags()
	f.String("server", "", "the Airlock server's URL (default $"+envServer+", else "+defaultServer+")")
	f.String("token-file", "", "read the bearer token from this file instead of $"+envToken+
		" (there is no --token flag: command lines leak through ps and shell history)")
}

// newClient returns a client for the server the flags and the environment
// name, with the token they give. A missing token is a usage error that
// says how to get one.
func newClient(cmd *cobra.Command) (*client.Client, error) {
	u, err := serverURL(cmd)
	if err != nil {
		return nil, err
	}
	token, err := readToken(cmd, u)
	if err != nil {
		return nil, err
	}
	return client.New(u, token), nil
}

// serverURL is --server, else $AIRLOCK_SERVER, else the default, checked.
func serverURL(cmd *cobra.Command) (string, error) {
	s, _ := cmd.Flags().GetString("server")
	from := "--server"
	if s == "" {
		s, from = os.Getenv(envServer), envServer
	}
	if s == "" {
		return defaultServer, nil
	}
	u, warning, err := relay.ServerURL(s, from)
	if err != nil {
		return "", usageError("%v", err)
	}
	if warning != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: warning: %s\n", warning)
	}
	return u, nil
}

// readToken reads the token from --token-file or $AIRLOCK_TOKEN.
func readToken(cmd *cobra.Command, server string) (string, error) {
	file, _ := cmd.Flags().GetString("token-file")
	if file == "" {
		if t := strings.TrimSpace(os.Getenv(envToken)); t != "" {
			return t, nil
		}
		return "", missingToken(cmd, server)
	}
	t, warning, err := relay.ReadTokenFile(file)
	if warning != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "airlock: warning: %s\n", warning)
	}
	if err != nil {
		return "", usageError("%v", err)
	}
	return t, nil
}

// missingToken is the usage error of a server command run without a token.
func missingToken(cmd *cobra.Command, server string) error {
	var alt string
	if cmd.Flags().Lookup("db") != nil {
		alt = "\nOr give --db FILE to read a database file directly."
	}
	return usageError(`%s needs a token for the Airlock server at %s: set %s (or --token-file FILE).
An admin creates one with 'airlock token create --role reviewer --name YOU'
(for an agent: --role agent --agent ID); 'airlock serve' prints the admin
token at its first start, and 'airlock token recover' makes a new one.%s`, cmd.CommandPath(), server, envToken, alt)
}

// serverFailed reports an error from the server, or from reaching it, as a
// failed check (exit 1): "airlock: CODE: message", with a hint when the
// code has an obvious next step.
func serverFailed(c *client.Client, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return checkFailed(fmt.Errorf("airlock: interrupted: %v", err))
	}
	code, msg := airlock.ErrorCode(err), errorText(err)
	switch code {
	case "unauthenticated":
		msg += fmt.Sprintf(" (the server at %s does not accept this token: check $%s or --token-file)", c.URL, envToken)
	case airlock.EUNAVAILABLE:
		msg += fmt.Sprintf(" (is the server at %s running? --server or $%s names it)", c.URL, envServer)
	}
	return checkFailed(fmt.Errorf("airlock: %s: %s", code, msg))
}

// serverInvalid is serverFailed, except that the server finding the input
// invalid is a usage error: the command line was wrong.
func serverInvalid(c *client.Client, err error) error {
	if airlock.ErrorCode(err) == airlock.EINVALID {
		return usageError("%s", errorText(err))
	}
	return serverFailed(c, err)
}
