package fakeruntime

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/benchfloor"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestListingFollowsEveryChange drives pods through random syncs, exits, kills, sandbox deaths and
// removals, and checks after each step that GetPods, which keeps its listing between changes,
// answers what a listing built afresh from the records does.
func TestListingFollowsEveryChange(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, seed))
			e := newEnv(t, Latencies{SandboxStart: time.Second, ContainerStart: time.Second, ContainerStop: time.Second})
			pods := []*v1.Pod{
				podtest.New("a"), podtest.New("b", withExit("app", "3s", "1"), podtest.RestartPolicy(v1.RestartPolicyNever)),
				podtest.New("c", withSidecar("s"), withInit("i")), podtest.New("d", withExit("app", "2s", "0")),
			}
			for range 200 {
				pod := pods[r.IntN(len(pods))]
				switch r.IntN(7) {
				case 0, 1:
					_, _ = e.sync(pod)
				case 2:
					_, _ = e.rt.KillPod(pod, nil, ptr.To[int64](int64(r.IntN(2))))
				case 3:
					_ = e.rt.RemovePod(pod.UID)
				case 4:
					_ = e.rt.KillSandbox(pod.Namespace + "/" + pod.Name)
				case 5:
					_ = e.rt.ContainerExit(pod.Namespace+"/"+pod.Name, "app", r.IntN(2))
				case 6:
					e.clk.Advance(time.Duration(r.IntN(3000)) * time.Millisecond)
				}
				for _, all := range []bool{false, true} {
					got, err := e.rt.GetPods(all)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(e.rt.list(all), got); diff != "" {
						t.Fatalf("GetPods(%v) (-afresh +kept):\n%s", all, diff)
					}
				}
			}
		})
	}
}

// TestGetPodsUnchangedAllocatesNothing checks the steady state the PLEG and housekeeping see every
// second or two: listing a runtime whose records did not change costs no allocation.
func TestGetPodsUnchangedAllocatesNothing(t *testing.T) {
	e := newEnv(t, Latencies{})
	for i := range 10 {
		e.drive(podtest.New(fmt.Sprintf("p%d", i)), at(time.Second))
	}
	for _, all := range []bool{false, true} {
		if _, err := e.rt.GetPods(all); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = e.rt.GetPods(all) }); n != 0 {
			t.Errorf("GetPods(%v) of an unchanged runtime = %v allocations, want 0", all, n)
		}
	}
}

// BenchmarkGetPodsAfterChange: after a change, the PLEG's listing of every pod and
// housekeeping's of the running ones, for a node of 30 running pods; "afresh" builds both from
// the records, as GetPods did before it made the running listing from the whole one.
func BenchmarkGetPodsAfterChange(b *testing.B) {
	floor := benchfloor.Floor(b)
	e := newEnv(b, Latencies{})
	for i := range 30 {
		e.drive(podtest.New(fmt.Sprintf("p%02d", i)), at(time.Second))
	}
	b.Run("getpods", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.rt.changed()
			if _, err := e.rt.GetPods(true); err != nil {
				b.Fatal(err)
			}
			if _, err := e.rt.GetPods(false); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("afresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.rt.list(true)
			e.rt.list(false)
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
}
