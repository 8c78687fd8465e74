package syncloop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/trace"
)

// apiPodFixture is the kubelet tests' simplePod: pod1/ns1, UID "1", one container, no grace.
func apiPodFixture() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod1", Namespace: "ns1", UID: "1", Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: "api"}},
		Spec:       v1.PodSpec{NodeName: testNode, Containers: []v1.Container{{Name: "container-1", Image: "busybox:1.36"}}},
	}
}

func TestHandlePodCleanups(t *testing.T) {
	for _, tc := range []struct {
		name string
		// config is the pod manager's content; runtime pods are started directly in the runtime.
		config, runtime []*v1.Pod
		// wantState is the worker state of UID "1" after HandlePodCleanups, "" for no worker.
		wantState string
		// wantEvents are the housekeeping trace events, as "event reason".
		wantEvents []string
	}{
		{
			name:       "missing pod is requested for termination with short grace period",
			runtime:    []*v1.Pod{apiPodFixture()},
			wantState:  "terminating",
			wantEvents: []string{"kill OrphanedRuntimePod"},
		},
		{
			name:       "pod is added to worker by sync method",
			config:     []*v1.Pod{apiPodFixture()},
			wantState:  "sync",
			wantEvents: []string{"restart "},
		},
		{
			name: "pod is not added to worker by sync method because it is in a terminal phase",
			config: []*v1.Pod{func() *v1.Pod {
				p := apiPodFixture()
				p.Status.Phase = v1.PodFailed
				return p
			}()},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{standalone: true})
			for _, p := range tc.runtime {
				if _, err := e.rt.SyncPod(p, nil, nil); err != nil {
					t.Fatalf("runtime SyncPod(%s) = %v", p.Name, err)
				}
			}
			for _, p := range tc.config {
				e.pm.AddPod(p)
			}
			start := len(e.trace())
			if err := e.loop.HandlePodCleanups(context.Background()); err != nil {
				t.Fatalf("HandlePodCleanups() = %v", err)
			}
			state := ""
			if s, ok := e.loop.Workers().State("1"); ok {
				state = s.String()
			}
			if state != tc.wantState {
				t.Errorf("worker state of UID 1 = %q, want %q", state, tc.wantState)
			}
			var got []string
			for _, ev := range e.trace()[start:] {
				if ev.Component == trace.Housekeeping {
					got = append(got, ev.Event+" "+ev.Reason)
				}
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("housekeeping events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOrphanedRuntimePodIsKilledWithGraceOne(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, latencies: fakeruntime.Latencies{ContainerStop: 30 * time.Second}})
	e.setFile() // the only source has been seen: housekeeping runs
	orphan := apiPodFixture()
	if _, err := e.rt.SyncPod(orphan, nil, nil); err != nil {
		t.Fatalf("runtime SyncPod() = %v", err)
	}
	gone := func() bool {
		pods, err := e.rt.GetPods(false)
		_, known := e.loop.Workers().State(orphan.UID)
		return err == nil && len(pods) == 0 && !known
	}
	if !e.run(10*time.Second, gone) {
		t.Fatalf("orphaned runtime pod still running or known after %v", e.now())
	}
	for _, ev := range e.trace() {
		if ev.Component == trace.Runtime && ev.Event == "killing" {
			if ev.Delay != time.Second {
				t.Errorf("orphan killed with grace %v, want 1s", ev.Delay)
			}
			return
		}
	}
	t.Error("no kill of the orphaned runtime pod in the trace")
}

// recordingMirror counts mirror pod creates and deletes per full name.
type recordingMirror struct {
	mu      sync.Mutex
	creates map[string]int
	deletes map[string]int
	uids    map[string]*types.UID
}

func newRecordingMirror() *recordingMirror {
	return &recordingMirror{creates: map[string]int{}, deletes: map[string]int{}, uids: map[string]*types.UID{}}
}

func (m *recordingMirror) CreateMirrorPod(_ context.Context, static *v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creates[kubecontainer.GetPodFullName(static)]++
	return nil
}

func (m *recordingMirror) DeleteMirrorPod(_ context.Context, fullName string, uid *types.UID) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deletes[fullName]++
	m.uids[fullName] = uid
	return true, nil
}

func (m *recordingMirror) counts() (creates, deletes map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copyCounts(m.creates), copyCounts(m.deletes)
}

func copyCounts(c map[string]int) map[string]int {
	out := make(map[string]int, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

func mirrorOf(static *v1.Pod, uid types.UID) *v1.Pod {
	m := static.DeepCopy()
	m.UID = uid
	m.Annotations = map[string]string{
		kubecontainer.ConfigSourceAnnotationKey: "api",
		kubecontainer.ConfigMirrorAnnotationKey: static.Annotations[kubecontainer.ConfigHashAnnotationKey],
	}
	return m
}

// TestDeleteOrphanedMirrorPods ports the kubelet's test: mirror pods without a static pod are
// deleted, with no UID precondition, except the one whose static pod is still terminating.
func TestDeleteOrphanedMirrorPods(t *testing.T) {
	mirrors := newRecordingMirror()
	e := newEnv(t, envOptions{standalone: true, mirror: mirrors, latencies: fakeruntime.Latencies{ContainerStop: 10 * time.Second}})
	e.setFile()
	static3 := staticPod("pod3", "uid-3", v1.RestartPolicyAlways)
	static3.Annotations[kubecontainer.ConfigSourceAnnotationKey] = "file"
	for i, name := range []string{"pod1", "pod2"} {
		e.pm.AddPod(mirrorOf(staticPod(name, types.UID("uid-"+name), v1.RestartPolicyAlways), types.UID("mirror-"+string(rune('1'+i)))))
	}
	e.pm.AddPod(mirrorOf(static3, "mirror-3"))
	e.loop.HandlePodAdditions(context.Background(), []*v1.Pod{static3})
	if !e.run(10*time.Second, func() bool { return e.phase(static3.UID) == v1.PodRunning }) {
		t.Fatalf("static pod 3 not Running after %v", e.now())
	}
	e.loop.HandlePodRemoves(context.Background(), []*v1.Pod{static3})
	e.loop.Workers().Step(context.Background()) // the kill starts: terminating for 10s
	if err := e.loop.HandlePodCleanups(context.Background()); err != nil {
		t.Fatalf("HandlePodCleanups() = %v", err)
	}
	creates, deletes := mirrors.counts()
	wantDeletes := map[string]int{"pod1-node-1_default": 1, "pod2-node-1_default": 1}
	if diff := cmp.Diff(wantDeletes, deletes); diff != "" {
		t.Errorf("mirror deletes while pod3 terminates (-want +got):\n%s", diff)
	}
	if len(creates) != 0 {
		t.Errorf("mirror creates = %v, want none", creates)
	}
	if uid := mirrors.uids["pod1-node-1_default"]; uid != nil {
		t.Errorf("orphaned mirror deleted with UID precondition %v, want none", *uid)
	}

	// Once pod3 is terminated its mirror is no longer protected.
	if !e.run(20*time.Second, func() bool { _, d := mirrors.counts(); return d["pod3-node-1_default"] > 0 }) {
		t.Fatalf("mirror of pod3 not deleted after %v", e.now())
	}
	if s, ok := e.loop.Workers().State(static3.UID); ok && s < podworkers.Terminated {
		t.Errorf("mirror of pod3 deleted while its worker is %v", s)
	}
}

func TestUnhealthyPLEGSuspendsDispatch(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	e.runFor(2 * time.Second)
	e.rt.Down(e.clk.Now().Add(4 * time.Minute))
	e.runFor(3*time.Minute + 5*time.Second) // no successful relist for more than 3m
	pod := staticPod("late", "uid-late", v1.RestartPolicyAlways)
	e.setFile(pod)
	if _, ok := e.pm.GetPodByUID(pod.UID); ok {
		t.Fatalf("pod %s dispatched while the PLEG is unhealthy", pod.Name)
	}
	if !e.run(2*time.Minute, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("pod %s not Running after the runtime came back (%v)", pod.Name, e.now())
	}
	want := []step{
		{Component: trace.SyncLoop, Event: "skip", Func: "syncLoop"},
		{Component: trace.SyncLoop, Event: "resume", Func: "syncLoop"},
		{Component: trace.SyncLoop, Event: "config", Op: "ADD", Func: "HandlePodAdditions"},
	}
	if diff := cmp.Diff(want, subsequence(e.trace(), want)); diff != "" {
		t.Errorf("dispatch around the unhealthy PLEG (-want +got):\n%s", diff)
	}
}
