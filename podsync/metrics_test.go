package podsync

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type startMetrics struct{ workerStart, podStart []time.Duration }

func (m *startMetrics) ObservePodWorkerStart(d time.Duration) {
	m.workerStart = append(m.workerStart, d)
}
func (m *startMetrics) ObservePodStart(d time.Duration) { m.podStart = append(m.podStart, d) }

// TestStartMetrics: the worker start latency is observed on the create sync only; the pod start
// latency on the first sync (no status yet, the kubelet's quirk) and when the phase goes from
// Pending to Running, both measured from the first-seen annotation.
func TestStartMetrics(t *testing.T) {
	f := newFixture(t)
	m := &startMetrics{}
	f.s.opts.Metrics = m
	p := pod("web")
	p.Annotations = map[string]string{kubecontainer.ConfigFirstSeenAnnotationKey: vclock.Epoch.Format(time.RFC3339Nano)}
	f.clk.Advance(time.Second)
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodCreate, p, nil, nil); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(2 * time.Second)
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, nil, nil); err != nil {
		t.Fatal(err) // still Pending: nothing observed
	}
	f.clk.Advance(time.Second)
	running := &kubecontainer.PodStatus{UID: p.UID, Name: p.Name, Namespace: p.Namespace, ContainerStatuses: []kubecontainer.ContainerStatus{
		{ID: "c1", Name: "app", State: kubecontainer.ContainerStateRunning, StartedAt: f.clk.Now()},
	}}
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, nil, running); err != nil {
		t.Fatal(err)
	}
	if got := f.status.statuses[p.UID].Phase; got != v1.PodRunning {
		t.Fatalf("phase = %s, want Running", got)
	}
	want := &startMetrics{workerStart: []time.Duration{time.Second}, podStart: []time.Duration{time.Second, 4 * time.Second}}
	if diff := cmp.Diff(want, m, cmp.AllowUnexported(startMetrics{})); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}
