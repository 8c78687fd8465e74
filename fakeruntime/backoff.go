package fakeruntime

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// The back-off constants of the kubelet: crash-loop restarts and image pulls both start at
// backOffPeriod and double up to five minutes.
const (
	// InitialBackoff is the first back-off of a container or image (the kubelet's backOffPeriod).
	InitialBackoff = 10 * time.Second
	// MaxContainerBackoff caps the crash-loop back-off (v1beta1.MaxContainerBackOff).
	MaxContainerBackoff = 300 * time.Second
	// MaxImageBackoff caps the image pull back-off (the kubelet's MaxImageBackOff).
	MaxImageBackoff = 300 * time.Second
)

// Backoff is a per-key exponential back-off with the semantics of client-go's
// flowcontrol.Backoff without jitter: Next starts a key at the initial duration and doubles it up
// to the maximum, and an entry whose last update is more than twice the maximum older than the
// event restarts from the initial duration. The kubelet keeps one for crash loops (shared by
// every pod, passed to SyncPod) and the runtime keeps one for image pulls. It is safe for
// concurrent use.
type Backoff struct {
	clock        clock.PassiveClock
	initial, max time.Duration

	mu      sync.Mutex // guards entries
	entries map[string]backoffEntry
}

type backoffEntry struct {
	backoff    time.Duration
	lastUpdate time.Time
}

// NewBackoff returns the kubelet's crash-loop back-off: 10s doubling to 300s, on clk.
func NewBackoff(clk clock.PassiveClock) *Backoff {
	return newBackoff(clk, InitialBackoff, MaxContainerBackoff)
}

func newBackoff(clk clock.PassiveClock, initial, max time.Duration) *Backoff {
	if clk == nil {
		panic("fakeruntime.NewBackoff: nil clock")
	}
	return &Backoff{clock: clk, initial: initial, max: max, entries: map[string]backoffEntry{}}
}

// Next records one more failure of id whose reference time is eventTime: a new or expired entry
// starts at the initial back-off, an existing one doubles, capped at the maximum.
func (b *Backoff) Next(id string, eventTime time.Time) {
	b.next(id, eventTime, b.clock.Now())
}

// next is Next at the instant now. The runtime calls it at the virtual instant a step of a sync
// happens, which can be later than the clock when earlier steps took time.
func (b *Backoff) next(id string, eventTime, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	if !ok || b.expired(eventTime, e.lastUpdate) {
		e.backoff = b.initial
	} else {
		e.backoff = min(2*e.backoff, b.max)
	}
	e.lastUpdate = now
	b.entries[id] = e
}

// IsInBackOffSince reports whether less than id's current back-off has passed since eventTime.
// It is false for an unknown or expired entry.
func (b *Backoff) IsInBackOffSince(id string, eventTime time.Time) bool {
	return b.inBackOffSince(id, eventTime, b.clock.Now())
}

func (b *Backoff) inBackOffSince(id string, eventTime, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	if !ok || b.expired(eventTime, e.lastUpdate) {
		return false
	}
	return now.Sub(eventTime) < e.backoff
}

// IsInBackOffSinceUpdate reports whether less than id's current back-off lies between its last
// update and eventTime. The image puller asks it with eventTime = now.
func (b *Backoff) IsInBackOffSinceUpdate(id string, eventTime time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[id]
	if !ok || b.expired(eventTime, e.lastUpdate) {
		return false
	}
	return eventTime.Sub(e.lastUpdate) < e.backoff
}

// Get returns id's current back-off, zero for an unknown key.
func (b *Backoff) Get(id string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entries[id].backoff
}

// lastUpdate returns when id's back-off was last updated.
func (b *Backoff) lastUpdate(id string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entries[id].lastUpdate
}

// Reset forgets id.
func (b *Backoff) Reset(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, id)
}

// GC forgets every entry not updated for more than twice the maximum back-off. The kubelet calls
// it from HandlePodCleanups.
func (b *Backoff) GC() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for id, e := range b.entries {
		if now.Sub(e.lastUpdate) > 2*b.max {
			delete(b.entries, id)
		}
	}
}

// Len returns how many keys the back-off tracks.
func (b *Backoff) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}

// expired is flowcontrol's rule: an entry is stable again when the event is more than twice the
// maximum back-off after its last update.
func (b *Backoff) expired(eventTime, lastUpdate time.Time) bool {
	return eventTime.Sub(lastUpdate) > 2*b.max
}
