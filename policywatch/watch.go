// Package policywatch keeps a gate's policy stack in step with its files:
// each change is checked, audited and only then put in force.
package policywatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/gate"
	airlockhttp "github.com/airlock-dev/airlock/http"
	"github.com/airlock-dev/airlock/shell"
)

// DefaultInterval is how often Run checks the files when Interval is 0.
const DefaultInterval = time.Second

// Log attribute keys of the policy watcher.
const (
	attrPolicyReason  = "reason"
	attrPolicyFiles   = "files"
	attrPolicyProblem = "problem"
	attrPolicyError   = "err"
)

// Watcher keeps a gate's stack in step with policy files: on a change
// or SIGHUP the whole stack is reloaded, and swapped in atomically only if
// every file loads and the stack's tests pass; a broken policy is reported
// and the previous stack stays in force. Each change is audited
// (policy.changed) BEFORE it takes effect: if it cannot be recorded, the
// old stack stays.
//
// A refused reload is not only logged (every file:line:col problem): it is
// audited (policy.reload_refused, with the errors and the hashes of the
// files on disk and of the stack in force), counted
// (airlock_policy_reload_refused_total), and the watcher is stale
// (airlock_policy_stale, State) until a reload succeeds or the files are
// put back as they were, so that nobody believes a policy is in force that
// is not.
type Watcher struct {
	// Files are the policy files from the top layer down. Empty: the
	// built-in starter policy, never reloaded.
	Files []string
	// Gate is the gate whose stack is kept in step. Nil: Start creates it.
	Gate *gate.Gate
	// Log records every change of stack. Required.
	Log airlock.AuditLog
	// Logger reports reloads and refused policies; nil discards.
	Logger *slog.Logger
	// Interval is how often Run checks the files; 0: DefaultInterval.
	Interval time.Duration

	// Check, when set, vets a stack beyond its own checks (the channels
	// its rules notify exist); a stack it refuses is not enforced.
	Check func([]*gate.Policy) error
	// Metrics, when set, is where Start registers the watcher's metrics.
	Metrics prometheus.Registerer
	// Now is the clock of refusals; nil: time.Now.
	Now func() time.Time

	mu      sync.Mutex             // serialises loads
	loaded  *loadedStack           // checked by Load, put in force by Start
	current []airlock.PolicySource // the stack in force, as audited
	seen    []fileStat             // the files as last loaded (or refused), for Run's cheap check
	pending []fileStat             // the files as changed since seen, waiting to settle

	files    atomic.Pointer[airlockhttp.PolicyFiles] // what State reports: a copy, replaced whole
	refusals prometheus.Counter                      // refused reloads (torn reads aside)
}

// fileStat is what Run compares before reading a file: a change of size or
// modification time (or of existence) triggers a reload, which compares
// hashes.
type fileStat struct {
	size    int64
	modTime time.Time
	missing bool
}

func statFiles(files []string) []fileStat {
	out := make([]fileStat, len(files))
	for i, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			out[i].missing = true
			continue
		}
		out[i] = fileStat{size: fi.Size(), modTime: fi.ModTime()}
	}
	return out
}

// State reports the files of the stack in force and, while the files on
// disk were refused, what they are. Safe to call at any time, without
// waiting for a reload under way.
func (w *Watcher) State() airlockhttp.PolicyFiles {
	if f := w.files.Load(); f != nil {
		return *f
	}
	return airlockhttp.PolicyFiles{}
}

// registerMetrics creates the watcher's metrics, and registers them with
// w.Metrics when set.
func (w *Watcher) registerMetrics() error {
	w.refusals = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "airlock_policy_reload_refused_total",
		Help: "Reloads of the policy files that were refused (a file that does not load, failing policy tests, an unaudited change): the previous stack stayed in force.",
	})
	if w.Metrics == nil {
		return nil
	}
	stale := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "airlock_policy_stale",
		Help: "1 while the policy files on disk are not the stack in force (their last reload was refused), else 0.",
	}, func() float64 {
		if w.State().Stale != nil {
			return 1
		}
		return 0
	})
	for _, c := range []prometheus.Collector{w.refusals, stale} {
		if err := w.Metrics.Register(c); err != nil {
			return fmt.Errorf("policy watcher metrics: %w", err)
		}
	}
	return nil
}

