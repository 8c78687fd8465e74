package status

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// gatedClient is an API server whose status patches wait for the gate: a slow API server.
type gatedClient struct {
	ClientsetAdapter
	gate chan struct{}
}

func (c gatedClient) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	select {
	case <-c.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return c.ClientsetAdapter.PatchPodStatus(ctx, namespace, name, patch)
}

// owner is the goroutine that owns the Manager (the sync loop's): it runs the calls it is given.
func owner(ctx context.Context, calls <-chan func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-calls:
			f()
		}
	}
}

// TestRunnerWritesBesideTheOwner: the Runner's writes do not hold the Manager's goroutine. While
// a status patch waits on the API server, the owner still sets statuses; once the patch is
// through, the Runner records it and writes the status set meanwhile in its next batch.
func TestRunnerWritesBesideTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		a, b := apiPod("a", "uid-a"), apiPod("b", "uid-b")
		client := fake.NewClientset(a.DeepCopy(), b.DeepCopy())
		gate := make(chan struct{})
		m, err := New(Options{Client: gatedClient{ClientsetAdapter{Client: client}, gate}, PodManager: newFakePods(a, b),
			Clock: clk, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		calls := make(chan func())
		do := func(ctx context.Context, f func()) bool {
			done := make(chan struct{})
			select {
			case calls <- func() { f(); close(done) }:
			case <-ctx.Done():
				return false
			}
			<-done
			return true
		}
		r, err := NewRunner(RunnerOptions{Manager: m, Do: do, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go owner(ctx, calls)
		go func() {
			defer close(stopped)
			if err := r.Run(ctx); err != nil {
				t.Errorf("Run() = %v, want nil", err)
			}
		}()

		do(ctx, func() { m.SetPodStatus(a, runningStatus(a, clk.Now())) })
		synctest.Wait() // the Runner waits on the API server with a's patch
		do(ctx, func() { m.SetPodStatus(b, runningStatus(b, clk.Now())) })
		var versions int
		do(ctx, func() { versions = len(m.apiVersions) })
		if versions != 0 {
			t.Errorf("written versions before the patch returned = %d, want 0", versions)
		}

		close(gate)
		synctest.Wait() // both written; the Runner sleeps until the next full batch
		var got map[string]v1.PodPhase
		do(ctx, func() {
			got = map[string]v1.PodPhase{}
			for uid := range m.apiVersions {
				got[string(uid)] = m.statuses[uid].status.Phase
			}
		})
		want := map[string]v1.PodPhase{"uid-a": v1.PodRunning, "uid-b": v1.PodRunning}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("statuses written (-want +got):\n%s", diff)
		}
		var patches int
		for _, act := range client.Actions() {
			if act.GetVerb() == "patch" {
				patches++
			}
		}
		if patches != 2 {
			t.Errorf("status patches = %d, want 2", patches)
		}
		cancel()
		<-stopped
	})
}

func TestNewRunnerMissingOptions(t *testing.T) {
	if _, err := NewRunner(RunnerOptions{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewRunner(RunnerOptions{}) = %v, want ErrMissingOption", err)
	}
}
