package apf

import (
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
		{"exempt first, then the nodes' flows round-robin",
			[]string{"a1", "a2", "b1", "x1", "b2", "x2"},
			map[string]Class{"a1": nodes("a"), "a2": nodes("a"), "b1": nodes("b"), "b2": nodes("b"), "x1": {}, "x2": {}},
			[]string{"x1", "x2", "a1", "b1", "a2", "b2"}},
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
			l.Lock(Class{})
			for i, name := range tt.waiters {
				wg.Go(func() {
					l.Lock(tt.classes[name])
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
				l.Lock(c)
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
	l.Lock(Class{})
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
	if n := testing.AllocsPerRun(100, func() { l.Lock(c); l.Unlock() }); n != 0 {
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
