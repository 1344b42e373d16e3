// Package wake is the stores' wake-ups: it wakes the in-process waiters of
// a key when a commit changes it, so that waiting never needs polling.
//
// A key is an approval's ID, the audit log or the deliveries: a waiting
// check returns the moment its request is settled.
package wake

import (
	"slices"
	"sync"
)

// Hub holds the waiters by key. The zero value is ready to use.
type Hub struct {
	mu      sync.Mutex
	waiters map[string][]chan struct{}
}

// Subscribe returns a channel closed at the next change of key, and a func
// that ends the subscription. Subscribe before reading the state waited
// on: a change after the read then always wakes.
func (h *Hub) Subscribe(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	if h.waiters == nil {
		h.waiters = map[string][]chan struct{}{}
	}
	h.waiters[key] = append(h.waiters[key], ch)
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		ws := h.waiters[key]
		if i := slices.Index(ws, ch); i >= 0 {
			ws = slices.Delete(ws, i, i+1)
		}
		if len(ws) == 0 {
			delete(h.waiters, key)
		} else {
			h.waiters[key] = ws
		}
	}
}

// Publish wakes the waiters of keys.
func (h *Hub) Publish(keys []string) {
	if len(keys) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		for _, ch := range h.waiters[k] {
			close(ch)
		}
		delete(h.waiters, k)
	}
}

// PublishAll wakes every waiter, to reread what it waits for: a change
// may have gone unnoticed (a listener was disconnected).
func (h *Hub) PublishAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, ws := range h.waiters {
		for _, ch := range ws {
			close(ch)
		}
		delete(h.waiters, k)
	}
}

// Waiting returns how many subscriptions to key wait for its next change.
func (h *Hub) Waiting(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.waiters[key])
}
