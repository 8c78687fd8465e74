package vclock

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Epoch is the wall-clock instant a replay starts at. A fixed value keeps every timestamp that
// reaches the trace or the fake API server identical from run to run.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Clock is a passive clock that only moves when Set or Advance is called.
type Clock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

var _ clock.PassiveClock = (*Clock)(nil)

// New returns a Clock reading start.
func New(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the current virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since returns the virtual time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration {
	return c.Now().Sub(t)
}

// Set moves the clock to t. Moving backwards is a programming error in the engine and panics,
// because every core relies on time never going back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Before(c.now) {
		panic("vclock: time moved backwards from " + c.now.String() + " to " + t.String())
	}
	c.now = t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.Set(c.Now().Add(d))
}
