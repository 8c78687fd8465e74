package apf_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
)

// class is a waiter's class in these tests: its level and flow (the user).
func class(l apf.Level, user string) apf.Class {
	return apf.Class{Level: l, Flow: apf.Flow{Schema: l.String(), Distinguisher: user}}
}

// push is one waiter: its name and class.
type push struct {
	name string
	c    apf.Class
}

func drain[W comparable](q *apf.Queue[W], n int) []W {
	var out []W
	for range n {
		w, ok := q.Pop()
		if !ok {
			break
		}
		out = append(out, w)
	}
	return out
}

func TestQueueOrder(t *testing.T) {
	exempt := apf.Class{}
	tests := []struct {
		name   string
		pushes []push
		want   []string
	}{
		{name: "empty", want: nil},
		{"one flow is first come, first served",
			[]push{{"a1", class(apf.System, "a")}, {"a2", class(apf.System, "a")}, {"a3", class(apf.System, "a")}},
			[]string{"a1", "a2", "a3"}},
		{"an exempt waiter goes first, then exempt and limited turns alternate, exempt first come, first served",
			[]push{{"n1", class(apf.NodeHigh, "n")}, {"x1", exempt}, {"s1", class(apf.System, "s")}, {"x2", apf.Class{Flow: apf.Flow{Schema: "exempt"}}}},
			[]string{"x1", "n1", "x2", "s1"}},
		{"a level's flows take turns in the order they started waiting",
			[]push{
				{"a1", class(apf.System, "a")}, {"a2", class(apf.System, "a")}, {"a3", class(apf.System, "a")},
				{"b1", class(apf.System, "b")}, {"c1", class(apf.System, "c")}, {"c2", class(apf.System, "c")},
			},
			[]string{"a1", "b1", "c1", "a2", "c2", "a3"}},
		{"one user's flows in two schemas are two flows",
			[]push{
				{"a1", apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-controller-manager", Distinguisher: "ns1"}}},
				{"a2", apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-controller-manager", Distinguisher: "ns1"}}},
				{"b1", apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-scheduler", Distinguisher: "ns1"}}},
			},
			[]string{"a1", "b1", "a2"}},
		{"levels take turns by their shares, node-high 40 to system's 30; a tie goes to the older waiter",
			[]push{
				{"s1", class(apf.System, "s")}, {"s2", class(apf.System, "s")}, {"s3", class(apf.System, "s")},
				{"s4", class(apf.System, "s")}, {"s5", class(apf.System, "s")},
				{"n1", class(apf.NodeHigh, "n")}, {"n2", class(apf.NodeHigh, "n")}, {"n3", class(apf.NodeHigh, "n")},
				{"n4", class(apf.NodeHigh, "n")}, {"n5", class(apf.NodeHigh, "n")},
			},
			// Passes (stride 600/40 = 15 and 600/30 = 20): s 0, n 0, n 15, s 20, n 30, s 40,
			// n 45, s 60 (tie with n 60, s waited longer), n 60, then s alone.
			[]string{"s1", "n1", "n2", "s2", "n3", "s3", "n4", "s4", "n5", "s5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q apf.Queue[string]
			for _, p := range tt.pushes {
				q.Push(p.c, p.name)
			}
			if got := q.Len(); got != len(tt.pushes) {
				t.Errorf("Len() = %d after %d pushes", got, len(tt.pushes))
			}
			got := drain(&q, len(tt.pushes)+1)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if q.Len() != 0 {
				t.Errorf("Len() = %d after draining", q.Len())
			}
		})
	}
}

// TestQueueShares checks that over a busy stretch every waiting level gets turns in proportion
// to its shares, whatever its number of flows and waiters.
func TestQueueShares(t *testing.T) {
	tests := []struct {
		name   string
		levels []apf.Level
		flows  int // flows a level
		turns  int
		want   map[apf.Level]int
	}{
		{"node-high, system, catch-all", []apf.Level{apf.NodeHigh, apf.System, apf.CatchAll}, 3, 150,
			map[apf.Level]int{apf.NodeHigh: 80, apf.System: 60, apf.CatchAll: 10}},
		{"every limited level", []apf.Level{apf.NodeHigh, apf.System, apf.LeaderElection, apf.WorkloadHigh, apf.WorkloadLow, apf.GlobalDefault, apf.CatchAll}, 50, 490,
			map[apf.Level]int{apf.NodeHigh: 80, apf.System: 60, apf.LeaderElection: 20, apf.WorkloadHigh: 80, apf.WorkloadLow: 200, apf.GlobalDefault: 40, apf.CatchAll: 10}},
		{"system alone takes every turn", []apf.Level{apf.System}, 1000, 700, map[apf.Level]int{apf.System: 700}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q apf.Queue[apf.Level]
			for i := range 1000 {
				for _, l := range tt.levels {
					q.Push(class(l, fmt.Sprint(i%tt.flows)), l)
				}
			}
			got := map[apf.Level]int{}
			for _, l := range drain(&q, tt.turns) {
				got[l]++
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns a level in %d (-want +got):\n%s", tt.turns, diff)
			}
		})
	}
}

// TestQueueIdleLevelSavesNoCredit: a level that waited for nothing while another took turns
// rejoins at the latest turn's pass, and shares the turns from then on instead of taking a
// burst of them.
func TestQueueIdleLevelSavesNoCredit(t *testing.T) {
	var q apf.Queue[string]
	for i := range 20 {
		q.Push(class(apf.System, "s"), fmt.Sprintf("s%d", i+1))
	}
	if diff := cmp.Diff([]string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10"}, drain(&q, 10)); diff != "" {
		t.Fatalf("system alone (-want +got):\n%s", diff)
	}
	for i := range 10 {
		q.Push(class(apf.NodeHigh, "n"), fmt.Sprintf("n%d", i+1))
	}
	// system's pass is 200, the latest turn's 180: node-high starts at 180 and takes turns at
	// 180 and 195, system at 200, node-high at 210.
	if diff := cmp.Diff([]string{"n1", "n2", "s11", "n3"}, drain(&q, 4)); diff != "" {
		t.Errorf("after node-high joins (-want +got):\n%s", diff)
	}
}

// TestQueueFlowRejoinsLast: a flow that emptied and waits again joins its level's ring last,
// after the flows waiting then (b, then c), and ahead of b's next turn, which b took its place
// for after its first.
func TestQueueFlowRejoinsLast(t *testing.T) {
	var q apf.Queue[string]
	q.Push(class(apf.System, "a"), "a1")
	q.Push(class(apf.System, "b"), "b1")
	q.Push(class(apf.System, "b"), "b2")
	q.Push(class(apf.System, "c"), "c1")
	if diff := cmp.Diff([]string{"a1"}, drain(&q, 1)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	q.Push(class(apf.System, "a"), "a2")
	if diff := cmp.Diff([]string{"b1", "c1", "a2", "b2"}, drain(&q, 5)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestQueueExemptRunIsBounded: a stream of exempt waiters that never ends (an administrator's
// creates keeping the lock busy) takes ExemptRun turns in a row at most while limited waiters
// wait, then a limited waiter takes one, so that a node's lease renewal waits a bounded number
// of turns; with nobody else waiting, exempt waiters take every turn.
func TestQueueExemptRunIsBounded(t *testing.T) {
	exempt := apf.Class{}
	tests := []struct {
		name    string
		limited []push // waiting before the exempt stream starts
		exempts int    // exempt waiters kept waiting: one is pushed after each exempt turn
		turns   int
		// wantAt is the turn (from 1) each limited waiter gets; every other turn is exempt.
		wantAt map[string]int
	}{
		{"no limited waiter: exempt takes every turn", nil, 2, 50, map[string]int{}},
		{"one lease renewal waits ExemptRun exempt turns",
			[]push{{"n1", class(apf.NodeHigh, "n1")}}, 2, 30,
			map[string]int{"n1": apf.ExemptRun + 1}},
		{"limited waiters take every ExemptRun+1-th turn, in the limited order",
			[]push{{"n1", class(apf.NodeHigh, "n1")}, {"n2", class(apf.NodeHigh, "n2")}, {"s1", class(apf.System, "n1")}},
			4, 40,
			// Passes: node-high and system both 0, and n1 is the older waiter; then system at
			// 0 (s1) before node-high at 15 (n2).
			map[string]int{"n1": apf.ExemptRun + 1, "s1": 2 * (apf.ExemptRun + 1), "n2": 3 * (apf.ExemptRun + 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q apf.Queue[string]
			for _, p := range tt.limited {
				q.Push(p.c, p.name)
			}
			for range tt.exempts {
				q.Push(exempt, "x")
			}
			got := map[string]int{}
			for turn := 1; turn <= tt.turns; turn++ {
				w, ok := q.Pop()
				if !ok {
					t.Fatalf("turn %d: the queue is empty", turn)
				}
				if w == "x" {
					q.Push(exempt, "x")
					continue
				}
				got[w] = turn
			}
			if diff := cmp.Diff(tt.wantAt, got); diff != "" {
				t.Errorf("the limited waiters' turns (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueueLimitedShareBesideExempt: with exempt and limited waiters both always waiting, the
// limited levels take one turn in ExemptRun+1, and among them their turns go by their shares.
func TestQueueLimitedShareBesideExempt(t *testing.T) {
	var q apf.Queue[string]
	for i := range 1000 {
		q.Push(class(apf.NodeHigh, fmt.Sprint(i%10)), "node-high")
		q.Push(class(apf.System, fmt.Sprint(i%10)), "system")
	}
	q.Push(apf.Class{}, "exempt")
	const turns = 700 * (apf.ExemptRun + 1)
	got := map[string]int{}
	for range turns {
		w, _ := q.Pop()
		got[w]++
		if w == "exempt" {
			q.Push(apf.Class{}, "exempt")
		}
	}
	want := map[string]int{"exempt": 700 * apf.ExemptRun, "node-high": 400, "system": 300}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// TestQueueRemove: a waiter that leaves before its turn is gone from wherever it waited, the
// others keep their order, and a flow it leaves empty leaves its level's ring (and its place in
// the round-robin) as a flow whose last waiter took its turn does.
func TestQueueRemove(t *testing.T) {
	a, b, c := class(apf.System, "a"), class(apf.System, "b"), class(apf.System, "c")
	exempt := apf.Class{}
	abc := []push{{"a1", a}, {"a2", a}, {"b1", b}, {"c1", c}, {"c2", c}, {"x1", exempt}, {"x2", exempt}}
	tests := []struct {
		name   string
		pushes []push
		remove []push
		gone   []bool // whether each removal finds its waiter
		want   []string
	}{
		{"an exempt waiter", abc, []push{{"x1", exempt}}, []bool{true}, []string{"x2", "a1", "b1", "c1", "a2", "c2"}},
		{"the head of a flow", abc, []push{{"a1", a}}, []bool{true}, []string{"x1", "a2", "x2", "b1", "c1", "c2"}},
		{"the last waiter of a flow, which leaves the ring", abc, []push{{"b1", b}}, []bool{true}, []string{"x1", "a1", "x2", "c1", "a2", "c2"}},
		{"every waiter of the flow at the ring's head", abc, []push{{"a1", a}, {"a2", a}}, []bool{true, true}, []string{"x1", "b1", "x2", "c1", "c2"}},
		{"a waiter not there, or there in another class", abc, []push{{"zz", a}, {"a1", b}, {"a1", exempt}}, []bool{false, false, false},
			[]string{"x1", "a1", "x2", "b1", "c1", "a2", "c2"}},
		{"the only waiter", []push{{"a1", a}}, []push{{"a1", a}}, []bool{true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q apf.Queue[string]
			for _, p := range tt.pushes {
				q.Push(p.c, p.name)
			}
			var gone []bool
			for _, r := range tt.remove {
				gone = append(gone, q.Remove(r.c, r.name))
			}
			if diff := cmp.Diff(tt.gone, gone); diff != "" {
				t.Errorf("removals found (-want +got):\n%s", diff)
			}
			if q.Len() != len(tt.want) {
				t.Errorf("Len() = %d after the removals, want %d", q.Len(), len(tt.want))
			}
			if diff := cmp.Diff(tt.want, drain(&q, len(tt.pushes)+1)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			// The emptied flows are reused: pushing again after the drain keeps the order.
			q.Push(b, "b9")
			q.Push(a, "a9")
			if diff := cmp.Diff([]string{"b9", "a9"}, drain(&q, 3)); diff != "" {
				t.Errorf("after the drain (-want +got):\n%s", diff)
			}
		})
	}
}
