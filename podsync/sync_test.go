package podsync

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

var _ podworkers.Syncer = (*Syncer)(nil)

// fakeRuntime answers the sync functions' calls from its fields and logs them.
type fakeRuntime struct {
	syncErr  error
	killErr  error
	killDone time.Duration // after the kill call
	running  []kubecontainer.ContainerStatus
	calls    []string
	clk      *vclock.Clock
}

func (r *fakeRuntime) SyncPod(pod *v1.Pod, _ *kubecontainer.PodStatus, _ *kubecontainer.Backoff) (kubecontainer.Result, error) {
	r.calls = append(r.calls, "SyncPod "+pod.Name)
	return kubecontainer.Result{Done: r.clk.Now()}, r.syncErr
}

func (r *fakeRuntime) KillPod(pod *v1.Pod, running *kubecontainer.Pod, grace *int64) (kubecontainer.Result, error) {
	g := "default"
	if grace != nil {
		g = fmt.Sprint(*grace)
	}
	r.calls = append(r.calls, fmt.Sprintf("KillPod %s/%s grace=%s containers=%d", running.Namespace, running.Name, g, len(running.Containers)))
	return kubecontainer.Result{Done: r.clk.Now().Add(r.killDone)}, r.killErr
}

func (r *fakeRuntime) GetPodStatus(uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error) {
	r.calls = append(r.calls, "GetPodStatus "+name)
	return &kubecontainer.PodStatus{UID: uid, Name: name, Namespace: namespace, ContainerStatuses: r.running}, nil
}

// fakeStatus keeps the last status set per UID.
type fakeStatus struct {
	statuses   map[types.UID]v1.PodStatus
	terminated []types.UID
}

func (s *fakeStatus) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	st, ok := s.statuses[uid]
	return st, ok
}
func (s *fakeStatus) GetPodPhase(uid types.UID) (v1.PodPhase, bool) {
	st, ok := s.statuses[uid]
	return st.Phase, ok
}

// SetPodStatus keeps a deep copy, as the status manager does: SyncPod builds the next status into
// the lists of the one it hands over.
func (s *fakeStatus) SetPodStatus(pod *v1.Pod, st v1.PodStatus) {
	s.statuses[pod.UID] = *st.DeepCopy()
}
func (s *fakeStatus) TerminatePod(pod *v1.Pod) { s.terminated = append(s.terminated, pod.UID) }

// recorder keeps "Type Reason Message" lines.
type recorder []string

func (r *recorder) Event(_ runtime.Object, eventType, reason, message string) {
	*r = append(*r, eventType+" "+reason+" "+message)
}

type fixture struct {
	clk    *vclock.Clock
	rt     *fakeRuntime
	status *fakeStatus
	events *recorder
	rec    *trace.Recorder
	s      *Syncer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	f := &fixture{clk: clk, rt: &fakeRuntime{clk: clk}, status: &fakeStatus{statuses: map[types.UID]v1.PodStatus{}}, events: &recorder{}}
	var err error
	if f.rec, err = trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true}); err != nil {
		t.Fatal(err)
	}
	crash, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		t.Fatal(err)
	}
	f.s, err = New(Options{NodeName: "node-1", Clock: clk, Tracer: f.rec, Runtime: f.rt, Status: f.status, CrashLoopBackOff: crash, Recorder: f.events})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return f
}

func pod(name string) *v1.Pod { return podtest.New(name) }

func TestNewNamesMissingOptions(t *testing.T) {
	_, err := New(Options{NodeName: "node-1", Mirror: nopMirror{}})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New() error = %v, want %v", err, minikubelet.ErrMissingOption)
	}
	want := "new pod syncer: options Clock, Tracer, Runtime, Status, CrashLoopBackOff, Nodes (with Mirror): missing required option"
	if err.Error() != want {
		t.Errorf("New() error = %q, want %q", err, want)
	}
}

type nopMirror struct{}

func (nopMirror) CreateMirrorPod(context.Context, *v1.Pod) error { return nil }
func (nopMirror) DeleteMirrorPod(context.Context, string, *types.UID) (bool, error) {
	return false, nil
}

func TestSyncPodStopsAtATerminalPhase(t *testing.T) {
	f := newFixture(t)
	p := pod("done")
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	exited := &kubecontainer.PodStatus{UID: p.UID, Name: p.Name, Namespace: p.Namespace, ContainerStatuses: []kubecontainer.ContainerStatus{
		{ID: "c1", Name: "app", State: kubecontainer.ContainerStateExited, ExitCode: 0},
	}}
	res, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, nil, exited)
	if err != nil || !res.IsTerminal {
		t.Errorf("SyncPod() = %+v, %v, want IsTerminal and no error", res, err)
	}
	if len(f.rt.calls) != 0 {
		t.Errorf("runtime calls = %v, want none for a terminal pod", f.rt.calls)
	}
	if got := f.status.statuses[p.UID].Phase; got != v1.PodSucceeded {
		t.Errorf("status phase = %s, want Succeeded", got)
	}
}

