package apf

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLockHandsTurnsInQueueOrder: while one goroutine holds the lock, others of several classes
// start waiting one at a time; once it is released they get it in the queue's order, not the
// order they came in.
func TestLockHandsTurnsInQueueOrder(t *testing.T) {
	nodes := func(user string) Class { return Class{Level: System, Flow: Flow{"system-nodes", user}} }
	tests := []struct {
		name    string
		waiters []string // in arrival order
		classes map[string]Class
		want    []string
	}{
		{"exempt first, exempt and limited turns alternating, the nodes' flows round-robin",
			[]string{"a1", "a2", "b1", "x1", "b2", "x2"},
			map[string]Class{"a1": nodes("a"), "a2": nodes("a"), "b1": nodes("b"), "b2": nodes("b"), "x1": {}, "x2": {}},
			[]string{"x1", "a1", "x2", "b1", "a2", "b2"}},
		{"one flow keeps its order",
			[]string{"a1", "a2", "a3"},
			map[string]Class{"a1": nodes("a"), "a2": nodes("a"), "a3": nodes("a")},
			[]string{"a1", "a2", "a3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Lock
			var got []string // appended under l
			var wg sync.WaitGroup
			_ = l.Lock(t.Context(), Class{})
			for i, name := range tt.waiters {
				wg.Go(func() {
					_ = l.Lock(t.Context(), tt.classes[name])
					got = append(got, name)
					l.Unlock()
				})
				// The next waiter comes only once this one waits: a goroutine that has not run
				// yet is not in the queue.
				for l.Waiting() < i+1 {
					runtime.Gosched()
				}
			}
			l.Unlock()
			wg.Wait()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if l.state.Load() != free || l.Waiting() != 0 {
				t.Errorf("after every turn: state %d, %d waiting", l.state.Load(), l.Waiting())
			}
		})
	}
}

// TestLockExcludes: many goroutines of many classes each add to a counter under the lock; a
// turn given to two at once loses increments (and fails under the race detector).
func TestLockExcludes(t *testing.T) {
	var l Lock
	const goroutines, each = 16, 500
	count := 0
	var wg sync.WaitGroup
	for g := range goroutines {
		c := Class{Level: Level(g % int(numLevels)), Flow: Flow{"s", string(rune('a' + g))}}
		wg.Go(func() {
			for range each {
				_ = l.Lock(t.Context(), c)
				count++
				l.Unlock()
			}
		})
	}
	wg.Wait()
	if count != goroutines*each {
		t.Errorf("count = %d, want %d", count, goroutines*each)
	}
}

func TestUnlockOfUnlockedPanics(t *testing.T) {
	var l Lock
	_ = l.Lock(t.Context(), Class{})
	l.Unlock()
	defer func() {
		if recover() == nil {
			t.Error("Unlock of an unlocked Lock did not panic")
		}
	}()
	l.Unlock()
}

// TestLockUncontendedAllocatesNothing: the lock costs no allocation when nobody waits, as in a
// replay, which drives the server from one goroutine.
func TestLockUncontendedAllocatesNothing(t *testing.T) {
	var l Lock
	c := Class{Level: System, Flow: Flow{"system-nodes", "n"}}
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() { _ = l.Lock(ctx, c); l.Unlock() }); n != 0 {
		t.Errorf("Lock and Unlock allocate %v times, want 0", n)
	}
}

func TestTryLock(t *testing.T) {
	var l Lock
	if !l.TryLock() {
		t.Fatal("TryLock of a free Lock failed")
	}
	if l.TryLock() {
		t.Fatal("TryLock of a held Lock succeeded")
	}
	l.Unlock()
	if !l.TryLock() {
		t.Fatal("TryLock after Unlock failed")
	}
	l.Unlock()
}

// TestLockWaiterWhoseContextEnds: a waiter whose context ends leaves the queue without the
// lock and returns the context's error, while the holder keeps the lock; the waiters behind it
// keep their turns, and once the last waiter left the holder's Unlock frees the lock.
func TestLockWaiterWhoseContextEnds(t *testing.T) {
	nodes := func(user string) Class { return Class{Level: System, Flow: Flow{"system-nodes", user}} }
	tests := []struct {
		name      string
		waiters   []string // in arrival order
		cancelled string
		want      []string // the turns, of the waiters that stayed
	}{
		{"the only waiter", []string{"a1"}, "a1", nil},
		// Flow a keeps its turn: a2 takes it, as in APF, where a request that leaves its queue
		// does not move the queue's virtual time on.
		{"the first of three", []string{"a1", "b1", "a2"}, "a1", []string{"a2", "b1"}},
		{"the middle one", []string{"a1", "b1", "a2"}, "b1", []string{"a1", "a2"}},
		{"the last one", []string{"a1", "b1", "a2"}, "a2", []string{"a1", "b1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Lock
			var got []string // appended under l
			var wg sync.WaitGroup
			ctx, cancel := context.WithCancel(t.Context())
			var cancelledErr error
			_ = l.Lock(t.Context(), Class{})
			for i, name := range tt.waiters {
				wg.Go(func() {
					if name == tt.cancelled {
						cancelledErr = l.Lock(ctx, nodes(name[:1]))
						if cancelledErr == nil {
							l.Unlock()
						}
						return
					}
					if err := l.Lock(t.Context(), nodes(name[:1])); err != nil {
						t.Errorf("%s: %v", name, err)
						return
					}
					got = append(got, name)
					l.Unlock()
				})
				for l.Waiting() < i+1 {
					runtime.Gosched()
				}
			}
			cancel()
			for l.Waiting() > len(tt.waiters)-1 {
				runtime.Gosched()
			}
			if l.TryLock() {
				t.Error("the lock is free while its holder holds it")
			}
			l.Unlock()
			wg.Wait()
			if !errors.Is(cancelledErr, context.Canceled) {
				t.Errorf("the cancelled waiter's Lock = %v, want context.Canceled", cancelledErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if l.state.Load() != free || l.Waiting() != 0 {
				t.Errorf("after every turn: state %d, %d waiting", l.state.Load(), l.Waiting())
			}
		})
	}
}

// TestLockCancelRacesUnlock: waiters whose contexts end while the holder lets go, at every
// moment relative to it. Whichever comes first, a waiter returns either nil holding the lock or
// its context's error without it, the lock is never held twice (the race detector, and the
// counter), and it ends free with nobody waiting.
func TestLockCancelRacesUnlock(t *testing.T) {
	var l Lock
	const goroutines, each = 8, 300
	count, took := 0, 0
	var wg sync.WaitGroup
	for g := range goroutines {
		c := Class{Level: Level(g % int(numLevels)), Flow: Flow{"s", string(rune('a' + g))}}
		wg.Go(func() {
			for i := range each {
				ctx, cancel := context.WithCancel(t.Context())
				if i%2 == 0 {
					cancel() // already ended: any wait is cancelled
				} else {
					go cancel() // ends at some moment of the wait, or after it
				}
				err := l.Lock(ctx, c)
				switch {
				case err == nil:
					count++
					took++
					l.Unlock()
				case !errors.Is(err, context.Canceled):
					t.Errorf("Lock = %v", err)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	if count != took {
		t.Errorf("count = %d after %d turns", count, took)
	}
	if l.state.Load() != free || l.Waiting() != 0 {
		t.Errorf("at the end: state %d, %d waiting", l.state.Load(), l.Waiting())
	}
}
