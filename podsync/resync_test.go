package podsync

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet/allocation"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/test/podtest"
)

var _ StatusResyncer = (*status.Manager)(nil)

// countingStatus is the real status manager, counting the statuses SyncPod hands it.
type countingStatus struct {
	*status.Manager
	handed int
}

func (c *countingStatus) SetPodStatus(pod *v1.Pod, s v1.PodStatus) {
	c.handed++
	c.Manager.SetPodStatus(pod, s)
}

func (c *countingStatus) ResyncPodStatus(pod *v1.Pod, s v1.PodStatus) bool {
	c.handed++
	return c.Manager.ResyncPodStatus(pod, s)
}

// buildingStatus is the real status manager without ResyncPodStatus: a Syncer over it builds
// every status, as the kubelet does.
type buildingStatus struct{ m *status.Manager }

func (b buildingStatus) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	return b.m.GetPodStatus(uid)
}
func (b buildingStatus) GetPodPhase(uid types.UID) (v1.PodPhase, bool) { return b.m.GetPodPhase(uid) }
func (b buildingStatus) SetPodStatus(pod *v1.Pod, s v1.PodStatus)      { b.m.SetPodStatus(pod, s) }
func (b buildingStatus) TerminatePod(pod *v1.Pod)                      { b.m.TerminatePod(pod) }

// noWatch is a PLEG that is never asked to watch a pod: no resize is actuated here.
type noWatch struct{}

func (noWatch) SetPodWatchCondition(types.UID, string, func(*kubecontainer.PodStatus) bool) {}

// pipeline is a Syncer over a real status manager, with its own clock, runtime and trace.
type pipeline struct {
	clk    *vclock.Clock
	rt     *fakeRuntime
	status *status.Manager
	events *recorder
	rec    *trace.Recorder
	s      *Syncer
}

func newPipeline(t *testing.T, skipping bool) (*pipeline, *countingStatus) {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	p := &pipeline{clk: clk, rt: &fakeRuntime{clk: clk}, events: &recorder{}}
	var err error
	if p.rec, err = trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true}); err != nil {
		t.Fatal(err)
	}
	if p.status, err = status.New(status.Options{Clock: clk, Tracer: p.rec}); err != nil {
		t.Fatal(err)
	}
	crash, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		t.Fatal(err)
	}
	var sm StatusManager = buildingStatus{p.status}
	var counting *countingStatus
	if skipping {
		counting = &countingStatus{Manager: p.status}
		sm = counting
	}
	opts := Options{NodeName: "node-1", HostIP: "192.168.0.10", Clock: clk, Tracer: p.rec, Runtime: p.rt, Status: sm, CrashLoopBackOff: crash, Recorder: p.events}
	// The prober and the resize collaborators, wired as package kubelet wires them: a real
	// prober manager and allocation manager over the status manager, the fake runtime's resize
	// check. Both read what the skip must leave alone (probe results, resize conditions, the
	// allocated pod), so the skip is checked with them in place.
	if opts.Probes, err = prober.New(prober.Options{Clock: clk, Tracer: p.rec, Status: p.status, Recorder: p.events,
		Rand: rand.New(rand.NewPCG(1, 2))}); err != nil {
		t.Fatal(err)
	}
	alloc, err := allocation.New(allocation.Options{Clock: clk, Conditions: p.status,
		Admit:       func(context.Context, *v1.Pod) (bool, string, string) { return true, "", "" },
		Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")},
		PodByUID:    func(types.UID) (*v1.Pod, bool) { return nil, false }})
	if err != nil {
		t.Fatal(err)
	}
	resizes, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	opts.Resizes = &Resizes{Allocation: alloc, Conditions: p.status, Runtime: resizes, PLEG: noWatch{}}
	if p.s, err = New(opts); err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return p, counting
}

