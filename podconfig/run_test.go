package podconfig

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func newConfig(t *testing.T) *Config {
	t.Helper()
	st, err := NewStorage(StorageOptions{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("NewStorage() error = %v", err)
	}
	c, err := New(st)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return c
}

// start runs c until the returned stop is called; stop cancels the context, waits for Run and
// checks that it returned nil.
func start(t *testing.T, c *Config) (ctx context.Context, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return ctx, func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	}
}

// TestConfigurationChannels ports mux_test.go's TestConfigurationChannels and the empty-name panic.
func TestConfigurationChannels(t *testing.T) {
	c := newConfig(t)
	one, again, two := c.Channel("one"), c.Channel("one"), c.Channel("two")
	if one != again {
		t.Errorf("Channel(%q) twice returned different channels", "one")
	}
	if one == two {
		t.Errorf("Channel(%q) and Channel(%q) returned the same channel", "one", "two")
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Channel(%q) did not panic", "")
		}
	}()
	c.Channel("")
}

// TestSimultaneousMerge ports mux_test.go's TestMergeInvoked and TestSimultaneousMerge: each
// source's update is merged as that source's, and both arrive.
func TestSimultaneousMerge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newConfig(t)
		one, two := c.Channel("one"), c.Channel("two")
		_, stop := start(t, c)
		defer stop()
		go func() { one <- upd(SET, "ignored", newPod("a", "ns")) }()
		go func() { two <- upd(SET, "ignored", newPod("b", "ns")) }()
		got := map[string]Update{}
		for range 2 {
			u := <-c.Updates()
			got[u.Source] = u
		}
		want := map[string]Update{
			"one": upd(ADD, "one", storedAt(newPod("a", "ns"), "one", epochSeen)),
			"two": upd(ADD, "two", storedAt(newPod("b", "ns"), "two", epochSeen)),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Updates() mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestOrderPerSource checks that two sources sending concurrently each see their updates merged
// in send order, and that every merge's updates stay together on the output.
func TestOrderPerSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newConfig(t)
		chans := map[string]chan<- Update{"api": c.Channel("api"), "file": c.Channel("file")}
		ctx, stop := start(t, c)
		defer stop()
		const n = 20
		for src, ch := range chans {
			go func() {
				for i := range n {
					// Each SET replaces the previous pod: REMOVE then ADD, except the first.
					p := newPod(fmt.Sprintf("p%02d", i), src)
					select {
					case ch <- upd(SET, src, p):
					case <-ctx.Done():
						return
					}
				}
			}()
		}
		next := map[string]int{}
		for range 2 * n {
			u := <-c.Updates()
			i := next[u.Source]
			if u.Op == REMOVE {
				if want := fmt.Sprintf("p%02d", i-1); i == 0 || u.Pods[0].Name != want {
					t.Fatalf("REMOVE from %s = %s, want %s", u.Source, u.Pods[0].Name, want)
				}
				// The ADD of the same merge must follow at once.
				u = <-c.Updates()
				if u.Op != ADD {
					t.Fatalf("after REMOVE from %s got %v, want the ADD of the same merge", u.Source, u.Op)
				}
			}
			if want := fmt.Sprintf("p%02d", i); u.Op != ADD || u.Pods[0].Name != want {
				t.Fatalf("update from %s = %v %s, want ADD %s", u.Source, u.Op, u.Pods[0].Name, want)
			}
			next[u.Source] = i + 1
		}
		if want := map[string]int{"api": n, "file": n}; !cmp.Equal(want, next) {
			t.Errorf("ADDs received per source = %v, want %v", next, want)
		}
		if !c.SeenAllSources(sets.New("api", "file")) {
			t.Errorf("SeenAllSources(api, file) = false after SETs from both, want true")
		}
	})
}