func (w *Watcher) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return w.Logger
}

// Start loads the stack (the starter policy when there are no files),
// audits it with reason "start" and returns the gate enforcing it (w.Gate,
// created if nil). It fails, leaving w.Gate unchanged, if a file does not
// load, the stack's tests fail or the change cannot be audited.
func (w *Watcher) Start(ctx context.Context) (*gate.Gate, error) {
	if w.Log == nil {
		return nil, errors.New("policy watcher: no audit log")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refusals == nil {
		if err := w.registerMetrics(); err != nil {
			return nil, err
		}
	}
	l := w.loaded
	w.loaded = nil
	if l == nil {
		var err error
		if l, err = w.load(); err != nil {
			return nil, err
		}
	}
	if err := w.audit(ctx, "start", l.sources); err != nil {
		return nil, err
	}
	gate := l.gate
	if w.Gate != nil {
		if err := w.Gate.Replace(l.layers...); err != nil {
			return nil, stackError(err)
		}
		gate = w.Gate
	}
	w.Gate, w.current, w.seen = gate, l.sources, l.stats
	w.files.Store(&airlockhttp.PolicyFiles{InForce: l.sources})
	w.logger().Info("policy stack loaded", attrPolicyReason, "start", attrPolicyFiles, describeSources(l.sources))
	return gate, nil
}

// loadedStack is a stack read and checked, not yet in force.
type loadedStack struct {
	layers  []*gate.Policy
	sources []airlock.PolicySource
	stats   []fileStat
	gate    *gate.Gate
}

// Load reads the stack and checks it — every file loads, its tests pass,
// Check accepts it — without recording anything; Start then puts it in
// force. The server loads before it makes anything on disk, so that a
// broken policy leaves no data directory, database or key behind.
func (w *Watcher) Load() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, err := w.load()
	if err != nil {
		return err
	}
	w.loaded = l
	return nil
}

