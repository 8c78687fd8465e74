package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// step is the part of a trace event that the sequence tests compare.
type step struct {
	Component trace.Component
	Event     trace.Kind
	Op        string
	To        string
	Func      string
}

// subsequence returns the first len(want) events of got, in order, that match want's steps one
// after the other; comparing it with want shows the first step missing.
func subsequence(got []trace.Event, want []step) []step {
	var out []step
	for _, e := range got {
		if len(out) == len(want) {
			break
		}
		w := want[len(out)]
		s := step{Component: e.Component, Event: e.Event, Func: e.Func}
		if w.Op != "" {
			s.Op = e.Op
		}
		if w.To != "" || (e.Event == "state" && w.Event == "state") {
			s.To = e.To
		}
		if s == w {
			out = append(out, s)
		}
	}
	return out
}

// runningWithMirror is the condition "the static pod's mirror pod shows Running in the API".
func runningWithMirror(e *env, pod *v1.Pod) func() bool {
	return func() bool {
		m := e.apiPod(pod.Namespace, pod.Name)
		return m != nil && m.Status.Phase == v1.PodRunning && m.Annotations[kubecontainer.ConfigMirrorAnnotationKey] == string(pod.UID)
	}
}

func TestStaticPodRunsWithMirrorPod(t *testing.T) {
	e := newEnv(t, envOptions{latencies: fakeruntime.DefaultLatencies})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	if !e.run(30*time.Second, runningWithMirror(e, pod)) {
		t.Fatalf("mirror pod of %s not Running after %v", pod.Name, e.now())
	}
	mirror := e.apiPod(pod.Namespace, pod.Name)
	if got, want := mirror.OwnerReferences, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: testNode}}; len(got) != 1 || got[0].Kind != want[0].Kind || got[0].Name != want[0].Name {
		t.Errorf("mirror owner references = %v, want the node %s", got, testNode)
	}
	if mirror.UID == pod.UID {
		t.Errorf("mirror UID = %s, want a UID of its own", mirror.UID)
	}
	if got := e.phase(pod.UID); got != v1.PodRunning {
		t.Errorf("status manager phase of %s = %s, want Running", pod.UID, got)
	}
	want := []string{
		// The kubelet's BirthCry, on the node, once the process is built.
		"Normal Starting Starting kubelet.",
		// The node's own events: the container manager's start, the condition setters on the
		// node it registers, and Ready at the fast status update.
		"Normal NodeAllocatableEnforced Updated Node Allocatable limit across pods",
		"Normal NodeHasSufficientMemory Node node-1 status is now: NodeHasSufficientMemory",
		"Normal NodeHasNoDiskPressure Node node-1 status is now: NodeHasNoDiskPressure",
		"Normal NodeHasSufficientPID Node node-1 status is now: NodeHasSufficientPID",
		"Normal NodeReady Node node-1 status is now: NodeReady",
		`Normal Pulling Pulling image "registry.k8s.io/pause:3.10"`,
		`Normal Pulled Successfully pulled image "registry.k8s.io/pause:3.10"`,
		"Normal Created Container created",
		"Normal Started Container started",
	}
	if diff := cmp.Diff(want, e.events.list()); diff != "" {
		t.Errorf("Kubernetes events (-want +got):\n%s", diff)
	}
	node, err := e.client.CoreV1().Nodes().Get(e.ctx, testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	if got := node.Status.Capacity.Pods().Value(); got != 110 {
		t.Errorf("node pods capacity = %d, want 110", got)
	}
}

// TestTraceIsDeterministic runs the same scenario twice and compares the traces byte for byte.
func TestTraceIsDeterministic(t *testing.T) {
	render := func() string {
		e := newEnv(t, envOptions{latencies: fakeruntime.DefaultLatencies})
		pods := []*v1.Pod{
			staticPod("a", "uid-a", v1.RestartPolicyAlways),
			staticPod("b", "uid-b", v1.RestartPolicyAlways),
			crashingPod(v1.RestartPolicyAlways, "1"),
		}
		e.setFile(pods...)
		e.runFor(40 * time.Second)
		e.setFile(pods[1:]...)
		e.runFor(20 * time.Second)
		var out string
		for _, ev := range e.trace() {
			out += ev.Text() + "\n"
		}
		return out
	}
	first, second := render(), render()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second run's trace differs (-first +second):\n%s", diff)
	}
}
