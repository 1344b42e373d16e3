package notify

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/airlock-dev/airlock"
)

// Defaults of a Notifier.
const (
	DefaultAttempts     = 8
	DefaultFirstRetry   = 5 * time.Second
	DefaultMaxRetry     = 30 * time.Minute
	DefaultConcurrency  = 32
	DefaultPoll         = time.Second
	DefaultTimeout      = 20 * time.Second
	DefaultGather       = 10 * time.Millisecond
	DefaultRemindBefore = 0
)

// Notifier delivers the store's due deliveries through their channels, at
// least once. Several Notifiers (replicas) may share a store: each
// delivery is leased to one at a time.
type Notifier struct {
	Store airlock.Store
	// Channels are the configured channels by name. A delivery for a
	// channel no longer configured is dead at once (retry it once the
	// channel is back).
	Channels map[string]*Spec
	// InboxURL is the inbox's base URL for links; "" for none.
	InboxURL string
	// Attempts is how many attempts a delivery gets before it is dead.
	Attempts int
	// FirstRetry is the wait before the second attempt; each next wait
	// doubles, up to MaxRetry, and is jittered.
	FirstRetry, MaxRetry time.Duration
	// Concurrency bounds the deliveries in flight.
	Concurrency int
	// Poll is how often the store is read for deliveries that came due
	// (retries, reminders, another process's): new ones in this process
	// wake the notifier at once.
	Poll time.Duration
	// Timeout bounds one attempt; the lease on a delivery is twice it.
	Timeout time.Duration
	// Gather is how long the notifier waits, once woken by a new delivery,
	// for others to join it: deliveries claimed and recorded together
	// share the store's commits, which deciding needs. 0 means
	// DefaultGather; negative, no wait.
	Gather time.Duration
	Logger *slog.Logger
}

