package groupcommit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/groupcommit"
)

// TestCallersShareBatches: callers arriving while a batch runs go together
// in the next one, each with its own result.
func TestCallersShareBatches(t *testing.T) {
	var q groupcommit.Queue[int]
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	run := func(batch []*groupcommit.Op[int]) {
		mu.Lock()
		first := len(sizes) == 0
		sizes = append(sizes, len(batch))
		mu.Unlock()
		if first {
			<-release
		}
		for _, o := range batch {
			o.Err = errors.New(string(rune('a' + o.W)))
		}
	}
	errs := make(chan error, 6)
	go func() { errs <- q.Submit(context.Background(), 0, 10, run) }()
	for len(sizesOf(&mu, &sizes)) == 0 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := 1; i <= 5; i++ {
		wg.Go(func() {
			if err := q.Submit(context.Background(), i, 10, run); err == nil || err.Error() != string(rune('a'+i)) {
				t.Errorf("op %d: %v", i, err)
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the five queue behind the first batch
	close(release)
	wg.Wait()
	if err := <-errs; err == nil || err.Error() != "a" {
		t.Errorf("op 0: %v", err)
	}
	// The five waited together: fewer batches than callers (one, unless
	// a caller was slow to queue).
	got := sizesOf(&mu, &sizes)
	total := 0
	for _, n := range got[1:] {
		total += n
	}
	if got[0] != 1 || total != 5 || len(got) > 3 {
		t.Errorf("batch sizes %v, want [1 5]", got)
	}
}

func sizesOf(mu *sync.Mutex, s *[]int) []int {
	mu.Lock()
	defer mu.Unlock()
	return append([]int(nil), (*s)...)
}

// TestQueuedOpWithdrawn: an op whose context ends while it waits in the
// queue returns its context's error and never runs.
func TestQueuedOpWithdrawn(t *testing.T) {
	var q groupcommit.Queue[string]
	release := make(chan struct{})
	ran := make(chan string, 10)
	run := func(batch []*groupcommit.Op[string]) {
		for _, o := range batch {
			ran <- o.W
		}
		if batch[0].W == "leader" {
			<-release
		}
	}
	done := make(chan error, 1)
	go func() { done <- q.Submit(context.Background(), "leader", 10, run) }()
	<-ran
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := q.Submit(ctx, "late", 10, run); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued op: %v, want its deadline", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(context.Background(), "after", 10, run); err != nil {
		t.Fatal(err)
	}
	close(ran)
	for w := range ran {
		if w == "late" {
			t.Error("the withdrawn op ran")
		}
	}
}

// TestPanicAnswersEveryone: a batch that panics (a bug) fails every other
// caller of the batch instead of leaving them waiting, and the queue goes on.
func TestPanicAnswersEveryone(t *testing.T) {
	var q groupcommit.Queue[int]
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	calls := 0
	run := func(batch []*groupcommit.Op[int]) {
		calls++
		switch calls {
		case 1:
			started <- struct{}{}
			<-release
		case 2:
			panic("bug")
		}
	}
	go q.Submit(context.Background(), 0, 10, run)
	<-started
	// Two callers queue behind the first batch; whichever leads the next
	// one sees the panic, the other an error.
	type outcome struct {
		err      error
		panicked any
	}
	results := make(chan outcome, 2)
	for i := 1; i <= 2; i++ {
		go func() {
			var o outcome
			defer func() { o.panicked = recover(); results <- o }()
			o.err = q.Submit(context.Background(), i, 10, run)
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	a, b := <-results, <-results
	if a.panicked == nil {
		a, b = b, a
	}
	if a.panicked != "bug" || b.panicked != nil || b.err == nil {
		t.Fatalf("the batch that panicked: leader %+v, other %+v; want the panic and an error", a, b)
	}
	if err := q.Submit(context.Background(), 3, 10, run); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
}

// TestClosedQueue: Close waits for the running batch, then refuses.
func TestClosedQueue(t *testing.T) {
	var q groupcommit.Queue[int]
	if !q.Close() || q.Close() {
		t.Fatal("Close reports a first close only")
	}
	if err := q.Submit(context.Background(), 1, 10, func([]*groupcommit.Op[int]) {}); !errors.Is(err, groupcommit.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
