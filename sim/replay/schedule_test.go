package replay

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// passes runs the schedule's passes at now and returns the nodes each settles, in order; reached
// says, for a node being settled, which nodes that reaches (another node's write).
func passes(s *schedule, now time.Time, reached map[int][]int) [][]int {
	var out [][]int
	s.begin(now)
	for s.pass() {
		var got []int
		for {
			i, ok := s.take()
			if !ok {
				break
			}
			got = append(got, i)
			for _, j := range reached[i] {
				s.reach(j)
			}
			delete(reached, i)
		}
		out = append(out, got)
	}
	return out
}

func TestSchedulePassesKeepTheNodesOrder(t *testing.T) {
	at := func(s int) time.Time { return vclock.Epoch.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name    string
		wakes   []time.Time // each node's wake; zero: none
		now     time.Time
		reached map[int][]int
		want    [][]int
	}{
		{
			name:  "only the nodes whose wake has come",
			wakes: []time.Time{at(2), at(1), at(3), {}, at(1)},
			now:   at(1),
			want:  [][]int{{1, 4}},
		},
		{
			name:  "no node due",
			wakes: []time.Time{at(2), at(3)},
			now:   at(1),
		},
		{
			name:    "a node reached after its turn waits for the next pass, one before it is settled in this one",
			wakes:   []time.Time{at(5), at(1), at(5), at(5)},
			now:     at(1),
			reached: map[int][]int{1: {0, 3}},
			want:    [][]int{{1, 3}, {0}},
		},
		{
			name:    "a node reached twice in a pass is settled once",
			wakes:   []time.Time{at(1), at(1), at(5)},
			now:     at(1),
			reached: map[int][]int{0: {2}, 1: {2}},
			want:    [][]int{{0, 1, 2}},
		},
		{
			name:    "a node reaching itself is settled again in the next pass",
			wakes:   []time.Time{at(1), at(5)},
			now:     at(1),
			reached: map[int][]int{0: {0}},
			want:    [][]int{{0}, {0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(len(tt.wakes))
			s.end(func(int) time.Time { return time.Time{} }) // nothing touched: no-op
			for i, w := range tt.wakes {
				s.set(i, w)
			}
			got := passes(s, tt.now, tt.reached)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("passes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleEarliestFollowsTheWakes(t *testing.T) {
	at := func(s int) time.Time { return vclock.Epoch.Add(time.Duration(s) * time.Second) }
	s := newSchedule(4)
	if _, ok := s.earliest(); ok {
		t.Fatal("earliest() of nodes without a wake: ok, want none")
	}
	wakes := []time.Time{at(7), at(3), {}, at(5)}
	for i, w := range wakes {
		s.set(i, w)
	}
	if got, ok := s.earliest(); !ok || !got.Equal(at(3)) {
		t.Fatalf("earliest() = %v, %v; want %v", got, ok, at(3))
	}
	// Node 1 is settled at 3s and wakes next at 9s; the others have not moved.
	s.begin(at(3))
	s.pass()
	if i, ok := s.take(); !ok || i != 1 {
		t.Fatalf("take() = %d, %v; want node 1", i, ok)
	}
	if _, ok := s.take(); ok {
		t.Fatal("take() after the only due node: ok, want none")
	}
	s.end(func(i int) time.Time {
		if i != 1 {
			t.Errorf("end() asked again for node %d's wake, which nothing touched", i)
		}
		return at(9)
	})
	for _, want := range []time.Time{at(5), at(7), at(9)} {
		got, ok := s.earliest()
		if !ok || !got.Equal(want) {
			t.Fatalf("earliest() = %v, %v; want %v", got, ok, want)
		}
		i := s.wakes[0]
		s.set(i, time.Time{})
	}
	if _, ok := s.earliest(); ok {
		t.Error("earliest() once every wake is gone: ok, want none")
	}
}
