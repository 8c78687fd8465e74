package workqueue

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// newQueue returns an empty Queue on clk, failing the test on an error.
func newQueue(t *testing.T, clk *vclock.Clock) *Queue {
	t.Helper()
	q, err := New(Options{Clock: clk})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return q
}

func TestNewRequiresClock(t *testing.T) {
	q, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) || !strings.Contains(err.Error(), "Clock") {
		t.Errorf("New(Options{}) = %v, %v, want an error wrapping minikubelet.ErrMissingOption naming Clock", q, err)
	}
}

// TestGetWork ports the kubelet's work_queue_test.go TestGetWork.
func TestGetWork(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	q := newQueue(t, clk)
	q.Enqueue("foo1", -time.Minute)
	q.Enqueue("foo2", -time.Minute)
	q.Enqueue("foo3", time.Minute)
	q.Enqueue("foo4", time.Minute)

	steps := []struct {
		advance time.Duration
		want    []types.UID
	}{
		{want: []types.UID{"foo1", "foo2"}},
		{want: nil},
		{advance: time.Hour, want: []types.UID{"foo3", "foo4"}},
		{want: nil},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		if diff := cmp.Diff(s.want, q.GetWork()); diff != "" {
			t.Errorf("step %d: GetWork() mismatch (-want +got):\n%s", i, diff)
		}
	}
	if got := q.Len(); got != 0 {
		t.Errorf("Len() = %d, want 0", got)
	}
}

func TestEnqueueLastWriteWins(t *testing.T) {
	tests := []struct {
		name         string
		first, again time.Duration
		advance      time.Duration
		want         []types.UID
	}{
		{name: "later overwrites sooner", first: time.Second, again: time.Minute, advance: 2 * time.Second, want: nil},
		{name: "sooner overwrites later", first: time.Minute, again: time.Second, advance: 2 * time.Second, want: []types.UID{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			q := newQueue(t, clk)
			q.Enqueue("a", tt.first)
			q.Enqueue("a", tt.again)
			if got := q.Len(); got != 1 {
				t.Errorf("Len() = %d, want 1", got)
			}
			clk.Advance(tt.advance)
			if diff := cmp.Diff(tt.want, q.GetWork()); diff != "" {
				t.Errorf("GetWork() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetWorkIsStrictlyBefore(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	q := newQueue(t, clk)
	q.Enqueue("zero", 0)
	if got := q.GetWork(); len(got) != 0 {
		t.Errorf("GetWork() at the enqueue instant = %v, want nothing", got)
	}
	if due, ok := q.NextDue(); !ok || !due.Equal(vclock.Epoch) {
		t.Errorf("NextDue() = %v, %v, want %v, true", due, ok, vclock.Epoch)
	}
	clk.Advance(time.Nanosecond)
	if diff := cmp.Diff([]types.UID{"zero"}, q.GetWork()); diff != "" {
		t.Errorf("GetWork() one nanosecond later mismatch (-want +got):\n%s", diff)
	}
	if _, ok := q.NextDue(); ok {
		t.Error("NextDue() on an empty queue = true, want false")
	}
}

func TestGetWorkIsSorted(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	q := newQueue(t, clk)
	var want []types.UID
	for i := 20; i > 0; i-- {
		q.Enqueue(types.UID(fmt.Sprintf("uid-%02d", i)), -time.Second)
	}
	for i := 1; i <= 20; i++ {
		want = append(want, types.UID(fmt.Sprintf("uid-%02d", i)))
	}
	if diff := cmp.Diff(want, q.GetWork()); diff != "" {
		t.Errorf("GetWork() mismatch (-want +got):\n%s", diff)
	}
}

func ExampleQueue() {
	clk := vclock.New(vclock.Epoch)
	q, err := New(Options{Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	q.Enqueue("pod-b", 0)
	q.Enqueue("pod-a", 0)
	fmt.Println(q.GetWork()) // nothing is due strictly before the enqueue instant
	clk.Advance(time.Second)
	fmt.Println(q.GetWork())
	// Output:
	// []
	// [pod-a pod-b]
}

// TestEntries lists the queue earliest first, ties by UID, and takes nothing from it.
func TestEntries(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	q := newQueue(t, clk)
	q.Enqueue("b", time.Minute)
	q.Enqueue("c", time.Second)
	q.Enqueue("a", time.Minute)
	want := []Entry{
		{UID: "c", Due: vclock.Epoch.Add(time.Second)},
		{UID: "a", Due: vclock.Epoch.Add(time.Minute)},
		{UID: "b", Due: vclock.Epoch.Add(time.Minute)},
	}
	if diff := cmp.Diff(want, q.Entries()); diff != "" {
		t.Errorf("Entries() mismatch (-want +got):\n%s", diff)
	}
	if got := q.Len(); got != 3 {
		t.Errorf("Len() after Entries() = %d, want 3", got)
	}
	if got := newQueue(t, clk).Entries(); len(got) != 0 {
		t.Errorf("Entries() of an empty queue = %v, want none", got)
	}
}

// TestGetWorkMatchesAWalk drives the queue through a seeded history of enqueues (new UIDs, and
// UIDs moved earlier and later) and clock steps, and checks every GetWork against a walk of
// every entry, which the queue does not make: it looks only at its due entries, and drops those
// a later Enqueue replaced. Past the last due time, nothing is left behind.
func TestGetWorkMatchesAWalk(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	q := newQueue(t, clk)
	model := map[types.UID]time.Time{}
	rnd := rand.New(rand.NewPCG(22, 10000))
	got, skipped := 0, 0
	for i := range 5000 {
		switch rnd.IntN(4) {
		case 0, 1:
			uid := types.UID(fmt.Sprintf("uid-%02d", rnd.IntN(40)))
			delay := time.Duration(rnd.IntN(120)-10) * time.Second
			q.Enqueue(uid, delay)
			model[uid] = clk.Now().Add(delay)
		case 2:
			clk.Advance(time.Duration(rnd.IntN(5)) * time.Second)
		case 3:
			var want []types.UID
			for uid, due := range model {
				if due.Before(clk.Now()) {
					want = append(want, uid)
					delete(model, uid)
				}
			}
			slices.Sort(want)
			if len(want) == 0 {
				skipped++
			}
			got += len(want)
			if diff := cmp.Diff(want, q.GetWork()); diff != "" {
				t.Fatalf("step %d: GetWork() mismatch (-walk +queue):\n%s", i, diff)
			}
			if q.Len() != len(model) {
				t.Fatalf("step %d: Len() = %d, want %d", i, q.Len(), len(model))
			}
		}
	}
	if got == 0 || skipped == 0 {
		t.Errorf("the history handed out %d UIDs and had %d calls with nothing due: want both", got, skipped)
	}
	clk.Advance(time.Hour)
	if n := len(q.GetWork()); n != len(model) {
		t.Errorf("GetWork() past every due time took %d UIDs, want %d", n, len(model))
	}
	if q.Len() != 0 || len(q.byDue) != 0 {
		t.Errorf("after every due time: Len() = %d and %d due entries kept, want none", q.Len(), len(q.byDue))
	}
}
