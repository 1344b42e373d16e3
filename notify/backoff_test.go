package notify

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	n := &Notifier{FirstRetry: time.Second, MaxRetry: time.Minute}
	for _, tc := range []struct {
		attempt int
		full    time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {6, 32 * time.Second}, {7, time.Minute}, {40, time.Minute}} {
		for range 200 {
			if d := n.backoff(tc.attempt); d < tc.full/2 || d > tc.full {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", tc.attempt, d, tc.full/2, tc.full)
			}
		}
	}
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[n.backoff(5)] = true
	}
	if len(seen) < 10 {
		t.Errorf("backoff(5) took %d values in 50 draws: not jittered", len(seen))
	}
}
