package podsync

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
)

// registrar logs what the sync functions tell the ConfigMap and Secret managers, and what the
// runtime had been asked by then.
type registrar struct {
	rt  *fakeRuntime
	log []string
}

func (r *registrar) RegisterPod(pod *v1.Pod) {
	r.log = append(r.log, fmt.Sprintf("register %s after %d runtime calls", pod.Name, len(r.rt.calls)))
}
func (r *registrar) UnregisterPod(pod *v1.Pod) { r.log = append(r.log, "unregister "+pod.Name) }

// TestObjectRegistration checks that SyncPod registers the pod with the object managers before the
// runtime creates anything, and SyncTerminatedPod unregisters it.
func TestObjectRegistration(t *testing.T) {
	f := newFixture(t)
	reg := &registrar{rt: f.rt}
	f.s.opts.Objects = reg
	p := pod("web")
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodCreate, p, nil, &kubecontainer.PodStatus{UID: p.UID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SyncTerminatedPod(context.Background(), p, &kubecontainer.PodStatus{UID: p.UID}); err != nil {
		t.Fatal(err)
	}
	want := []string{"register web after 0 runtime calls", "unregister web"}
	if diff := cmp.Diff(want, reg.log); diff != "" {
		t.Errorf("registrations (-want +got):\n%s", diff)
	}
	if len(f.rt.calls) != 1 || f.rt.calls[0] != "SyncPod web" {
		t.Errorf("runtime calls = %q, want one SyncPod", f.rt.calls)
	}
}
