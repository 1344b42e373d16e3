// Package groupcommit batches concurrent callers' writes into shared
// transactions for the stores (sqlite, postgres): one commit for many.
//
// One commit, and one fsync, for many callers.
//
// There is no writer goroutine: the caller that finds no batch running
// leads one itself — its own op and every op queued meanwhile — so a lone
// caller pays no hand-off between goroutines. Callers arriving while a
// batch commits queue up; when it is done, the leader wakes the first of
// them to lead the next batch, with all the others. An op whose ctx ends
// while it still waits in the queue is withdrawn (ctx's error): a caller
// with a deadline — a chat click that must be answered within seconds —
// is not held behind a stalled batch. Once a batch has taken it, an op is
// waited for even if ctx ends, so that a caller never reports failure for
// a write that then commits unseen.
package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrClosed is Submit's error once Close was called.
var ErrClosed = errors.New("the store is closed")

// Op is one caller's write: Ctx is the caller's context, W what the store
// runs in the batch's transaction, Err the result the batch's runner sets.
type Op[W any] struct {
	Ctx context.Context
	W   W
	Err error
	// wake receives one signal: the op is finished (finished set), or its
	// caller is to lead the next batch.
	wake     chan struct{}
	finished bool
}

// Queue runs ops in batches. The zero value is ready to use.
type Queue[W any] struct {
	mu      sync.Mutex
	queue   []*Op[W] // ops waiting for the next batch
	leading bool     // a batch is running
	closed  bool     // Close was called: no new ops
	idle    *sync.Cond
}

// Submit queues w and returns once the batch that ran it has set its
// result (or once it was withdrawn: ctx's error). A batch is at most limit
// ops; run executes it — every op's Err set — and must not keep the slice.
// If run panics, the ops it did not settle fail, and the panic goes on.
func (q *Queue[W]) Submit(ctx context.Context, w W, limit int, run func(batch []*Op[W])) error {
	o := &Op[W]{Ctx: ctx, W: w, wake: make(chan struct{}, 1)}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.queue = append(q.queue, o)
	if q.leading {
		q.mu.Unlock()
		if err := q.await(o); err != nil {
			return err
		}
		if o.finished {
			return o.Err
		}
		q.mu.Lock() // promoted: lead the next batch
	}
	q.leading = true
	n := min(len(q.queue), max(limit, 1))
	batch := slices.Clone(q.queue[:n]) // o is first: a leader is always the queue's head
	q.queue = slices.Delete(q.queue, 0, n)
	q.mu.Unlock()

	defer q.handOff()
	defer func() {
		// Even on a panic in run (a bug), every other caller of the batch
		// gets an answer, so that none waits forever.
		r := recover()
		for _, o := range batch[1:] {
			if r != nil && o.Err == nil {
				o.Err = fmt.Errorf("write batch failed: %v", r)
			}
			o.finished = true
			o.wake <- struct{}{}
		}
		if r != nil {
			panic(r)
		}
	}()
	run(batch)
	return o.Err
}

// await waits until queued op o is finished or promoted to lead. When its
// ctx ends first and no batch has taken it, it is withdrawn from the queue
// and await returns ctx's error.
func (q *Queue[W]) await(o *Op[W]) error {
	select {
	case <-o.wake:
		return nil
	case <-o.Ctx.Done():
	}
	q.mu.Lock()
	select {
	case <-o.wake: // promoted (handOff signals under q.mu) or finished meanwhile
		q.mu.Unlock()
		return nil
	default:
	}
	if i := slices.Index(q.queue, o); i >= 0 {
		q.queue = slices.Delete(q.queue, i, i+1)
		q.mu.Unlock()
		return o.Ctx.Err()
	}
	q.mu.Unlock()
	<-o.wake // a batch has it: its result stands
	return nil
}

// handOff ends a leader's batch: the first queued op's caller leads the
// next one. It runs deferred, so that even a panic in a batch (a bug) never
// leaves the queue with a leader that will not come back.
func (q *Queue[W]) handOff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) > 0 {
		q.queue[0].wake <- struct{}{}
		return
	}
	q.leading = false
	if q.idle != nil {
		q.idle.Broadcast()
	}
}

// Close refuses new ops and waits until no batch runs. It reports whether
// this call closed the queue (false: it was closed already).
func (q *Queue[W]) Close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	if q.idle == nil {
		q.idle = sync.NewCond(&q.mu)
	}
	for q.leading {
		q.idle.Wait()
	}
	return true
}