func (n *Notifier) defaults() {
	if n.Attempts <= 0 {
		n.Attempts = DefaultAttempts
	}
	if n.FirstRetry <= 0 {
		n.FirstRetry = DefaultFirstRetry
	}
	if n.MaxRetry <= 0 {
		n.MaxRetry = DefaultMaxRetry
	}
	if n.Concurrency <= 0 {
		n.Concurrency = DefaultConcurrency
	}
	if n.Poll <= 0 {
		n.Poll = DefaultPoll
	}
	if n.Timeout <= 0 {
		n.Timeout = DefaultTimeout
	}
	if n.Gather == 0 {
		n.Gather = DefaultGather
	}
	if n.Logger == nil {
		n.Logger = slog.New(slog.DiscardHandler)
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight (each
// bounded by Timeout) and returns ctx's error.
func (n *Notifier) Run(ctx context.Context) error {
	n.defaults()
	marks := make(chan airlock.NotificationMark)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		n.record(marks)
	}()
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		close(marks)
		<-recorded
	}()
	slots := make(chan struct{}, n.Concurrency)
	freed := make(chan struct{}, 1)
	for {
		queued, stop := n.Store.DeliveriesQueued()
		free := n.Concurrency - len(slots)
		var claimed []airlock.Notification
		if free > 0 {
			var err error
			claimed, err = n.Store.ClaimNotifications(ctx, free, 2*n.Timeout)
			if err != nil && ctx.Err() == nil {
				n.Logger.Warn("notify: cannot claim deliveries", "err", err)
			}
		}
		for _, d := range claimed {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				marks <- airlock.NotificationMark{ID: d.ID, Claim: d.Attempts, Attempt: n.deliver(context.WithoutCancel(ctx), d)}
				<-slots
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		if len(claimed) > 0 && len(claimed) == free {
			stop()
			// Full: wait for a slot before claiming more.
			select {
			case <-freed:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		t := time.NewTimer(n.Poll)
		woken := false
		select {
		case <-queued:
			woken = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		stop()
		if woken && n.Gather > 0 {
			t := time.NewTimer(n.Gather)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// deliver makes one attempt at d and returns it, to record.
func (n *Notifier) deliver(ctx context.Context, d airlock.Notification) airlock.Attempt {
	var a airlock.Attempt
	if d.Attempts > n.Attempts {
		// The last attempts never reported: their process stopped
		// mid-delivery. A notice that kills its notifier must not do so
		// forever.
		a.Err = fmt.Errorf("attempt %d of %d never reported: the notifier stopped while delivering it", d.Attempts-1, n.Attempts)
	} else {
		a = n.attempt(ctx, d)
	}
	if a.Err != nil {
		if d.Attempts >= n.Attempts || IsPermanent(a.Err) {
			a.Retry = time.Time{}
		} else {
			a.Retry = time.Now().Add(n.backoff(d.Attempts))
		}
	}
	log := n.Logger.With("id", d.ID, "key", d.Key, "channel", d.Channel, "kind", d.Kind, "attempt", d.Attempts)
	switch {
	case a.Err != nil && a.Retry.IsZero():
		log.Error("notify: delivery is dead", "err", a.Err)
	case a.Err != nil:
		log.Warn("notify: delivery failed; it will be retried", "err", a.Err, "retry", a.Retry)
	default:
		log.Debug("notify: delivered")
	}
	return a
}

// maxMarks bounds the attempts recorded in one transaction.
const maxMarks = 256

// record writes the attempts it receives, those that arrive within Gather
// of each other in one transaction, until marks is closed. When a write
// fails (the store is down) the deliveries' leases run out and they are
// attempted again: at least once.
func (n *Notifier) record(marks <-chan airlock.NotificationMark) {
	for m := range marks {
		batch := []airlock.NotificationMark{m}
		t := time.NewTimer(max(n.Gather, 0))
	gather:
		for len(batch) < maxMarks {
			select {
			case m, ok := <-marks:
				if !ok {
					break gather
				}
				batch = append(batch, m)
			case <-t.C:
				break gather
			}
		}
		t.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), n.Timeout)
		if err := n.Store.MarkNotifications(ctx, batch); err != nil {
			n.Logger.Error("notify: cannot record attempts; those deliveries will be attempted again", "attempts", len(batch), "err", err)
		}
		cancel()
	}
}

// attempt builds the delivery and hands it to its channel.
func (n *Notifier) attempt(ctx context.Context, d airlock.Notification) airlock.Attempt {
	spec, ok := n.Channels[d.Channel]
	if !ok {
		return airlock.Attempt{Err: Permanent(fmt.Errorf("no channel %q is configured", d.Channel))}
	}
	ctx, cancel := context.WithTimeout(ctx, n.Timeout)
	defer cancel()
	del := &Delivery{Notification: d, Users: spec.users(d.Recipients)}
	if del.Payload == nil && d.EventSeq > 0 {
		evs, err := n.Store.Events(ctx, airlock.EventFilter{AfterSeq: d.EventSeq - 1, Limit: 1})
		if err != nil {
			return airlock.Attempt{Err: fmt.Errorf("read event %d: %w", d.EventSeq, err)}
		}
		if len(evs) == 1 && evs[0].Seq == d.EventSeq {
			del.Payload = evs[0].Payload
		}
	}
	if d.ApprovalID != "" {
		ap, err := n.Store.Approval(ctx, d.ApprovalID)
		if err != nil {
			return airlock.Attempt{Err: fmt.Errorf("read request %s: %w", d.ApprovalID, err)}
		}
		if d.Kind == airlock.NoticeReminder && ap.Status != airlock.StatusPending {
			return airlock.Attempt{Dropped: "the request is " + string(ap.Status)}
		}
		del.Approval, del.Link = &ap, InboxLink(n.InboxURL, ap.ID)
		if d.Kind != airlock.EventApprovalRequested {
			shown, err := n.Store.Notifications(ctx, airlock.NotificationFilter{
				ApprovalID: d.ApprovalID, Channel: d.Channel, Kind: airlock.EventApprovalRequested, Limit: 1})
			if err != nil {
				return airlock.Attempt{Err: fmt.Errorf("read the request's delivery: %w", err)}
			}
			if len(shown) > 0 {
				del.Shown = shown[0].Ref
			}
		}
	}
	ref, err := spec.Deliver(ctx, del)
	if err != nil {
		return airlock.Attempt{Err: err}
	}
	return airlock.Attempt{Ref: ref}
}

// backoff is the wait after the given failed attempt (1-based): FirstRetry
// doubled per attempt, capped at MaxRetry, then jittered to between half
// and all of it, so that deliveries that failed together do not retry
// together.
func (n *Notifier) backoff(attempt int) time.Duration {
	d := n.FirstRetry
	for i := 1; i < attempt && d < n.MaxRetry; i++ {
		d *= 2
	}
	d = min(d, n.MaxRetry)
	return d/2 + rand.N(d/2+1)
}
