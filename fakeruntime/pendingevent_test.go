package fakeruntime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestPendingEventsReused: the Pulled event each pod's start schedules at its sync's instant is
// traced and recorded about its own pod, with its own text, although the pending events of the
// first pods serve all the others (the next runtime call runs them and frees them).
func TestPendingEventsReused(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var recorded []string
	var traced []string
	rt, err := New(Options{Clock: clk, Tracer: trace.Func(func(ev trace.Event) {
		if ev.Event == trace.KindPulled {
			traced = append(traced, ev.Pod+" "+ev.Reason+" "+ev.Message)
		}
	}), Recorder: recorderFunc(func(object runtime.Object, _, reason, message string) {
		if reason == "Pulled" {
			recorded = append(recorded, object.(*v1.ObjectReference).Name+" "+message)
		}
	})})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	bo, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		t.Fatal(err)
	}
	images := []string{"busybox:1.36", "nginx:1.27", "redis:7"}
	var wantRecorded []string
	for i := range 12 {
		image := images[i%len(images)]
		pod := podtest.New(fmt.Sprintf("p%02d", i), podtest.Containers(v1.Container{Name: "app", Image: image}))
		status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.SyncPod(pod, status, bo); err != nil {
			t.Fatalf("SyncPod(%s) = %v", pod.Name, err)
		}
		if n := len(rt.spareEvents); n > 2 {
			// A pull schedules two (Pulling and Pulled), a present image one.
			t.Fatalf("after pod %s: %d spare pending events, want at most 2", pod.Name, n)
		}
		if i >= len(images) {
			wantRecorded = append(wantRecorded, fmt.Sprintf("%s Container image %q already present on machine and can be accessed by the pod", pod.Name, image))
		} else {
			wantRecorded = append(wantRecorded, fmt.Sprintf("%s Successfully pulled image %q", pod.Name, image))
		}
	}
	if _, err := rt.GetPods(false); err != nil { // runs the last pod's pending event
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantRecorded, trimPulled(recorded)); diff != "" {
		t.Errorf("Pulled events recorded (-want +got):\n%s", diff)
	}
	for i, line := range traced {
		if !strings.HasPrefix(line, fmt.Sprintf("default/p%02d ", i)) {
			t.Errorf("Pulled trace event %d = %q, want pod p%02d's", i, line, i)
		}
	}
	if len(traced) != 12 {
		t.Errorf("%d Pulled trace events, want 12", len(traced))
	}
}

// trimPulled keeps the first sentence of each Pulled message: a pull's message goes on with its
// size and durations.
func trimPulled(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if j := strings.Index(l, `" in `); j >= 0 {
			l = l[:j+1]
		}
		out[i] = l
	}
	return out
}
