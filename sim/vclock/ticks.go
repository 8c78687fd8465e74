package vclock

import "time"

// Due reports whether a wake-up at t is due at now. A zero t means no wake-up.
func Due(t, now time.Time) bool { return !t.IsZero() && !t.After(now) }

// NextTick returns the first tick after now on the grid of period that starts at last, dropping
// missed ticks as a Go ticker does. Cores keep their periodic work on such a grid whatever clock
// drives them, so that run and replay tick alike.
func NextTick(last time.Time, period time.Duration, now time.Time) time.Time {
	next := last.Add(period)
	for !next.After(now) {
		next = next.Add(period)
	}
	return next
}

// Earliest returns the earliest of the wake-ups given as (time, ok) pairs, the form every core's
// NextWake returns, and false when none is set.
func Earliest(wakes ...Wake) (time.Time, bool) {
	var w time.Time
	found := false
	for _, x := range wakes {
		if x.OK && (!found || x.At.Before(w)) {
			w, found = x.At, true
		}
	}
	return w, found
}

// Wake is one core's next wake-up: At is meaningful only when OK.
type Wake struct {
	At time.Time
	OK bool
}

// WakeOf packs a NextWake result: vclock.WakeOf(core.NextWake()).
func WakeOf(at time.Time, ok bool) Wake { return Wake{At: at, OK: ok} }
