package podsync

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestBlockedMirrorSyncKeepsItsStatus: a static pod's sync that waits on its mirror pod calls
// (Beside) resumes after other pods' SyncPods have built their statuses into the Syncer's
// Buffers; the pod's cached status, and every other pod's, is still the one cached at its own
// sync, and the pod's next sync builds the same status again.
func TestBlockedMirrorSyncKeepsItsStatus(t *testing.T) {
	for _, skipping := range []bool{false, true} {
		p, _ := newPipeline(t, skipping)
		opts := p.s.opts
		opts.Mirror, opts.Nodes = &logMirror{}, nodes{node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}
		s, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		b := &heldBeside{}
		s.SetBeside(b)
		runtimeStatus := func(pod *v1.Pod, i int, state kubecontainer.ContainerState) *kubecontainer.PodStatus {
			return &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace,
				Sandboxes: []kubecontainer.SandboxStatus{{ID: fmt.Sprintf("sb%d", i), State: kubecontainer.SandboxReady, CreatedAt: vclock.Epoch}},
				IPs:       []string{fmt.Sprintf("10.88.0.%d", i+1)},
				ContainerStatuses: []kubecontainer.ContainerStatus{{ID: fmt.Sprintf("c%d", i), Name: pod.Spec.Containers[0].Name, Image: "busybox:1.36", State: state,
					CreatedAt: vclock.Epoch, StartedAt: vclock.Epoch, FinishedAt: vclock.Epoch.Add(time.Minute)}}}
		}
		static := staticPod()
		static.Spec.Containers = append(static.Spec.Containers, v1.Container{Name: "side", Image: "busybox:1.36"})
		rsStatic := runtimeStatus(static, 0, kubecontainer.ContainerStateRunning)
		res, err := s.SyncPod(context.Background(), podworkers.SyncPodSync, static, nil, rsStatic)
		if err != nil || !res.Blocked {
			t.Fatalf("static SyncPod = %+v, %v; want blocked on its mirror calls", res, err)
		}
		cached := map[*v1.Pod]v1.PodStatus{}
		keep := func(pod *v1.Pod) {
			got, ok := p.status.GetPodStatus(pod.UID)
			if !ok {
				t.Fatalf("pod %s has no cached status", pod.Name)
			}
			cached[pod] = *got.DeepCopy()
		}
		keep(static)
		for i, state := range []kubecontainer.ContainerState{kubecontainer.ContainerStateExited, kubecontainer.ContainerStateCreated, kubecontainer.ContainerStateRunning} {
			p.clk.Advance(time.Second)
			pod := podtest.New(fmt.Sprintf("other%d", i))
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprintf("x%d", i), Image: "nginx:1.27"})
			if _, err := s.SyncPod(context.Background(), podworkers.SyncPodSync, pod, nil, runtimeStatus(pod, i+1, state)); err != nil {
				t.Fatalf("SyncPod(%s) = %v", pod.Name, err)
			}
			keep(pod)
		}
		b.calls[0](context.Background())
		b.returned[0]()
		if res, err = res.Wait(context.Background(), false); err != nil || res.Blocked {
			t.Fatalf("static pod's Wait once its calls returned = %+v, %v", res, err)
		}
		for pod, want := range cached {
			got, _ := p.status.GetPodStatus(pod.UID)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("skipping %v: pod %s's cached status changed (-cached +now):\n%s", skipping, pod.Name, diff)
			}
		}
		// The static pod's next sync, from the same inputs, finds its status unchanged.
		before, _ := p.status.PodStatusStamp(static.UID)
		if _, err := s.SyncPod(context.Background(), podworkers.SyncPodSync, static, mirrorOf("hash-2"), rsStatic); err != nil {
			t.Fatal(err)
		}
		if after, _ := p.status.PodStatusStamp(static.UID); after != before {
			t.Errorf("skipping %v: the static pod's status changed at its next sync from the same inputs", skipping)
		}
	}
}