// TestSyncPodSkipsAnUnchangedStatus runs the same syncs through a Syncer that skips unchanged
// statuses and one that builds every status, and checks after each that the two status
// managers hold the same status and version and that the traces and recorded events are the
// same, and that the skip happened exactly where the inputs were those of a sync whose status
// came out unchanged.
func TestSyncPodSkipsAnUnchangedStatus(t *testing.T) {
	skip, counting := newPipeline(t, true)
	build, _ := newPipeline(t, false)

	web := podtest.New("web")
	relabeled := web.DeepCopy()
	relabeled.Labels = map[string]string{"tier": "front"}
	probed := podtest.New("probed")
	probed.Spec.Containers[0].ReadinessProbe = &v1.Probe{PeriodSeconds: 10}
	deadline := podtest.New("deadline")
	deadline.Spec.ActiveDeadlineSeconds = new(int64(90))
	deleted := podtest.New("deleted")
	deleted.DeletionTimestamp = &metav1.Time{Time: vclock.Epoch}

	runtime := func(pod *v1.Pod, state kubecontainer.ContainerState) *kubecontainer.PodStatus {
		return &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace,
			Sandboxes: []kubecontainer.SandboxStatus{{ID: "sb1", State: kubecontainer.SandboxReady, CreatedAt: vclock.Epoch}},
			IPs:       []string{"10.88.0.5"},
			ContainerStatuses: []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", Image: "busybox:1.36", State: state,
				CreatedAt: vclock.Epoch, StartedAt: vclock.Epoch, FinishedAt: vclock.Epoch.Add(time.Minute)}}}
	}
	webRunning := runtime(web, kubecontainer.ContainerStateRunning)
	webRunningAgain := runtime(web, kubecontainer.ContainerStateRunning) // the same, read again
	webExited := runtime(web, kubecontainer.ContainerStateExited)
	probedRunning := runtime(probed, kubecontainer.ContainerStateRunning)
	deadlineRunning := runtime(deadline, kubecontainer.ContainerStateRunning)
	deletedRunning := runtime(deleted, kubecontainer.ContainerStateRunning)
	pullErr := fmt.Errorf("pull image %q for container app: %w", "busybox:1.36", kubecontainer.ErrImagePull)

	for _, step := range []struct {
		name    string
		pod     *v1.Pod
		runtime *kubecontainer.PodStatus
		syncErr error                   // the runtime sync's error
		before  func(m *status.Manager) // a change beside the pod sync
		skipped bool
	}{
		{name: "first sync builds", pod: web, runtime: webRunning},
		{name: "same inputs: built, found unchanged", pod: web, runtime: webRunning},
		{name: "same inputs again: skipped", pod: web, runtime: webRunning, skipped: true},
		{name: "and again", pod: web, runtime: webRunning, skipped: true},
		{name: "an equal runtime status read again: built", pod: web, runtime: webRunningAgain},
		{name: "skipped with it", pod: web, runtime: webRunningAgain, skipped: true},
		// The building keeps the message of a phase that did not change: equal to the new status.
		{name: "a status set beside the sync: built, found unchanged", pod: web, runtime: webRunningAgain, before: func(m *status.Manager) {
			s, _ := m.GetPodStatus(web.UID)
			s = *s.DeepCopy()
			s.Message = "set beside"
			m.SetPodStatus(web, s)
		}},
		{name: "skipped after it", pod: web, runtime: webRunningAgain, skipped: true, syncErr: pullErr},
		{name: "a reason from the last runtime sync: built", pod: web, runtime: webRunningAgain},
		{name: "without it: built, found unchanged", pod: web, runtime: webRunningAgain},
		{name: "skipped without it", pod: web, runtime: webRunningAgain, skipped: true},
		// A reason is read by the sync after the one whose runtime sync failed.
		{name: "the container exited: built", pod: web, runtime: webExited, syncErr: pullErr},
		{name: "with the reason: built", pod: web, runtime: webExited, syncErr: pullErr},
		{name: "with the reason, the last time: built", pod: web, runtime: webExited},
		{name: "without it: built", pod: web, runtime: webExited},
		{name: "found unchanged", pod: web, runtime: webExited},
		{name: "skipped", pod: web, runtime: webExited, skipped: true},
		{name: "the container runs again: built", pod: web, runtime: webRunning},
		{name: "unchanged", pod: web, runtime: webRunning},
		{name: "skipped", pod: web, runtime: webRunning, skipped: true},
		{name: "a new version of the pod: built, found unchanged", pod: relabeled, runtime: webRunning},
		{name: "skipped with it", pod: relabeled, runtime: webRunning, skipped: true},
		{name: "a pod with a readiness probe", pod: probed, runtime: probedRunning},
		{name: "is never skipped", pod: probed, runtime: probedRunning},
		{name: "nor again", pod: probed, runtime: probedRunning},
		{name: "a pod with an active deadline", pod: deadline, runtime: deadlineRunning},
		{name: "is never skipped", pod: deadline, runtime: deadlineRunning},
		{name: "and fails past its deadline", pod: deadline, runtime: deadlineRunning},
		{name: "a pod being deleted", pod: deleted, runtime: deletedRunning},
		{name: "is never skipped", pod: deleted, runtime: deletedRunning},
	} {
		t.Run(step.name, func(t *testing.T) {
			handed := counting.handed
			for _, p := range []*pipeline{skip, build} {
				if step.before != nil {
					step.before(p.status)
				}
				p.rt.syncErr = step.syncErr
				p.s.SyncPod(context.Background(), podworkers.SyncPodSync, step.pod, nil, step.runtime)
				p.clk.Advance(time.Minute)
			}
			if skipped := counting.handed == handed; skipped != step.skipped {
				t.Errorf("skipped = %v, want %v", skipped, step.skipped)
			}
			got, gotOK := skip.status.GetPodStatus(step.pod.UID)
			want, wantOK := build.status.GetPodStatus(step.pod.UID)
			if diff := cmp.Diff(want, got); diff != "" || gotOK != wantOK {
				t.Errorf("cached status with the skip (-building +skipping, %v %v):\n%s", wantOK, gotOK, diff)
			}
			if skip.status.Version() != build.status.Version() {
				t.Errorf("status manager version = %d with the skip, %d building", skip.status.Version(), build.status.Version())
			}
			if diff := cmp.Diff(build.rec.Events(), skip.rec.Events()); diff != "" {
				t.Errorf("trace (-building +skipping):\n%s", diff)
			}
			if diff := cmp.Diff(*build.events, *skip.events); diff != "" {
				t.Errorf("recorded events (-building +skipping):\n%s", diff)
			}
		})
	}
	if len(*build.events) == 0 {
		t.Error("no event recorded: the active deadline did not pass, the comparison of events checked nothing")
	}
}