func (w *Watcher) load() (*loadedStack, error) {
	l := &loadedStack{stats: statFiles(w.Files)}
	if len(w.Files) == 0 {
		p := gate.StarterPolicy()
		l.layers = []*gate.Policy{p}
		l.sources = []airlock.PolicySource{{Name: p.Name(), File: p.File(), Layer: p.Layer(), SHA256: Hash(gate.StarterPolicySource)}}
	} else {
		var err error
		if l.layers, l.sources, err = loadStack(w.Files); err != nil {
			return nil, err
		}
	}
	gate, err := gate.New(shell.Analyser{}, l.layers...) // checks the stack's order and runs its tests
	if err != nil {
		return nil, stackError(err)
	}
	l.gate = gate
	if w.Check != nil {
		if err := w.Check(l.layers); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Reload reloads the stack from the files for reason ("file changed",
// "SIGHUP", ...). It does nothing and returns false when every file's hash
// is unchanged. Otherwise the new stack must load and pass its tests, and
// its change must be audited, before the gate enforces it; on any failure
// the error is logged, problem by problem, and returned, and the previous
// stack stays in force. Start must have succeeded.
func (w *Watcher) Reload(ctx context.Context, reason string) (changed bool, err error) {
	if len(w.Files) == 0 {
		return false, nil // the starter policy never changes
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.Gate == nil {
		return false, errors.New("policy watcher: Reload before Start")
	}
	log := w.logger().With(attrPolicyReason, reason)
	before := statFiles(w.Files) // before reading: a change after this is seen next time
	w.seen, w.pending = before, nil
	srcs, sources, err := readStack(w.Files)
	if err == nil && !sameStats(statFiles(w.Files), before) {
		// Torn read: a file was being written. The next poll retries; this
		// is not a refusal of what the files say.
		w.seen = nil
		err = errors.New("a policy file changed while it was read; it is read again once it settles " +
			"(write policy files atomically: a temporary file, then rename)")
		log.Warn("policy reload deferred", attrPolicyError, err)
		return false, err
	}
	if err == nil && sameBytes(sources, w.current) {
		if w.State().Stale != nil {
			log.Info("the policy files on disk are the ones in force again", attrPolicyFiles, describeSources(w.current))
			w.files.Store(&airlockhttp.PolicyFiles{InForce: w.current})
		}
		return false, nil
	}
	var layers []*gate.Policy
	if err == nil {
		layers, err = parseStack(w.Files, srcs, sources)
	}
	if err == nil {
		_, err = gate.New(shell.Analyser{}, layers...) // the checks Replace makes, before auditing
		err = stackError(err)
	}
	if err == nil && w.Check != nil {
		err = w.Check(layers)
	}
	if err == nil {
		err = w.audit(ctx, reason, sources)
	}
	if err == nil {
		// The checks passed above, so this fails only on a bug: the event
		// then records a change that did not happen, never the reverse.
		err = stackError(w.Gate.Replace(layers...))
	}
	if err != nil {
		probs := Problems(err)
		for _, p := range probs {
			log.Error("policy problem", attrPolicyProblem, p)
		}
		log.Error("policy reload refused: the previous policies stay in force", attrPolicyError, err)
		w.refused(ctx, log, reason, probs, sources)
		return false, err
	}
	w.current = sources
	w.files.Store(&airlockhttp.PolicyFiles{InForce: sources})
	log.Info("policy stack reloaded", attrPolicyFiles, describeSources(sources))
	return true, nil
}

// refused makes a refused reload visible: audited as
// policy.reload_refused, then counted and the watcher stale — in that
// order, so that whoever sees the state finds the event. A refusal that
// cannot be audited (the store is down, which may be why the reload was
// refused) is logged; the metric and the state still say it.
func (w *Watcher) refused(ctx context.Context, log *slog.Logger, reason string, probs []string, read []airlock.PolicySource) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	onDisk := make([]airlock.PolicyFileOnDisk, len(read))
	for i, s := range read {
		onDisk[i] = airlock.PolicyFileOnDisk{File: s.File, SHA256: s.SHA256}
	}
	rec := airlock.PolicyReloadRefusal{Reason: reason, Errors: probs, Files: onDisk, InForce: w.current}
	if _, err := w.Log.Append(ctx, rec.Record()); err != nil {
		log.Error("cannot audit the refused policy reload", attrPolicyError, err)
	}
	w.refusals.Inc()
	w.files.Store(&airlockhttp.PolicyFiles{InForce: w.current, Stale: &airlockhttp.StalePolicy{
		Refused: now(), Reason: reason, Errors: probs, OnDisk: onDisk, InForce: w.current,
	}})
}

// Run reloads the stack whenever a file's size or modification time
// changes and on every value received from hup, until ctx ends. Files are
// checked every Interval, and a change is loaded once it has settled —
// unchanged for one interval — so that a file being written in place is
// not read half-written (Reload then compares hashes). Failures are logged
// by Reload; the previous stack stays in force. A change that keeps both
// size and modification time is only seen on SIGHUP.
func (w *Watcher) Run(ctx context.Context, hup <-chan os.Signal) {
	interval := w.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	var tick <-chan time.Time
	if len(w.Files) > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if len(w.Files) == 0 {
				w.logger().Info("SIGHUP: the built-in starter policy is in force; there is no file to reload")
				continue
			}
			_, _ = w.Reload(ctx, "SIGHUP")
		case <-tick:
			if w.settledChange() {
				_, _ = w.Reload(ctx, "file changed")
			}
		}
	}
}

// settledChange reports whether a file's size, modification time or
// existence differs from when it was last loaded, and has stayed the same
// since the previous call.
func (w *Watcher) settledChange() bool {
	now := statFiles(w.Files)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case sameStats(now, w.seen):
		w.pending = nil
		return false
	case w.pending != nil && sameStats(now, w.pending):
		return true
	}
	w.pending = now
	return false
}

