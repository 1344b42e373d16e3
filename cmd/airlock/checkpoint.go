package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/checkpoint"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/sqlite"
)

func newAuditCheckpointCmd() *cobra.Command {
	var (
		dbPath       string
		sign, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "checkpoint [--new] [--db FILE]",
		Short: "Print the latest signed checkpoint of the audit log",
		Long: `Checkpoint prints the latest checkpoint the server signed: the log's origin,
a sequence number and the hash of the event there, signed with the server's
key (a C2SP signed note). Store each one where whoever holds the database
cannot rewrite it (another machine, object storage with a retention lock, a
git repository, a ticket), with the server's verifier key; later,
'airlock audit verify --checkpoint FILE' proves that the log still holds
that event at that seq: a log truncated below it, or rewritten and
re-chained at or before it, fails.

The server signs one every checkpoint.interval (5m by default) when the log
moved, and at shutdown. --new asks it to sign one now (an admin token).
Reviewers and admins read checkpoints; agents do not.

--json prints the verifier key too. With --db it reads the latest
checkpoint recorded in a database file instead.`,
		Example: `  airlock audit checkpoint > checkpoint-$(date +%Y%m%dT%H%M%S).note
  airlock audit checkpoint --new
  airlock audit checkpoint --json
  airlock audit checkpoint --db airlock.db`,
		Args: argsNone(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sign && dbPath != "" {
				return usageError("--new asks the server to sign; it does not go with --db")
			}
			print := func(ci airlockhttp.CheckpointInfo) error {
				out := cmd.OutOrStdout()
				if asJSON {
					if err := writeJSON(out, ci); err != nil {
						return checkFailed(err)
					}
				}
				if ci.Checkpoint == nil {
					return checkFailed(errors.New("airlock: no checkpoint yet: the server signs one every checkpoint.interval " +
						"(5m by default) when the log moved, and at shutdown; 'airlock audit checkpoint --new' (an admin) signs one now"))
				}
				if !asJSON {
					if _, err := io.WriteString(out, ci.Checkpoint.Note); err != nil {
						return checkFailed(err)
					}
				}
				return nil
			}
			if dbPath == "" {
				c, err := newClient(cmd)
				if err != nil {
					return err
				}
				get := airlockhttp.Checkpoint
				if sign {
					get = airlockhttp.SignCheckpoint
				}
				ci, err := get(cmd.Context(), c)
				if err != nil {
					return serverFailed(c, err)
				}
				return print(ci)
			}
			return withDB(cmd, dbPath, func(db *sqlite.DB) error {
				sc, ok, err := checkpoint.Latest(cmd.Context(), db.Events)
				if err != nil {
					return storeFailed(err)
				}
				var ci airlockhttp.CheckpointInfo
				if ok {
					ci = airlockhttp.CheckpointInfo{Key: sc.Key, Checkpoint: &sc}
				}
				return print(ci)
			})
		},
	}
	f := cmd.Flags()
	dbFlag(f.StringVar, &dbPath)
	f.BoolVar(&sign, "new", false, "ask the server to sign a checkpoint of its head now (an admin token)")
	f.BoolVar(&asJSON, "json", false, "print the verifier key and the checkpoint as JSON")
	return cmd
}

// checkpointFlags are verify's --checkpoint, --key and --key-file.
type checkpointFlags struct {
	files, keys, keyFiles []string
}

func (cf *checkpointFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&cf.files, "checkpoint", nil, "also prove that the log still holds this signed checkpoint (a file; repeat for several)")
	f.StringArrayVar(&cf.keys, "key", nil, "the verifier key that signed the checkpoints (repeat for old keys); default: the server's")
	f.StringArrayVar(&cf.keyFiles, "key-file", nil, "a file of verifier keys, one a line ('#' starts a comment)")
}

// maxCheckpointFile bounds what a --checkpoint file may hold: a checkpoint
// is about 170 bytes.
const maxCheckpointFile = 64 << 10

// checkpointFile is one --checkpoint: its name and its signed note.
type checkpointFile struct {
	name string
	msg  []byte
}

// read reads the checkpoint files and the verifier keys given. A file that
// cannot be read, or a malformed key, is a usage error.
func (cf *checkpointFlags) read() ([]checkpointFile, []string, error) {
	if len(cf.files) == 0 && len(cf.keys)+len(cf.keyFiles) > 0 {
		return nil, nil, usageError("--key and --key-file check the --checkpoint files: name one")
	}
	var files []checkpointFile
	for _, name := range cf.files {
		b, err := readSmallFile(name, maxCheckpointFile)
		if err != nil {
			return nil, nil, usageError("--checkpoint: %v", err)
		}
		files = append(files, checkpointFile{name: name, msg: b})
	}
	keys := cf.keys
	for _, name := range cf.keyFiles {
		b, err := readSmallFile(name, maxCheckpointFile)
		if err != nil {
			return nil, nil, usageError("--key-file: %v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, line)
			}
		}
	}
	if len(cf.keyFiles) > 0 && len(keys) == len(cf.keys) {
		return nil, nil, usageError("--key-file %s holds no verifier key", strings.Join(cf.keyFiles, ", "))
	}
	if len(keys) > 0 {
		if _, err := checkpoint.ParseVerifierKeys(keys); err != nil {
			return nil, nil, usageError("%v", err)
		}
	}
	return files, keys, nil
}

// readSmallFile reads a file of at most limit bytes.
func readSmallFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return b, err
}

// checkpointResult is what verify reports of one --checkpoint.
type checkpointResult struct {
	File    string        `json:"file"`
	Origin  string        `json:"origin,omitempty"`
	Seq     int64         `json:"seq,omitempty"`
	Hash    *airlock.Hash `json:"hash,omitempty"`
	OK      bool          `json:"ok"`
	Kind    string        `json:"kind,omitempty"` // why not: truncated, rewritten, unknown_key, ...
	Problem string        `json:"problem,omitempty"`
}

func (r checkpointResult) String() string {
	if r.OK {
		return fmt.Sprintf("checkpoint %s: ok: the log holds seq %d sha256:%s", r.File, r.Seq, r.Hash)
	}
	return fmt.Sprintf("checkpoint %s: %s", r.File, r.Problem)
}

// checkCheckpoints opens each checkpoint with keys and checks it against a
// log whose chain report is rep. An error means the log could not be read.
func checkCheckpoints(ctx context.Context, files []checkpointFile, keys note.Verifiers, rep airlock.ChainReport,
	events eventsFunc) ([]checkpointResult, error) {
	var out []checkpointResult
	for _, f := range files {
		r := checkpointResult{File: f.name}
		cp, err := checkpoint.Open(f.msg, keys)
		if err == nil {
			r.Origin, r.Seq, r.Hash = cp.Origin, cp.Seq, &cp.Hash
			err = checkpoint.Check(ctx, cp, rep, events)
		}
		var ce *checkpoint.Error
		switch {
		case errors.As(err, &ce):
			r.Kind, r.Problem = ce.Kind, ce.Msg
		case err != nil:
			return nil, err
		default:
			r.OK = true
		}
		out = append(out, r)
	}
	return out, nil
}
