package replay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// settledEngine replays a one-pod scenario to its end and returns the engine, every invariant
// holding.
func settledEngine(t *testing.T) *engine {
	t.Helper()
	s, err := Parse("invariants.yaml", []byte(`
name: invariants
sources: [file]
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
