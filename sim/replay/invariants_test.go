package replay

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// settledEngine replays a one-pod scenario to its end and returns the engine, every invariant
// holding.
func settledEngine(t *testing.T) *engine {
	t.Helper()
	return settledEngineWith(t, "file")
}

// settledEngineWith is settledEngine with the sources named (a YAML flow list's items).
func settledEngineWith(t *testing.T, sources string) *engine {
	t.Helper()
	s, err := Parse("invariants.yaml", []byte(`
name: invariants
sources: [`+sources+`]
steps:
- at: 0s
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {containers: [{name: nginx, image: nginx:1.27}]}
- at: 30s
  expect: {pod: default/web-node-1, phase: Running}
`), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	e, err := newEngine(s, RunOptions{})
	if err != nil {
		t.Fatalf("newEngine() error = %v", err)
	}
	if err := e.run(context.Background(), 0); err != nil {
		t.Fatalf("run() error = %v", err)
	}
	return e
}

func webPod(t *testing.T, e *engine) *v1.Pod {
	t.Helper()
	pod, ok := e.nodes[0].kubelet.Pods.GetPodByName("default", "web-node-1")
	if !ok {
		t.Fatal("pod manager does not hold default/web-node-1")
	}
	return pod
}

func TestInvariantRestartCountNeverGoesDown(t *testing.T) {
	e := settledEngine(t)
	pod := webPod(t, e)
	status, _ := e.nodes[0].kubelet.Status.GetPodStatus(pod.UID)
	status = *status.DeepCopy()
	status.ContainerStatuses[0].RestartCount = 3
	e.nodes[0].kubelet.Status.SetPodStatus(pod, status)
	if err := e.checkInvariants(e.nodes[0], 1); err != nil {
		t.Fatalf("checkInvariants() with a higher restart count = %v, want nil", err)
	}
	status.ContainerStatuses[0].RestartCount = 1
	e.nodes[0].kubelet.Status.SetPodStatus(pod, status)
	err := e.checkInvariants(e.nodes[0], 1)
	if !errors.Is(err, ErrInvariant) {
		t.Fatalf("checkInvariants() with a lower restart count = %v, want %v", err, ErrInvariant)
	}
	for _, want := range []string{"after step 2", "container nginx", "from 3 to 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("checkInvariants() error = %q, want it to say %q", err, want)
		}
	}
}

func TestInvariantUndesiredWorkerStopsWithinTheGrace(t *testing.T) {
	e := settledEngine(t)
	// The pod manager forgets the pod behind the workers' back: nothing will stop its worker.
	e.nodes[0].kubelet.Pods.RemovePod(webPod(t, e))
	if err := e.checkInvariants(e.nodes[0], 1); err != nil {
		t.Fatalf("checkInvariants() right away = %v, want nil (housekeeping has time)", err)
	}
	e.clk.Set(e.clk.Now().Add(invariantGrace))
	if err := e.checkInvariants(e.nodes[0], 1); err != nil {
		t.Fatalf("checkInvariants() at the grace = %v, want nil", err)
	}
	e.clk.Set(e.clk.Now().Add(time.Second))
	err := e.checkInvariants(e.nodes[0], 1)
	if !errors.Is(err, ErrInvariant) || !strings.Contains(err.Error(), "stayed in sync") {
		t.Errorf("checkInvariants() past the grace = %v, want an undesired worker error", err)
	}
	if want := "at " + e.clk.Since(vclock.Epoch).String(); err != nil && !strings.HasPrefix(err.Error(), want) {
		t.Errorf("checkInvariants() error = %q, want it to start with %q", err, want)
	}
}