func TestSyncPodRemembersWhyAContainerDidNotStart(t *testing.T) {
	f := newFixture(t)
	p := pod("pull")
	f.rt.syncErr = fmt.Errorf("pull image %q for container app: %w", "busybox:1.36", kubecontainer.ErrImagePull)
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodCreate, p, nil, nil); !errors.Is(err, kubecontainer.ErrImagePull) {
		t.Fatalf("SyncPod() error = %v, want ErrImagePull", err)
	}
	f.rt.syncErr = nil
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, nil, nil); err != nil {
		t.Fatalf("SyncPod() error = %v", err)
	}
	// The second sync's status is generated with the first sync's reason; the reason is dropped
	// only after the sync that started the container.
	w := f.status.statuses[p.UID].ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ErrImagePull" || w.Message != `pull image "busybox:1.36" for container app` {
		t.Errorf("waiting state = %+v, want ErrImagePull with the pull error", w)
	}
}

func TestSyncTerminatingPodFinishesWhenTheKillEnds(t *testing.T) {
	f := newFixture(t)
	p := pod("web")
	f.rt.killDone = 30 * time.Second
	running := &kubecontainer.PodStatus{UID: p.UID, Name: p.Name, Namespace: p.Namespace, ContainerStatuses: []kubecontainer.ContainerStatus{
		{ID: "c1", Name: "app", State: kubecontainer.ContainerStateRunning},
	}}
	grace := int64(30)
	res, err := f.s.SyncTerminatingPod(context.Background(), p, running, &grace, nil)
	if err != nil {
		t.Fatalf("SyncTerminatingPod() error = %v", err)
	}
	if want := vclock.Epoch.Add(30 * time.Second); !res.Done.Equal(want) {
		t.Errorf("Done = %v, want the kill's end", res.Done.Sub(vclock.Epoch))
	}
	if next, ok := f.s.NextWake(); !ok || !next.Equal(res.Done) {
		t.Errorf("NextWake() = %v, %v, want the kill's end", next.Sub(vclock.Epoch), ok)
	}
	f.clk.Set(res.Done)
	f.s.Advance()
	want := []string{"KillPod default/web grace=30 containers=1", "GetPodStatus web"}
	if diff := cmp.Diff(want, f.rt.calls); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
	if _, ok := f.s.NextWake(); ok {
		t.Error("NextWake() reports a pending kill after it finished")
	}
}

func TestSyncTerminatingPodTracesContainersStillRunning(t *testing.T) {
	f := newFixture(t)
	p := pod("stuck")
	f.rt.killDone = time.Second
	f.rt.running = []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", State: kubecontainer.ContainerStateRunning}}
	if _, err := f.s.SyncTerminatingPod(context.Background(), p, nil, nil, nil); err != nil {
		t.Fatalf("SyncTerminatingPod() error = %v", err)
	}
	f.clk.Set(vclock.Epoch.Add(time.Second))
	f.s.Advance()
	var reasons []string
	for _, e := range f.rec.Events() {
		reasons = append(reasons, e.Reason)
	}
	if diff := cmp.Diff([]string{"KillPodIncomplete"}, reasons); diff != "" {
		t.Errorf("trace reasons (-want +got):\n%s", diff)
	}
}

func TestFailedKillRecordsFailedKillPod(t *testing.T) {
	f := newFixture(t)
	f.rt.killErr = errors.New("container runtime is down")
	if _, err := f.s.SyncTerminatingPod(context.Background(), pod("web"), nil, nil, nil); err == nil {
		t.Fatal("SyncTerminatingPod() error = nil, want the kill's error")
	}
	if diff := cmp.Diff([]string{"Warning FailedKillPod error killing pod: container runtime is down"}, []string(*f.events)); diff != "" {
		t.Errorf("recorded events (-want +got):\n%s", diff)
	}
}

func TestSyncTerminatingRuntimePodUsesGraceOne(t *testing.T) {
	f := newFixture(t)
	if _, err := f.s.SyncTerminatingRuntimePod(context.Background(), &kubecontainer.Pod{ID: "orphan", Name: "orphan", Namespace: "ns"}); err != nil {
		t.Fatalf("SyncTerminatingRuntimePod() error = %v", err)
	}
	if diff := cmp.Diff([]string{"KillPod ns/orphan grace=1 containers=0"}, f.rt.calls); diff != "" {
		t.Errorf("runtime calls (-want +got):\n%s", diff)
	}
}

func TestSyncTerminatedPodFinishesTheStatus(t *testing.T) {
	f := newFixture(t)
	p := pod("web")
	if _, err := f.s.SyncTerminatedPod(context.Background(), p, nil); err != nil {
		t.Fatalf("SyncTerminatedPod() error = %v", err)
	}
	if diff := cmp.Diff([]types.UID{p.UID}, f.status.terminated); diff != "" {
		t.Errorf("terminated statuses (-want +got):\n%s", diff)
	}
}
