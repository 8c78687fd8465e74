package fakeruntime

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/benchfloor"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestListingFollowsEveryChange drives pods through random syncs, exits, kills, sandbox deaths and
// removals, and checks after each step that GetPods, which keeps its listing between changes,
// answers what a listing built afresh from the records does, and that the running listing
// shares the whole listing's pod wherever the two are alike.
func TestListingFollowsEveryChange(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			randomLives(t, seed, 200, func(e *env) {
				lists := map[bool][]*kubecontainer.Pod{}
				for _, all := range []bool{false, true} {
					got, err := e.rt.GetPods(all)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(listAfresh(e.rt, all), got); diff != "" {
						t.Fatalf("GetPods(%v) (-afresh +kept):\n%s", all, diff)
					}
					lists[all] = got
				}
				whole := map[types.UID]*kubecontainer.Pod{}
				for _, p := range lists[true] {
					whole[p.ID] = p
				}
				for _, p := range lists[false] {
					w := whole[p.ID]
					if len(w.Containers) == len(p.Containers) && len(w.Sandboxes) == len(p.Sandboxes) && w != p {
						t.Fatalf("pod %s is alike in both listings but not shared", p.ID)
					}
				}
			})
		})
	}
}

// randomLives drives pods of one container, of several, and with init containers and a
// sidecar through steps random syncs, exits, kills, sandbox deaths, removals and clock moves
// from seed, calling check after each step.
func randomLives(t *testing.T, seed uint64, steps int, check func(*env)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	e := newEnv(t, Latencies{SandboxStart: time.Second, ImagePull: time.Second, ContainerStart: time.Second, ContainerStop: time.Second})
	pods := []*v1.Pod{
		podtest.New("a"), podtest.New("b", withExit("app", "3s", "1"), podtest.RestartPolicy(v1.RestartPolicyNever)),
		podtest.New("c", withSidecar("s"), withInit("i")), podtest.New("d", withExit("app", "2s", "0")),
		podtest.New("e", podtest.Containers(podtest.Container("app", podtest.DefaultImage),
			podtest.Container("logger", podtest.DefaultImage), podtest.Container("proxy", podtest.DefaultImage))),
	}
	for range steps {
		pod := pods[r.IntN(len(pods))]
		// Each step's error (a pod not there, a container still running) is a state the
		// runtime refuses to change: the checks after it hold all the same.
		switch r.IntN(7) {
		case 0, 1:
			_, _ = e.sync(pod)
		case 2:
			_, _ = e.rt.KillPod(pod, nil, ptr.To(int64(r.IntN(2))))
		case 3:
			_ = e.rt.RemovePod(pod.UID)
		case 4:
			_ = e.rt.KillSandbox(pod.Namespace + "/" + pod.Name)
		case 5:
			_ = e.rt.ContainerExit(pod.Namespace+"/"+pod.Name, "app", r.IntN(2))
		case 6:
			e.clk.Advance(time.Duration(r.IntN(3000)) * time.Millisecond)
		}
		check(e)
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
			listAfresh(e.rt, true)
			listAfresh(e.rt, false)
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
}

// listAfresh builds GetPods(all)'s answer from the records, each listing on its own, as GetPods
// did before it made the running listing from the whole one: the reference GetPods is held to
// and BenchmarkGetPodsAfterChange's "afresh".
func listAfresh(r *Runtime, all bool) []*kubecontainer.Pod {
	nc, ns := 0, 0
	for _, rec := range r.pods {
		nc += len(rec.containers)
		ns += len(rec.sandboxes)
	}
	backing := make([]kubecontainer.Pod, 0, len(r.pods))
	containers := make([]kubecontainer.ContainerStatus, 0, nc)
	sandboxes := make([]kubecontainer.SandboxStatus, 0, ns)
	pods := make([]*kubecontainer.Pod, 0, len(r.pods))
	for _, uid := range r.sortedUIDs() {
		rec := r.pods[uid]
		c0, s0 := len(containers), len(sandboxes)
		for _, c := range rec.containers {
			if all || c.status.State == kubecontainer.ContainerStateRunning {
				containers = append(containers, c.status)
			}
		}
		for _, s := range rec.sandboxes {
			if all || s.status.State == kubecontainer.SandboxReady {
				sandboxes = append(sandboxes, s.status)
			}
		}
		if !all && len(containers) == c0 && len(sandboxes) == s0 {
			continue
		}
		backing = append(backing, kubecontainer.Pod{
			ID: rec.uid, Name: rec.name, Namespace: rec.namespace,
			Containers: containers[c0:len(containers):len(containers)],
			Sandboxes:  sandboxes[s0:len(sandboxes):len(sandboxes)],
		})
		pods = append(pods, &backing[len(backing)-1])
	}
	return pods
}
