package fakeruntime

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// recorded is one Kubernetes event as the runtime recorded it, with the virtual instant.
type recorded struct {
	At                    time.Duration
	Pod                   string
	Type, Reason, Message string
}

// recorderFunc adapts a function to an EventRecorder.
type recorderFunc func(object runtime.Object, eventType, reason, message string)

func (f recorderFunc) Event(object runtime.Object, eventType, reason, message string) {
	f(object, eventType, reason, message)
}

func TestRuntimeRecordsKubernetesEventsWhenStepsHappen(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var got []recorded
	rt, err := New(Options{
		Clock:     clk,
		Latencies: Latencies{ImagePull: 2 * time.Second, ContainerStart: time.Second, ContainerStop: time.Second},
		Tracer:    trace.Discard,
		Recorder: recorderFunc(func(object runtime.Object, eventType, reason, message string) {
			ref := object.(*v1.ObjectReference)
			got = append(got, recorded{At: clk.Since(vclock.Epoch), Pod: ref.Namespace + "/" + ref.Name + " " + string(ref.UID) + " " + ref.FieldPath, Type: eventType, Reason: reason, Message: message})
		}),
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := podtest.New("web")
	rt.FailImagePull("busybox:1.36", 1)
	run := func() {
		for {
			next, ok := rt.NextWake()
			if !ok {
				return
			}
			clk.Set(next)
			rt.Advance()
		}
	}
	sync := func() {
		status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus() error = %v", err)
		}
		_, _ = rt.SyncPod(pod, status, nil)
		run()
	}
	sync() // the pull fails at 2s
	sync() // held back: image pull back-off
	clk.Set(vclock.Epoch.Add(12 * time.Second))
	sync() // pulls again, starts at 15s
	if _, err := rt.KillPod(pod, nil, nil); err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	run()

	// Every event is about the container, by its field path, as GenerateContainerRef makes it.
	p := "default/web uid-web spec.containers{app}"
	want := []recorded{
		{At: 0, Pod: p, Type: "Normal", Reason: "Pulling", Message: `Pulling image "busybox:1.36"`},
		{At: 2 * time.Second, Pod: p, Type: "Warning", Reason: "Failed", Message: `Failed to pull image "busybox:1.36"`},
		// startContainer's own event after the image manager's, as in kuberuntime.
		{At: 2 * time.Second, Pod: p, Type: "Warning", Reason: "Failed", Message: "Error: ErrImagePull"},
		{At: 2 * time.Second, Pod: p, Type: "Normal", Reason: "BackOff", Message: `Back-off pulling image "busybox:1.36"`},
		{At: 2 * time.Second, Pod: p, Type: "Warning", Reason: "Failed", Message: "Error: ImagePullBackOff"},
		{At: 12 * time.Second, Pod: p, Type: "Normal", Reason: "Pulling", Message: `Pulling image "busybox:1.36"`},
		{At: 14 * time.Second, Pod: p, Type: "Normal", Reason: "Pulled", Message: `Successfully pulled image "busybox:1.36"`},
		{At: 14 * time.Second, Pod: p, Type: "Normal", Reason: "Created", Message: "Container created"},
		{At: 15 * time.Second, Pod: p, Type: "Normal", Reason: "Started", Message: "Container started"},
		{At: 15 * time.Second, Pod: p, Type: "Normal", Reason: "Killing", Message: "Stopping container app"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded events mismatch (-want +got):\n%s", diff)
	}
}

// TestSandboxChangedRecordedBeforeTheKill checks SyncPod's first step for a pod whose sandbox
// died: the Normal SandboxChanged event about the pod (no field path), then the kill of what is
// left, then a new sandbox. A pod's first sandbox records nothing.
func TestSandboxChangedRecordedBeforeTheKill(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var got []string
	rt, err := New(Options{Clock: clk, Tracer: trace.Discard,
		Recorder: recorderFunc(func(object runtime.Object, eventType, reason, message string) {
			ref := object.(*v1.ObjectReference)
			got = append(got, reason+" "+ref.FieldPath+" "+message)
		}),
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := podtest.New("web")
	sync := func() {
		status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus() error = %v", err)
		}
		_, _ = rt.SyncPod(pod, status, nil)
		for next, ok := rt.NextWake(); ok; next, ok = rt.NextWake() {
			clk.Set(next)
			rt.Advance()
		}
	}
	sync()
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "SandboxChanged") }) {
		t.Errorf("first sync recorded SandboxChanged: %q", got)
	}
	if err := rt.KillSandbox("default/web"); err != nil {
		t.Fatalf("KillSandbox() error = %v", err)
	}
	got = nil
	sync()
	want := []string{
		"SandboxChanged  Pod sandbox changed, it will be killed and re-created.",
		"Killing spec.containers{app} Stopping container app",
	}
	if len(got) < 2 || !cmp.Equal(want, got[:2]) {
		t.Errorf("events after the sandbox died = %q, want them to begin with %q", got, want)
	}
}