func TestInvariantOrphanedMirrorPodGoesWithinTheGrace(t *testing.T) {
	e := settledEngineWith(t, "file, api")
	k := e.nodes[0].kubelet
	pod := webPod(t, e)
	if _, ok := k.Pods.GetMirrorPodByPod(pod); !ok {
		t.Fatal("pod manager holds no mirror pod for default/web-node-1")
	}
	// The pod manager forgets the static pod and keeps its mirror pod: nothing will delete it.
	k.Pods.RemovePod(pod)
	if err := e.checkInvariants(e.nodes[0], 1); err != nil {
		t.Fatalf("checkInvariants() right away = %v, want nil (housekeeping has time)", err)
	}
	e.clk.Set(e.clk.Now().Add(invariantGrace + time.Second))
	err := e.checkInvariants(e.nodes[0], 1)
	if !errors.Is(err, ErrInvariant) || !strings.Contains(err.Error(), "mirror pod web-node-1_default has had no static pod") {
		t.Errorf("checkInvariants() past the grace = %v, want an orphaned mirror pod error", err)
	}
}

// The checks that find the workers' and the pod manager's change counters as at the last walk
// do not walk again; they must find what a walk would.
func TestInvariantChecksWithoutAWalkFindWhatAWalkFinds(t *testing.T) {
	e := settledEngineWith(t, "file, api")
	n := e.nodes[0]
	k := n.kubelet
	pod := webPod(t, e)
	k.Pods.RemovePod(pod) // an undesired worker and an orphaned mirror pod
	if err := e.checkInvariants(n, 1); err != nil {
		t.Fatalf("checkInvariants() right away = %v, want nil", err)
	}
	if !n.inv.sameAsWalked(k.Workers, k.Pods, true) {
		t.Fatal("after a check, sameAsWalked() = false with nothing changed, want true")
	}
	var got, want string
	for _, d := range []time.Duration{invariantGrace, time.Second, time.Minute} {
		e.clk.Set(e.clk.Now().Add(d))
		got, want = "", ""
		if err := e.checkInvariants(n, 1); err != nil {
			got = err.Error()
		}
		n.inv.walked.valid = false // the same check, walking
		if err := e.checkInvariants(n, 1); err != nil {
			want = err.Error()
		}
		if got != want {
			t.Errorf("after %v more: checkInvariants() without a walk = %q, with one %q", d, got, want)
		}
	}
	for _, want := range []string{"stayed in sync", "has had no static pod"} {
		if !strings.Contains(got, want) {
			t.Errorf("checkInvariants() past the graces = %q, want it to say %q", got, want)
		}
	}
	if got := n.inv.walked.undesired; len(got) != 1 || got[0] != pod.UID {
		t.Errorf("walked.undesired = %v, want [%s]", got, pod.UID)
	}
	if got := n.inv.walked.orphans; len(got) != 1 || got[0] != "web-node-1_default" {
		t.Errorf("walked.orphans = %v, want [web-node-1_default]", got)
	}

	// A change the counters show is walked: the pod is back, and both graces end.
	k.Pods.AddPod(pod)
	if n.inv.sameAsWalked(k.Workers, k.Pods, true) {
		t.Fatal("after AddPod, sameAsWalked() = true, want false")
	}
	if err := e.checkInvariants(n, 1); err != nil {
		t.Fatalf("checkInvariants() with the pod back = %v, want nil", err)
	}
	if len(n.inv.undesiredSince) != 0 || len(n.inv.orphanSince) != 0 {
		t.Errorf("with the pod back: undesiredSince = %v, orphanSince = %v, want both empty", n.inv.undesiredSince, n.inv.orphanSince)
	}
}