// TestConfigSync ports the Sync step of TestNewPodAdded: the snapshot follows the ADD in order.
func TestConfigSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newConfig(t)
		ch := c.Channel(testSource)
		ctx, stop := start(t, c)
		defer stop()
		ch <- upd(ADD, testSource, newPod("foo", "new"))
		synctest.Wait()
		if err := c.Sync(ctx); err != nil {
			t.Fatalf("Sync() = %v", err)
		}
		want := []Update{upd(ADD, testSource, stored(newPod("foo", "new"))), upd(SET, AllSource, stored(newPod("foo", "new")))}
		got := []Update{<-c.Updates(), <-c.Updates()}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Updates() mismatch (-want +got):\n%s", diff)
		}
		select {
		case u := <-c.Updates():
			t.Errorf("unexpected extra update %v", u)
		default:
		}
	})
}

// TestBackPressure fills the 50-slot output: the next merge blocks while delivering, the source
// blocks on its send, readiness queries still answer, and cancelling stops everything.
func TestBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newConfig(t)
		ch := c.Channel(testSource)
		other := c.Channel("other")
		ctx, stop := start(t, c)
		var sent atomic.Int32
		go func() {
			for i := range updatesBuffer + 5 {
				u := upd(ADD, testSource, newPod(fmt.Sprint("p", i), "ns"))
				if i == 0 {
					u.Op = SET // so that only the other source keeps SeenAllSources false
				}
				select {
				case ch <- u:
					sent.Add(1)
				case <-ctx.Done():
					return
				}
			}
		}()
		synctest.Wait()
		if got, want := len(c.Updates()), updatesBuffer; got != want {
			t.Errorf("len(Updates()) = %d, want %d", got, want)
		}
		// 50 merges delivered, the 51st received and blocked delivering; the 52nd send waits.
		if got, want := sent.Load(), int32(updatesBuffer+1); got != want {
			t.Errorf("sends completed = %d, want %d", got, want)
		}
		// Another source's listener takes its update but cannot merge it while the turn is held.
		otherDone := make(chan error, 1)
		go func() {
			select {
			case other <- upd(SET, "other"):
				otherDone <- nil
			case <-ctx.Done():
				otherDone <- ctx.Err()
			}
		}()
		synctest.Wait()
		if c.SeenAllSources(sets.New(testSource, "other")) {
			t.Errorf("SeenAllSources() = true while the merge of other waits, want false")
		}
		// Reading one update lets exactly one more merge through.
		<-c.Updates()
		synctest.Wait()
		if got, want := sent.Load(), int32(updatesBuffer+2); got != want {
			t.Errorf("sends completed after one read = %d, want %d", got, want)
		}
		if got, want := len(c.Updates()), updatesBuffer; got != want {
			t.Errorf("len(Updates()) after one read = %d, want %d", got, want)
		}
		stop()
		if err := <-otherDone; err != nil {
			t.Errorf("other source send = %v, want it received before the stop", err)
		}
		if err := c.Sync(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Sync() after stop = %v, want %v", err, context.Canceled)
		}
	})
}

func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newConfig(t)
		ctx, stop := start(t, c)
		synctest.Wait()
		if err := c.Run(ctx); !errors.Is(err, ErrAlreadyRun) {
			t.Errorf("second Run() = %v, want %v", err, ErrAlreadyRun)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Channel(%q) after Run did not panic", "late")
				}
			}()
			c.Channel("late")
		}()
		stop()
	})
}

// TestPodConfigRace ports the kubelet's TestPodConfigRace: registering sources while readiness is
// queried must not race (run with -race).
func TestPodConfigRace(t *testing.T) {
	c := newConfig(t)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 100 {
			c.Channel(fmt.Sprint(i))
		}
	})
	wg.Go(func() {
		for range 100 {
			c.SeenAllSources(sets.New(testSource))
		}
	})
	wg.Wait()
	if c.SeenAllSources(sets.New(testSource)) {
		t.Errorf("SeenAllSources() = true with 100 silent sources, want false")
	}
}
