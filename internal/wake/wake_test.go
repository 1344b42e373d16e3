package wake_test

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/wake"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestHub(t *testing.T) {
	var h wake.Hub
	a, stopA := h.Subscribe("a")
	b, stopB := h.Subscribe("b")
	defer stopB()
	h.Publish([]string{"a"})
	if !closed(a) || closed(b) {
		t.Fatal("Publish(a) must wake a's waiters only")
	}
	stopA() // after the wake-up: harmless
	again, stop := h.Subscribe("a")
	stop()
	h.Publish([]string{"a"})
	if closed(again) {
		t.Fatal("an ended subscription was woken")
	}
	c, stopC := h.Subscribe("c")
	defer stopC()
	h.PublishAll()
	if !closed(b) || !closed(c) {
		t.Fatal("PublishAll must wake every waiter")
	}
}
