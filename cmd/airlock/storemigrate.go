package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/storecopy"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Move the store between databases",
		Long: `Store commands work on Airlock's databases directly, not through a server:
stop 'airlock serve' on the source first.`,
		Example: `  airlock store migrate --from sqlite:///var/lib/airlock/airlock.db --to postgres://airlock@db/airlock`,
	}
	cmd.AddCommand(newStoreMigrateCmd())
	return cmd
}

func newStoreMigrateCmd() *cobra.Command {
	var from, to, schema string
	cmd := &cobra.Command{
		Use:   "migrate --from sqlite://FILE --to postgres://DSN [--schema S]",
		Short: "Copy a SQLite store whole into an empty PostgreSQL schema",
		Long: `Migrate copies an embedded SQLite store into PostgreSQL, for running
several replicas on one database: every table, row for row, every column as
it is — the audit log with its sequence numbers, times and hashes, approval
requests in whatever state, tokens (only their secrets' hashes: every token
still authenticates), trust records, deliveries, tool pins.

The source is opened read-only and copied as of one moment. The target
schema (--schema, default public) is created if missing and must hold no
Airlock data: migrate never merges. The copy is one transaction: all of it
or nothing. Then the target's audit chain is verified and its head compared
with the source's; any difference exits 1.

Stop 'airlock serve' on the source first: what it writes after the copy
began is not copied.`,
		Example: `  airlock store migrate --from sqlite:///var/lib/airlock/airlock.db \
      --to 'postgres://airlock@db.internal:5432/airlock?sslmode=verify-full'
  airlock store migrate --from airlock.db --to postgres://airlock@localhost/airlock --schema airlock`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := sqliteSource(from)
			if err != nil {
				return err
			}
			if err := postgresTarget(to); err != nil {
				return err
			}
			rep, err := storecopy.SQLiteToPostgres(cmd.Context(), path, to, schema)
			if err != nil {
				return checkFailed(fmt.Errorf("airlock: %s", errorText(err)))
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), rep)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the SQLite store to copy: sqlite:///path/to/airlock.db, or a path")
	f.StringVar(&to, "to", "", "the PostgreSQL database to copy into: postgres://… (its password may be in ~/.pgpass or $PGPASSWORD)")
	f.StringVar(&schema, "schema", postgres.DefaultSchema, "the PostgreSQL schema to copy into")
	return cmd
}

// sqliteSource returns the file --from names, once it is sure to be an
// existing SQLite file (opening a missing one would create it).
func sqliteSource(from string) (string, error) {
	path := from
	if rest, ok := strings.CutPrefix(from, "sqlite://"); ok {
		path = rest
	} else if rest, ok := strings.CutPrefix(from, "sqlite:"); ok {
		path = rest
	}
	if path == "" {
		return "", usageError("store migrate needs --from sqlite:///path/to/airlock.db, the store to copy")
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", usageError("--from %s: no such file", path)
	case err != nil:
		return "", checkFailed(err)
	case fi.IsDir():
		return "", usageError("--from %s is a directory, not a database file", path)
	}
	file, err := os.Open(path)
	if err != nil {
		return "", checkFailed(err)
	}
	defer file.Close()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(file, head); err != nil || string(head) != sqliteMagic {
		return "", checkFailed(fmt.Errorf("airlock: %s is not a SQLite database", path))
	}
	return path, nil
}

// postgresTarget checks that --to is a PostgreSQL URL, without repeating
// it: it may hold a password.
func postgresTarget(to string) error {
	if to == "" {
		return usageError("store migrate needs --to postgres://…, the database to copy into")
	}
	u, err := url.Parse(to)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return usageError("--to must be a postgres:// URL")
	}
	return nil
}