func sameStats(a, b []fileStat) bool {
	return slices.EqualFunc(a, b, func(x, y fileStat) bool {
		return x.size == y.size && x.modTime.Equal(y.modTime) && x.missing == y.missing
	})
}

// audit records a change of stack to sources.
func (w *Watcher) audit(ctx context.Context, reason string, sources []airlock.PolicySource) error {
	rec := airlock.PolicyChange{Reason: reason, Layers: sources, Previous: w.current}.Record()
	if _, err := w.Log.Append(ctx, rec); err != nil {
		return fmt.Errorf("audit the policy change (%s): %w", reason, err)
	}
	return nil
}

// loadStack reads each policy file once, hashes its bytes and loads it
// (parsing it and running its own tests). It reports every problem of
// every file. It does not check the stack as a whole (see gate.New).
func loadStack(files []string) ([]*gate.Policy, []airlock.PolicySource, error) {
	srcs, sources, err := readStack(files)
	if err != nil {
		return nil, nil, err
	}
	layers, err := parseStack(files, srcs, sources)
	if err != nil {
		return nil, nil, err
	}
	return layers, sources, nil
}

// readStack reads every file and returns its bytes and a source with its
// file and hash (name and layer are set by parseStack). On an error the
// sources are still those of every file, with no hash for a file that
// could not be read: a refusal reports what is on disk.
func readStack(files []string) ([][]byte, []airlock.PolicySource, error) {
	srcs := make([][]byte, len(files))
	sources := make([]airlock.PolicySource, len(files))
	var errs []error
	for i, f := range files {
		sources[i].File = f
		b, err := readPolicyFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		srcs[i] = b
		sources[i].SHA256 = Hash(b)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, sources, err
	}
	return srcs, sources, nil
}

func readPolicyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // a *PathError names the file
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, gate.MaxPolicyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil // LoadPolicy reports a file over the limit
}

// parseStack loads each file's bytes, filling in the sources' names and
// layers.
func parseStack(files []string, srcs [][]byte, sources []airlock.PolicySource) ([]*gate.Policy, error) {
	layers := make([]*gate.Policy, len(files))
	var errs []error
	for i, f := range files {
		p, err := gate.LoadPolicy(f, srcs[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		layers[i] = p
		sources[i].Name, sources[i].Layer = p.Name(), p.Layer()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return layers, nil
}

// stackError makes an error of the gate readable (*airlock.Error prints
// its code otherwise); policy errors, with their positions, stay as they
// are.
func stackError(err error) error {
	var pe *gate.PolicyError
	var ae *airlock.Error
	switch {
	case err == nil, errors.As(err, &pe):
		return err
	case errors.As(err, &ae):
		return errors.New(ae.Message)
	}
	return err
}

// Problems lists an error's problems one by one: each file:line:col of a
// policy error, each error joined into err.
func Problems(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	}
	var pe *gate.PolicyError
	if errors.As(err, &pe) {
		out := make([]string, len(pe.Problems))
		for i, p := range pe.Problems {
			out[i] = p.String()
		}
		return out
	}
	return strings.Split(err.Error(), "\n")
}

// sameBytes reports whether two stacks are the same files with the same
// hashes (a's names and layers may not be known yet).
func sameBytes(a, b []airlock.PolicySource) bool {
	return slices.EqualFunc(a, b, func(x, y airlock.PolicySource) bool { return x.File == y.File && x.SHA256 == y.SHA256 })
}

func describeSources(sources []airlock.PolicySource) string {
	parts := make([]string, len(sources))
	for i, s := range sources {
		parts[i] = fmt.Sprintf("%s (%s policy %s, sha256 %.12s)", s.File, s.Layer, s.Name, s.SHA256)
	}
	return strings.Join(parts, ", ")
}

// Hash is a policy file's SHA-256, in hex, as PolicySource.SHA256 holds it.
func Hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