// The end of an instant checks only the nodes listed for it: those that traced something and
// those with a grace running. Every node that needs a check must be listed, or a fleet's check
// would miss it; a grace must run out on a node that traces nothing more.
func TestInvariantChecksListTheNodesThatNeedThem(t *testing.T) {
	s, err := Parse("invariants-fleet.yaml", []byte(`
name: invariants-fleet
nodes: 3
sources: [file]
steps:
- at: 0s
  node: node-2
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {containers: [{name: nginx, image: nginx:1.27}]}
- at: 30s
  node: node-2
  expect: {pod: default/web-node-2, phase: Running}
`), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	e, err := newEngine(s, RunOptions{})
	if err != nil {
		t.Fatalf("newEngine() error = %v", err)
	}
	if err := e.run(context.Background(), 0); err != nil {
		t.Fatalf("run() error = %v", err)
	}
	listed := func() {
		t.Helper()
		for i, n := range e.nodes {
			if n.inv.needsCheck() && !e.inChecks[i] {
				t.Errorf("node %s needs a check and is not listed for one", n.name)
			}
		}
	}
	if len(e.checks) != 0 {
		t.Errorf("settled, checks = %v, want none", e.checks)
	}

	n := e.nodes[1]
	pod, ok := n.kubelet.Pods.GetPodByName("default", "web-node-2")
	if !ok {
		t.Fatal("node-2's pod manager does not hold default/web-node-2")
	}
	// The pod manager forgets the pod behind the workers' back, and the node traces something.
	n.kubelet.Pods.RemovePod(pod)
	e.rec.Emit(trace.Event{Component: trace.Scenario, Event: trace.KindError, Node: n.name, Message: "test"})
	e.distribute()
	listed()
	if errs := e.checkNodes(); len(errs) != 0 {
		t.Fatalf("checkNodes() right away = %v, want none (housekeeping has time)", errs)
	}
	if want := []int{1}; !slices.Equal(e.checks, want) {
		t.Errorf("with node-2's grace running, checks = %v, want %v", e.checks, want)
	}
	listed()
	e.clk.Set(e.clk.Now().Add(invariantGrace + time.Second))
	errs := e.checkNodes()
	if len(errs) != 1 || !errors.Is(errs[0], ErrInvariant) || !strings.Contains(errs[0].Error(), "node node-2: ") ||
		!strings.Contains(errs[0].Error(), "stayed in sync") {
		t.Errorf("checkNodes() past the grace, nothing traced = %v, want node-2's undesired worker error", errs)
	}
	listed()
}

// Two nodes whose invariants break at the same instant report in the nodes' order, whatever the
// order their trace events listed them in (checkNodes sorts its list).
func TestInvariantErrorsInTheNodesOrder(t *testing.T) {
	s, err := Parse("invariants-order.yaml", []byte(`
name: invariants-order
nodes: 3
sources: [file]
steps:
- at: 0s
  node: node-1
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {containers: [{name: nginx, image: nginx:1.27}]}
- at: 0s
  node: node-3
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {containers: [{name: nginx, image: nginx:1.27}]}
- at: 30s
  node: node-3
  expect: {pod: default/web-node-3, phase: Running}
`), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	e, err := newEngine(s, RunOptions{})
	if err != nil {
		t.Fatalf("newEngine() error = %v", err)
	}
	if err := e.run(context.Background(), 0); err != nil {
		t.Fatalf("run() error = %v", err)
	}
	// The restart count of each node's pod goes up, then down: node-3 traces first.
	for _, count := range []int32{5, 1} {
		for _, i := range []int{2, 0} {
			n := e.nodes[i]
			pod, ok := n.kubelet.Pods.GetPodByName("default", "web-"+n.name)
			if !ok {
				t.Fatalf("%s holds no web pod", n.name)
			}
			status, _ := n.kubelet.Status.GetPodStatus(pod.UID)
			status = *status.DeepCopy()
			status.ContainerStatuses[0].RestartCount = count
			n.kubelet.Status.SetPodStatus(pod, status)
			e.rec.Emit(trace.Event{Component: trace.Scenario, Event: trace.KindError, Node: n.name, UID: string(pod.UID), Message: "test"})
		}
		errs := e.checkNodes()
		if count == 5 {
			if len(errs) != 0 {
				t.Fatalf("checkNodes() with higher counts = %v", errs)
			}
			continue
		}
		if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "node node-1: ") || !strings.HasPrefix(errs[1].Error(), "node node-3: ") {
			t.Errorf("checkNodes() = %v, want node-1's error, then node-3's", errs)
		}
	}
}
