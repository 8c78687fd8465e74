package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestUnhealthyPLEGSuspendsDispatch checks that a config update arriving while the PLEG is
// unhealthy waits until dispatch resumes. The runtime-outage scenario shows the skip and the
// resume, but no config update in between.
func TestUnhealthyPLEGSuspendsDispatch(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	e.runFor(2 * time.Second)
	start := e.rec.Len() // after the start-up skip and resume
	e.k.Runtime.Down(e.clk.Now().Add(4 * time.Minute))
	e.runFor(3*time.Minute + 5*time.Second) // no successful relist for more than 3m
	pod := staticPod("late", "uid-late", v1.RestartPolicyAlways)
	e.setFile(pod)
	e.settle() // the file source's update reaches the sync loop, which holds it back
	if _, ok := e.k.Pods.GetPodByUID(pod.UID); ok {
		t.Fatalf("pod %s dispatched while the PLEG is unhealthy", pod.Name)
	}
	if !e.run(2*time.Minute, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("pod %s not Running after the runtime came back (%v)", pod.Name, e.now())
	}
	want := []step{
		{Component: trace.SyncLoop, Event: "skip", Func: "syncLoop"},
		{Component: trace.SyncLoop, Event: "resume", Func: "syncLoop"},
		{Component: trace.SyncLoop, Event: "config", Op: "ADD", Func: "HandlePodAdditions"},
	}
	if diff := cmp.Diff(want, subsequence(e.trace()[start:], want)); diff != "" {
		t.Errorf("dispatch around the unhealthy PLEG (-want +got):\n%s", diff)
	}
}
