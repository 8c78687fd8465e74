package kubecontainer

import (
	"time"

	"k8s.io/utils/clock"
)

// The kubelet's back-off constants: crash-loop restarts and image pulls both start at
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
// event restarts from the initial duration. The kubelet keeps one for crash loops (kl.backOff,
// shared by every pod and passed to the runtime's SyncPod) and the runtime keeps one for image
// pulls.
//
// A Backoff is a core: it is driven by one goroutine and has no lock.
type Backoff struct {
	clock        clock.PassiveClock
	initial, max time.Duration
	entries      map[string]backoffEntry
}

type backoffEntry struct {
	backoff    time.Duration
	lastUpdate time.Time
}

// NewBackoff returns a back-off that starts at initial and doubles up to max, on clk. It fails
// without a clock.
func NewBackoff(clk clock.PassiveClock, initial, max time.Duration) (*Backoff, error) {
	if clk == nil {
		return nil, ErrNoClock
	}
	return &Backoff{clock: clk, initial: initial, max: max, entries: map[string]backoffEntry{}}, nil
}

// NextAt records one more failure of id whose reference time is eventTime, at the instant now: a
// new or expired entry starts at the initial back-off, an existing one doubles, capped at the
// maximum. The runtime passes the virtual instant a step of a sync happens, which can be later
// than the clock when earlier steps took time.
func (b *Backoff) NextAt(id string, eventTime, now time.Time) {
	e, ok := b.entries[id]
	if !ok || b.expired(eventTime, e.lastUpdate) {
		e.backoff = b.initial
	} else {
		e.backoff = min(2*e.backoff, b.max)
	}
	e.lastUpdate = now
	b.entries[id] = e
}

// IsInBackOffSinceAt reports whether, at the instant now, less than id's current back-off has
// passed since eventTime. It is false for an unknown or expired entry.
func (b *Backoff) IsInBackOffSinceAt(id string, eventTime, now time.Time) bool {
	e, ok := b.entries[id]
	if !ok || b.expired(eventTime, e.lastUpdate) {
		return false
	}
	return now.Sub(eventTime) < e.backoff
}

// IsInBackOffSinceUpdate reports whether less than id's current back-off lies between its last
// update and eventTime. The image puller asks it with eventTime = now.
func (b *Backoff) IsInBackOffSinceUpdate(id string, eventTime time.Time) bool {
	e, ok := b.entries[id]
	if !ok || b.expired(eventTime, e.lastUpdate) {
		return false
	}
	return eventTime.Sub(e.lastUpdate) < e.backoff
}

// Get returns id's current back-off, zero for an unknown key.
func (b *Backoff) Get(id string) time.Duration { return b.entries[id].backoff }

// LastUpdate returns when id's back-off was last updated, zero for an unknown key.
func (b *Backoff) LastUpdate(id string) time.Time { return b.entries[id].lastUpdate }

// GC forgets every entry not updated for more than twice the maximum back-off. The kubelet calls
// it from HandlePodCleanups.
func (b *Backoff) GC() {
	now := b.clock.Now()
	for id, e := range b.entries {
		if now.Sub(e.lastUpdate) > 2*b.max {
			delete(b.entries, id)
		}
	}
}

// Len returns how many keys the back-off tracks.
func (b *Backoff) Len() int { return len(b.entries) }

// expired is flowcontrol's rule: an entry is stable again when the event is more than twice the
// maximum back-off after its last update.
func (b *Backoff) expired(eventTime, lastUpdate time.Time) bool {
	return eventTime.Sub(lastUpdate) > 2*b.max
}