// TestSkipCheck: with Options.CheckSkip, a sync that takes the skip is counted and builds the
// status all the same, and the check records the first sync whose built status the status
// manager did not find unchanged, here because the runtime's status was changed in place behind
// the PLEG cache's back (what the kubelet's write of the IPs would do if modelled without a copy).
func TestSkipCheck(t *testing.T) {
	p, _ := newPipeline(t, true)
	check := &SkipCheck{}
	p.s.opts.CheckSkip = check
	web := podtest.New("web")
	rs := &kubecontainer.PodStatus{UID: web.UID, Name: web.Name, Namespace: web.Namespace,
		Sandboxes: []kubecontainer.SandboxStatus{{ID: "sb1", State: kubecontainer.SandboxReady, CreatedAt: vclock.Epoch}},
		IPs:       []string{"10.88.0.5"},
		ContainerStatuses: []kubecontainer.ContainerStatus{{ID: "c1", Name: "app", Image: "busybox:1.36",
			State: kubecontainer.ContainerStateRunning, CreatedAt: vclock.Epoch, StartedAt: vclock.Epoch}}}
	sync := func() {
		p.s.SyncPod(context.Background(), podworkers.SyncPodSync, web, nil, rs)
		p.clk.Advance(time.Minute)
	}
	for range 4 {
		sync()
	}
	if check.Skips != 2 || check.Err != nil {
		t.Fatalf("after 4 syncs with the same inputs: skips = %d, err = %v; want 2 skips, no error", check.Skips, check.Err)
	}
	version := p.status.Version()

	rs.IPs = []string{"10.88.0.6"}
	sync()
	if check.Skips != 3 || check.Err == nil {
		t.Fatalf("after a change in place: skips = %d, err = %v; want 3 skips and an error", check.Skips, check.Err)
	}
	for _, want := range []string{"default/web", "did not find the status built unchanged"} {
		if !strings.Contains(check.Err.Error(), want) {
			t.Errorf("error %q does not say %q", check.Err, want)
		}
	}
	if s, _ := p.status.GetPodStatus(web.UID); p.status.Version() == version || s.PodIP != "10.88.0.6" {
		t.Errorf("status manager: version %d (was %d), pod IP %s; want the built status set, as without the skip", p.status.Version(), version, s.PodIP)
	}
	first := check.Err
	rs.IPs = []string{"10.88.0.7"}
	sync()
	if check.Err != first {
		t.Errorf("the check's error = %v, want the first divergence kept: %v", check.Err, first)
	}
}

// TestCachedStatusesShareNoList: SyncPod builds each status into the lists of the one before
// (status.Buffers), so the status manager's cached statuses must be its own copies: after syncs
// of other pods, with other containers, IPs and phases, through both the building and the
// skipping Syncer, every pod's cached status is still the one cached at its own sync.
func TestCachedStatusesShareNoList(t *testing.T) {
	for _, skipping := range []bool{false, true} {
		p, _ := newPipeline(t, skipping)
		type cached struct {
			pod  *v1.Pod
			want v1.PodStatus
		}
		var all []cached
		for i, state := range []kubecontainer.ContainerState{kubecontainer.ContainerStateRunning, kubecontainer.ContainerStateExited,
			kubecontainer.ContainerStateCreated, kubecontainer.ContainerStateRunning} {
			pod := podtest.New(fmt.Sprintf("p%d", i))
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprintf("side%d", i), Image: "busybox:1.36"})
			rs := &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace,
				Sandboxes: []kubecontainer.SandboxStatus{{ID: "sb1", State: kubecontainer.SandboxReady, CreatedAt: vclock.Epoch}},
				IPs:       []string{fmt.Sprintf("10.88.0.%d", i+1)},
				ContainerStatuses: []kubecontainer.ContainerStatus{{ID: fmt.Sprintf("c%d", i), Name: "app", Image: "busybox:1.36", State: state,
					CreatedAt: vclock.Epoch, StartedAt: vclock.Epoch, FinishedAt: vclock.Epoch.Add(time.Minute)}}}
			p.s.SyncPod(context.Background(), podworkers.SyncPodSync, pod, nil, rs)
			got, ok := p.status.GetPodStatus(pod.UID)
			if !ok {
				t.Fatalf("skipping %v: pod %s has no cached status", skipping, pod.Name)
			}
			all = append(all, cached{pod: pod, want: *got.DeepCopy()})
			p.clk.Advance(time.Second)
		}
		for _, c := range all {
			got, _ := p.status.GetPodStatus(c.pod.UID)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("skipping %v: pod %s's cached status changed by later syncs (-cached +now):\n%s", skipping, c.pod.Name, diff)
			}
		}
	}
}
