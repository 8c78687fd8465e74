package kubeletserver_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/minikubelet/minikubelet/kubeletserver"
)

// driver is a node's driving goroutine as the board sees it: it counts its captures, each a
// snapshot taken at the time it is given.
type driver struct {
	b        *kubeletserver.Board
	asks     <-chan struct{}
	captures int
}

func newDriver(t0 time.Time) *driver {
	b := kubeletserver.NewBoard("node-1")
	b.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0})
	return &driver{b: b, asks: b.Demand(500 * time.Millisecond)}
}

// take answers the pending ask, as the sync loop does between passes, with a snapshot at now.
func (d *driver) take(t *testing.T, now time.Time) *kubeletserver.Snapshot {
	t.Helper()
	select {
	case <-d.asks:
	default:
		t.Fatal("the board did not ask for a snapshot")
	}
	var s *kubeletserver.Snapshot
	d.b.Take(func() *kubeletserver.Snapshot {
		d.captures++
		s = &kubeletserver.Snapshot{Node: "node-1", Taken: now}
		return s
	})
	return s
}

// asked reports whether an ask is pending, without taking it.
func (d *driver) asked() bool { return len(d.asks) > 0 }

// get runs Get on a goroutine of its own; the result arrives on the channel.
func get(ctx context.Context, b *kubeletserver.Board, now time.Time) <-chan *kubeletserver.Snapshot {
	out := make(chan *kubeletserver.Snapshot, 1)
	go func() { out <- b.Get(ctx, now) }()
	return out
}

// returned is the result of a Get that has returned, nil for one still waiting.
func returned(c <-chan *kubeletserver.Snapshot) *kubeletserver.Snapshot {
	select {
	case s := <-c:
		return s
	default:
		return nil
	}
}

// TestBoardGetTakesASnapshotAfterTheRequest: a stale snapshot is not returned; the request asks,
// waits for the driver's next capture and gets it. A request made while a capture is under way
// does not get that capture, which may predate it, but the next.
func TestBoardGetTakesASnapshotAfterTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := newDriver(t0)
		first := get(t.Context(), d.b, t0.Add(time.Second))
		synctest.Wait()
		if s := returned(first); s != nil {
			t.Fatalf("Get returned the snapshot taken %v before it was asked for", time.Second)
		}
		var late <-chan *kubeletserver.Snapshot
		var taken *kubeletserver.Snapshot
		<-d.asks
		d.b.Take(func() *kubeletserver.Snapshot {
			// A request in the middle of the capture.
			late = get(t.Context(), d.b, t0.Add(time.Second))
			synctest.Wait()
			taken = &kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(time.Second)}
			return taken
		})
		synctest.Wait()
		if s := returned(first); s != taken {
			t.Errorf("first Get = %v, want the snapshot taken for it", s)
		}
		if s := returned(late); s != nil {
			t.Fatal("a Get made during a capture returned that capture")
		}
		next := d.take(t, t0.Add(2*time.Second))
		synctest.Wait()
		if s := returned(late); s != next {
			t.Errorf("late Get = %v, want the next capture", s)
		}
	})
}

// TestBoardConcurrentGetsShareOneCapture: requests waiting together are answered by one capture.
func TestBoardConcurrentGetsShareOneCapture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := newDriver(t0)
		var gets []<-chan *kubeletserver.Snapshot
		for range 3 {
			gets = append(gets, get(t.Context(), d.b, t0.Add(time.Minute)))
		}
		synctest.Wait()
		s := d.take(t, t0.Add(time.Minute))
		synctest.Wait()
		for i, g := range gets {
			if got := returned(g); got != s {
				t.Errorf("Get %d = %v, want the one capture", i, got)
			}
		}
		if d.captures != 1 || d.asked() {
			t.Errorf("%d captures, ask pending %v; want 1 and none", d.captures, d.asked())
		}
	})
}

// TestBoardReusesAFreshSnapshot: a snapshot younger than the bound is returned without asking.
func TestBoardReusesAFreshSnapshot(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDriver(t0)
	latest, _ := d.b.Latest()
	if got := d.b.Get(t.Context(), t0.Add(499*time.Millisecond)); got != latest || d.asked() {
		t.Errorf("Get = %v, ask pending %v; want the latest snapshot and no ask", got, d.asked())
	}
}

// TestBoardGetReturnsWhenTheRequestEnds: a cancelled request, which the driver never answers,
// returns with the latest snapshot.
func TestBoardGetReturnsWhenTheRequestEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := newDriver(t0)
		latest, _ := d.b.Latest()
		ctx, cancel := context.WithCancel(t.Context())
		g := get(ctx, d.b, t0.Add(time.Minute))
		synctest.Wait()
		if returned(g) != nil {
			t.Fatal("Get returned before it was answered or cancelled")
		}
		cancel()
		synctest.Wait()
		if got := returned(g); got != latest {
			t.Errorf("cancelled Get = %v, want the latest snapshot", got)
		}
	})
}

// TestBoardStop: once the driver stops, waiting requests and later ones get the latest snapshot
// without asking, as from a board nothing drives.
func TestBoardStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		d := newDriver(t0)
		latest, _ := d.b.Latest()
		g := get(t.Context(), d.b, t0.Add(time.Minute))
		synctest.Wait()
		<-d.asks
		d.b.Stop()
		synctest.Wait()
		if got := returned(g); got != latest {
			t.Errorf("waiting Get after Stop = %v, want the latest snapshot", got)
		}
		if got := d.b.Get(t.Context(), t0.Add(time.Hour)); got != latest || d.asked() {
			t.Errorf("Get after Stop = %v, ask pending %v; want the latest snapshot and no ask", got, d.asked())
		}
	})
}

// TestBoardWithoutDemand: a board its driver publishes to (replay's, a test's) returns the latest
// snapshot, however old.
func TestBoardWithoutDemand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := kubeletserver.NewBoard("node-1")
	s := &kubeletserver.Snapshot{Node: "node-1", Taken: t0}
	b.Publish(s)
	if got := b.Get(t.Context(), t0.Add(time.Hour)); got != s {
		t.Errorf("Get = %v, want the published snapshot", got)
	}
}

// TestBoardFollow: Followed is true while a follower is registered; its stop is idempotent.
func TestBoardFollow(t *testing.T) {
	b := kubeletserver.NewBoard("node-1")
	stop1, stop2 := b.Follow(), b.Follow()
	stop1()
	stop1()
	if !b.Followed() {
		t.Error("Followed() = false with one follower left")
	}
	stop2()
	if b.Followed() {
		t.Error("Followed() = true with no follower")
	}
}

// TestBoardRequestWaitsABoundedTime: a request whose capture the driver does not take (its pass
// is held up) gets the latest snapshot after the bound, instead of waiting with the pass.
func TestBoardRequestWaitsABoundedTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		d := newDriver(t0)
		c := get(t.Context(), d.b, t0.Add(time.Second))
		synctest.Wait()
		if s := returned(c); s != nil {
			t.Fatalf("Get() returned at once, taken %v; want it to wait for the capture", s.Taken.Sub(t0))
		}
		time.Sleep(time.Minute) // the driver never takes it
		synctest.Wait()
		s := returned(c)
		if s == nil || !s.Taken.Equal(t0) {
			t.Fatalf("Get() after the driver held its capture back = %v, want the latest snapshot", s)
		}
	})
}
