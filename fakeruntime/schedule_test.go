package fakeruntime

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestScheduleOrder checks that the effects run in the order of their instants, the ones of one
// instant in the order they were scheduled, that a cancelled one and a guarded one whose pod's
// generation moved on do not run, and that NextWake names the first that will, over seeded
// random schedules whose effects schedule more.
func TestScheduleOrder(t *testing.T) {
	for seed := range uint64(20) {
		rng, clk, r := seededRuntime(t, seed, 1)
		type planned struct {
			at   time.Time
			id   int
			held *transition
			gen  bool // guarded, with the generation moved on before it is due
		}
		var plan []planned
		var ran []int
		bumped := false // the stale pod's generation moved on: its later steps carry the new one
		var schedule func(at time.Time)
		schedule = func(at time.Time) {
			id := len(plan)
			p := planned{at: at, id: id}
			fn := func(time.Time) {
				ran = append(ran, id)
				if rng.IntN(4) == 0 {
					schedule(at.Add(time.Duration(rng.IntN(3)) * time.Second))
				}
			}
			switch rng.IntN(4) {
			case 0:
				p.held = r.scheduleAt(at, fn)
			case 1:
				uid := "stale"
				if rng.IntN(2) == 0 {
					uid = "live"
				}
				r.postGuarded(at, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}, step{apply: fn})
				p.gen = uid == "stale" && !bumped
			default:
				r.post(at, fn)
			}
			plan = append(plan, p)
		}
		for range 200 {
			schedule(vclock.Epoch.Add(time.Duration(rng.IntN(20)) * time.Second))
		}
		r.generation[types.UID("stale")]++
		bumped = true
		for i := range plan {
			if plan[i].held != nil && rng.IntN(3) == 0 {
				cancel(plan[i].held)
			}
		}
		for {
			next, ok := r.NextWake()
			if !ok {
				break
			}
			clk.Set(next)
			r.applyDue(next)
		}
		// Every effect ran at its instant; ties by the order of scheduling, which is the id.
		var want []int
		order := slices.Clone(plan)
		slices.SortStableFunc(order, func(a, b planned) int { return a.at.Compare(b.at) })
		for _, p := range order {
			if (p.held != nil && p.held.cancelled) || p.gen {
				continue
			}
			want = append(want, p.id)
		}
		if !slices.Equal(ran, want) {
			t.Fatalf("seed %d: ran %v, want %v", seed, ran, want)
		}
		if len(r.schedule) != 0 {
			t.Errorf("seed %d: %d steps left", seed, len(r.schedule))
		}
	}
}

// TestDropOfProcess checks that a kubelet restart's dropOfProcess removes the process's steps
// (guarded and postOfProcess) and keeps the runtime's own, which then run in their (time,
// sequence) order, over seeded random schedules.
func TestDropOfProcess(t *testing.T) {
	for seed := range uint64(20) {
		rng, clk, r := seededRuntime(t, seed, 2)
		type planned struct {
			at   time.Time
			id   int
			kept bool
		}
		var plan []planned
		var ran []int
		for id := range 100 {
			p := planned{at: vclock.Epoch.Add(time.Duration(rng.IntN(20)) * time.Second), id: id}
			fn := func(time.Time) { ran = append(ran, id) }
			switch rng.IntN(4) {
			case 0:
				r.postGuarded(p.at, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "pod"}}, step{apply: fn})
			case 1:
				r.postOfProcess(p.at, fn)
			case 2:
				r.scheduleAt(p.at, fn)
				p.kept = true
			default:
				r.post(p.at, fn)
				p.kept = true
			}
			plan = append(plan, p)
		}
		r.schedule.dropOfProcess()
		for next, ok := r.NextWake(); ok; next, ok = r.NextWake() {
			clk.Set(next)
			r.applyDue(next)
		}
		var want []int
		slices.SortStableFunc(plan, func(a, b planned) int { return a.at.Compare(b.at) })
		for _, p := range plan {
			if p.kept {
				want = append(want, p.id)
			}
		}
		if !slices.Equal(ran, want) {
			t.Fatalf("seed %d: ran %v, want %v", seed, ran, want)
		}
	}
}

// seededRuntime is a runtime on a virtual clock without a trace, and the random source of seed's
// schedule (stream apart for each test).
func seededRuntime(t *testing.T, seed, stream uint64) (*rand.Rand, *vclock.Clock, *Runtime) {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	r, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return rand.New(rand.NewPCG(seed, stream)), clk, r
}
