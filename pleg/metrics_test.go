package pleg

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// relistCall is one ObserveRelist call.
type relistCall struct {
	Start, End time.Duration // since the epoch
	Counts     *metrics.RunningCounts
}

type recordingMetrics struct{ calls []relistCall }

func (m *recordingMetrics) ObserveRelist(start, end time.Time, counts *metrics.RunningCounts) {
	m.calls = append(m.calls, relistCall{Start: start.Sub(vclock.Epoch), End: end.Sub(vclock.Epoch), Counts: counts})
}

// TestRelistMetrics: every relist is observed, a failed one without counts; running pods are the
// pods with a ready sandbox, containers are counted by state (the kubelet's
// updateRunningPodAndContainerMetrics).
func TestRelistMetrics(t *testing.T) {
	lister, clk, rec := newFakeLister(), vclock.New(vclock.Epoch), &recordingMetrics{}
	g, err := New(Options{Runtime: lister, Cache: NewCache(), Clock: clk, Tracer: trace.Discard, Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	withSandbox := func(p *kubecontainer.Pod, s kubecontainer.SandboxState) *kubecontainer.Pod {
		p.Sandboxes = []kubecontainer.SandboxStatus{{ID: "s-" + string(p.ID), State: s}}
		return p
	}
	lister.pods = []*kubecontainer.Pod{
		withSandbox(pod("1", container("a", running), container("b", exited)), kubecontainer.SandboxReady),
		withSandbox(pod("2", container("c", running)), kubecontainer.SandboxNotReady),
	}
	g.Relist()
	clk.Advance(time.Second)
	lister.listErr = errors.New("runtime down")
	g.Relist()
	want := []relistCall{
		{Start: 0, End: 0, Counts: &metrics.RunningCounts{Pods: 1, Containers: map[string]int{"running": 2, "exited": 1}, Generation: 1}},
		{Start: time.Second, End: time.Second},
	}
	if diff := cmp.Diff(want, rec.calls); diff != "" {
		t.Errorf("ObserveRelist calls (-want +got):\n%s", diff)
	}
}
