package status

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakePods is an in-memory pod manager: regular and static pods by UID, mirror pods by full name.
type fakePods struct {
	pods    map[types.UID]*v1.Pod
	mirrors map[string]*v1.Pod
}

var _ PodManager = (*fakePods)(nil)

func newFakePods(pods ...*v1.Pod) *fakePods {
	f := &fakePods{pods: map[types.UID]*v1.Pod{}, mirrors: map[string]*v1.Pod{}}
	for _, p := range pods {
		f.add(p)
	}
	return f
}

func (f *fakePods) add(p *v1.Pod) {
	if kubecontainer.IsMirrorPod(p) {
		f.mirrors[kubecontainer.GetPodFullName(p)] = p
		return
	}
	f.pods[p.UID] = p
}

func (f *fakePods) GetPodByUID(uid types.UID) (*v1.Pod, bool) {
	p, ok := f.pods[uid]
	return p, ok
}

func (f *fakePods) GetMirrorPodByPod(p *v1.Pod) (*v1.Pod, bool) {
	m, ok := f.mirrors[kubecontainer.GetPodFullName(p)]
	return m, ok
}

func (f *fakePods) MirrorTranslations() map[types.UID]types.UID {
	out := map[types.UID]types.UID{}
	for _, m := range f.mirrors {
		if t := f.TranslatePodUID(m.UID); t != m.UID {
			out[m.UID] = t
		}
	}
	return out
}

func (f *fakePods) TranslatePodUID(uid types.UID) types.UID {
	for name, m := range f.mirrors {
		if m.UID != uid {
			continue
		}
		for _, p := range f.pods {
			if kubecontainer.GetPodFullName(p) == name {
				return p.UID
			}
		}
	}
	return uid
}

// couldRun is a DeletionSafety with a fixed answer.
type couldRun bool

func (c couldRun) PodCouldHaveRunningContainers(types.UID) bool { return bool(c) }

type env struct {
	clock  *vclock.Clock
	client *fake.Clientset
	pods   *fakePods
	events []trace.Event
	m      *Manager
}

// newManager calls New and fails the test on an error.
func newManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return m
}

func TestNewMissingOptions(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New(Options{}) = %v, want minikubelet.ErrMissingOption", err)
	}
	for _, name := range []string{"Clock", "Tracer"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("New(Options{}) = %q, want it to name %s", err, name)
		}
	}
}

func newEnv(t *testing.T, safety DeletionSafety, apiObjects ...*v1.Pod) *env {
	t.Helper()
	e := &env{clock: vclock.New(vclock.Epoch), client: fake.NewClientset(), pods: newFakePods()}
	for _, p := range apiObjects {
		if err := e.client.Tracker().Add(p.DeepCopy()); err != nil {
			t.Fatalf("Tracker().Add(%s) = %v", p.Name, err)
		}
	}
	e.m = newManager(t, Options{
		Client:         ClientsetAdapter{Client: e.client},
		PodManager:     e.pods,
		DeletionSafety: safety,
		Clock:          e.clock,
		Tracer:         trace.Func(func(ev trace.Event) { e.events = append(e.events, ev) }),
	})
	return e
}

// step runs the Manager when it asks to be woken at the current instant, as the replay engine does.
func (e *env) step(t *testing.T) {
	t.Helper()
	if at, ok := e.m.NextWake(); !ok || at.After(e.clock.Now()) {
		return
	}
	if err := e.m.Step(context.Background()); err != nil {
		t.Errorf("Step() = %v, want nil", err)
	}
}

// advanceToFullBatch moves the clock to the next full batch and runs it.
func (e *env) advanceToFullBatch(t *testing.T) {
	t.Helper()
	at, ok := e.m.NextWake()
	if !ok {
		t.Fatalf("NextWake() = false, want a full batch")
	}
	e.clock.Set(at)
	e.step(t)
}

func (e *env) apiPod(t *testing.T, namespace, name string) *v1.Pod {
	t.Helper()
	p, err := e.client.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get(%s/%s) = %v", namespace, name, err)
	}
	return p
}

// verbs lists the client actions as "verb" or "verb/subresource", and clears them.
func (e *env) verbs() []string {
	var out []string
	for _, a := range e.client.Actions() {
		v := a.GetVerb()
		if a.GetSubresource() != "" {
			v += "/" + a.GetSubresource()
		}
		out = append(out, v)
	}
	e.client.ClearActions()
	return out
}

// eventWords lists the trace as "event from->to func", and clears it.
func (e *env) eventWords() []string {
	var out []string
	for _, ev := range e.events {
		out = append(out, string(ev.Event)+" "+ev.Pod+" "+ev.From+"->"+ev.To+" "+ev.Func)
	}
	e.events = nil
	return out
}

func apiPod(name string, uid types.UID) *v1.Pod {
	return podtest.New(name, podtest.UID(uid), podtest.Generation(1), podtest.Source("api"), podtest.Node("node-1"),
		podtest.Containers(podtest.Container("a", "a:1")), podtest.Phase(v1.PodPending))
}

func runningStatus(pod *v1.Pod, now time.Time) v1.PodStatus {
	rs := &kubecontainer.PodStatus{Sandboxes: readySandbox(), ContainerStatuses: []kubecontainer.ContainerStatus{{
		ID: "c-" + string(pod.UID), Name: "a", Image: "a:1", ImageRef: "fake://a:1", State: kubecontainer.ContainerStateRunning, CreatedAt: now, StartedAt: now,
	}}}
	return GeneratePodStatus(pod, pod.Status, rs, false, now, GenerateOptions{HostIP: "192.168.0.10"})
}

func TestManagerPatchesAPIPod(t *testing.T) {
	pod := apiPod("web", "uid-web")
	e := newEnv(t, nil, pod)
	e.pods.add(pod)

	e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
	if at, ok := e.m.NextWake(); !ok || !at.Equal(e.clock.Now()) {
		t.Errorf("NextWake() after SetPodStatus = %v, %v, want now", at, ok)
	}
	e.step(t)
	if diff := cmp.Diff([]string{"get", "patch/status"}, e.verbs()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	got := e.apiPod(t, "default", "web")
	if got.Status.Phase != v1.PodRunning || len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].ContainerID != "fake://c-uid-web" {
		t.Errorf("API status = %+v, want Running with container fake://c-uid-web", got.Status)
	}
	if got.Status.ObservedGeneration != 1 || got.Status.StartTime == nil {
		t.Errorf("API status observedGeneration, startTime = %d, %v, want 1 and set", got.Status.ObservedGeneration, got.Status.StartTime)
	}
	want := []string{"set default/web ->Running SetPodStatus", "patch default/web Pending->Running syncPod"}
	if diff := cmp.Diff(want, e.eventWords()); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
	if at, ok := e.m.NextWake(); !ok || !at.Equal(vclock.Epoch.Add(DefaultSyncPeriod)) {
		t.Errorf("NextWake() after the write = %v, %v, want the full batch at +10s", at, ok)
	}
}

func TestManagerWritesNothingWhenUnchanged(t *testing.T) {
	pod := apiPod("web", "uid-web")
	e := newEnv(t, nil, pod)
	e.pods.add(pod)
	status := runningStatus(pod, e.clock.Now())
	e.m.SetPodStatus(pod, status)
	e.step(t)
	e.verbs()
	e.eventWords()

	e.clock.Advance(3 * time.Second)
	e.m.SetPodStatus(pod, status)
	e.step(t)
	if got := e.verbs(); len(got) != 0 {
		t.Errorf("API calls after an unchanged SetPodStatus = %v, want none", got)
	}
	if got := e.eventWords(); len(got) != 0 {
		t.Errorf("trace after an unchanged SetPodStatus = %v, want none", got)
	}

	// The full batch reconciles against the pod manager's stale copy, reads the pod and finds
	// nothing to patch.
	e.advanceToFullBatch(t)
	if diff := cmp.Diff([]string{"get"}, e.verbs()); diff != "" {
		t.Errorf("API calls of the full batch mismatch (-want +got):\n%s", diff)
	}
	// Someone else changes the status: the next full batch writes it back.
	changed := e.apiPod(t, "default", "web")
	changed.Status.Phase = v1.PodPending
	if err := e.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), changed, "default"); err != nil {
		t.Fatalf("Tracker().Update() = %v", err)
	}
	e.client.ClearActions()
	e.advanceToFullBatch(t)
	if diff := cmp.Diff([]string{"get", "patch/status"}, e.verbs()); diff != "" {
		t.Errorf("API calls of the reconciling batch mismatch (-want +got):\n%s", diff)
	}
	if got := e.apiPod(t, "default", "web").Status.Phase; got != v1.PodRunning {
		t.Errorf("API phase after reconcile = %s, want Running", got)
	}
}

func TestManagerStaticPodStatusGoesToMirror(t *testing.T) {
	static := apiPod("etcd-node-1", "uid-static")
	static.Annotations = map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file", kubecontainer.ConfigHashAnnotationKey: "uid-static"}
	mirror := apiPod("etcd-node-1", "uid-mirror")
	mirror.Annotations = map[string]string{kubecontainer.ConfigSourceAnnotationKey: "api", kubecontainer.ConfigMirrorAnnotationKey: "uid-static"}
	e := newEnv(t, nil)
	e.pods.add(static)

	e.m.SetPodStatus(static, runningStatus(static, e.clock.Now()))
	e.step(t)
	if got := e.verbs(); len(got) != 0 {
		t.Errorf("API calls without a mirror pod = %v, want none", got)
	}

	// The mirror pod is created; the next full batch writes the status to it.
	if err := e.client.Tracker().Add(mirror.DeepCopy()); err != nil {
		t.Fatalf("Tracker().Add(mirror) = %v", err)
	}
	e.pods.add(mirror)
	e.advanceToFullBatch(t)
	got := e.apiPod(t, "default", "etcd-node-1")
	if got.UID != "uid-mirror" || got.Status.Phase != v1.PodRunning {
		t.Errorf("mirror pod = %s with phase %s, want uid-mirror Running", got.UID, got.Status.Phase)
	}
	var patched []string
	for _, ev := range e.events {
		if ev.Event == "patch" {
			patched = append(patched, ev.UID)
		}
	}
	if diff := cmp.Diff([]string{"uid-mirror"}, patched); diff != "" {
		t.Errorf("patched UIDs mismatch (-want +got):\n%s", diff)
	}
	if s, ok := e.m.GetPodStatus("uid-mirror"); !ok || s.Phase != v1.PodRunning {
		t.Errorf("GetPodStatus(mirror UID) = %s, %v, want the static pod's Running status", s.Phase, ok)
	}
	if phase, ok := e.m.GetPodPhase("uid-mirror"); !ok || phase != v1.PodRunning {
		t.Errorf("GetPodPhase(mirror UID) = %s, %v, want the static pod's Running", phase, ok)
	}
}

func TestManagerDeletesFinishedPod(t *testing.T) {
	pod := apiPod("web", "uid-web")
	e := newEnv(t, couldRun(false), pod)
	e.pods.add(pod)
	e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
	e.step(t)

	// kubectl delete pod web: the API sets the deletionTimestamp, the pod worker terminates it.
	e.clock.Advance(time.Second)
	deleting := e.apiPod(t, "default", "web")
	ts := metav1.NewTime(e.clock.Now())
	grace := int64(30)
	deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = &ts, &grace
	if err := e.client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), deleting, "default"); err != nil {
		t.Fatalf("Tracker().Update() = %v", err)
	}
	e.pods.add(deleting)
	e.client.ClearActions()
	e.events = nil

	final := GeneratePodStatus(deleting, e.mustStatus(t, "uid-web"), &kubecontainer.PodStatus{Sandboxes: readySandbox()}, true, e.clock.Now(), GenerateOptions{})
	e.m.SetPodStatus(deleting, final)
	e.m.TerminatePod(deleting)
	e.step(t)

	var del *k8stesting.DeleteActionImpl
	for _, a := range e.client.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			del = &d
		}
	}
	if diff := cmp.Diff([]string{"get", "patch/status", "delete"}, e.verbs()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	if del == nil {
		t.Fatalf("no delete action recorded")
	}
	wantOpts := metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions("uid-web")}
	if diff := cmp.Diff(wantOpts, del.DeleteOptions); diff != "" {
		t.Errorf("DeleteOptions mismatch (-want +got):\n%s", diff)
	}
	want := []string{
		"set default/web Running->Failed SetPodStatus",
		"set default/web Failed->Failed TerminatePod",
		"patch default/web Running->Failed syncPod",
		"delete default/web ->Failed syncPod",
	}
	if diff := cmp.Diff(want, e.eventWords()); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
	if _, ok := e.m.GetPodStatus("uid-web"); ok {
		t.Errorf("GetPodStatus() after delete found a status, want none")
	}
	if phase, ok := e.m.GetPodPhase("uid-web"); ok {
		t.Errorf("GetPodPhase() after delete = %s, want no status", phase)
	}
	if _, err := e.client.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{}); err == nil {
		t.Errorf("pod still in the API after delete")
	}
}

func (e *env) mustStatus(t *testing.T, uid types.UID) v1.PodStatus {
	t.Helper()
	s, ok := e.m.GetPodStatus(uid)
	if !ok {
		t.Fatalf("GetPodStatus(%s) found nothing", uid)
	}
	return s
}

// While containers could still run, a terminal phase is held back from the API, and the pod is
// not deleted.
func TestManagerHoldsTerminalPhaseWhileContainersMayRun(t *testing.T) {
	pod := apiPod("web", "uid-web")
	e := newEnv(t, couldRun(true), pod)
	e.pods.add(pod)
	e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
	e.m.TerminatePod(pod)
	e.step(t)
	if got := e.apiPod(t, "default", "web").Status.Phase; got != v1.PodPending {
		t.Errorf("API phase = %s, want Pending held back", got)
	}
	if s := e.mustStatus(t, "uid-web"); s.Phase != v1.PodFailed {
		t.Errorf("cached phase = %s, want Failed", s.Phase)
	}
}

func TestManagerDropsStatusOfRecreatedPod(t *testing.T) {
	old := apiPod("web", "uid-old")
	e := newEnv(t, nil, apiPod("web", "uid-new"))
	e.pods.add(old)
	e.m.SetPodStatus(old, runningStatus(old, e.clock.Now()))
	e.step(t)
	if diff := cmp.Diff([]string{"get"}, e.verbs()); diff != "" {
		t.Errorf("API calls mismatch (-want +got):\n%s", diff)
	}
	if _, ok := e.m.GetPodStatus("uid-old"); ok {
		t.Errorf("GetPodStatus(uid-old) found a status, want it dropped")
	}
}

func TestManagerStandalone(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var events []trace.Event
	m := newManager(t, Options{Clock: clk, Tracer: trace.Func(func(ev trace.Event) { events = append(events, ev) })})
	pod := apiPod("web", "uid-web")
	m.SetPodStatus(pod, runningStatus(pod, clk.Now()))
	if at, ok := m.NextWake(); ok {
		t.Errorf("NextWake() standalone = %v, true, want false", at)
	}
	if err := m.Step(context.Background()); err != nil {
		t.Errorf("Step() standalone = %v, want nil", err)
	}
	if s, ok := m.GetPodStatus("uid-web"); !ok || s.Phase != v1.PodRunning {
		t.Errorf("GetPodStatus() standalone = %s, %v, want Running, true", s.Phase, ok)
	}
	if len(events) != 1 || events[0].Event != "set" {
		t.Errorf("trace standalone = %v, want one set", events)
	}
}

func TestManagerTerminatePod(t *testing.T) {
	running := v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{runningState("a")}}
	tests := []struct {
		name      string
		source    string
		wantPhase v1.PodPhase
	}{
		{"api pod becomes failed", "api", v1.PodFailed},
		{"static pod keeps its phase", "file", v1.PodRunning},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
			pod := apiPod("web", "uid-web")
			pod.Annotations[kubecontainer.ConfigSourceAnnotationKey] = tc.source
			m.SetPodStatus(pod, running)
			m.TerminatePod(pod)
			got, _ := m.GetPodStatus("uid-web")
			if got.Phase != tc.wantPhase {
				t.Errorf("phase after TerminatePod = %s, want %s", got.Phase, tc.wantPhase)
			}
			term := got.ContainerStatuses[0].State.Terminated
			if term == nil || term.ExitCode != 137 || term.Reason != reasonStatusUnknown {
				t.Errorf("container after TerminatePod = %+v, want terminated 137 %s", got.ContainerStatuses[0].State, reasonStatusUnknown)
			}
		})
	}
}

func TestManagerRejectsIllegalTransition(t *testing.T) {
	var events []trace.Event
	m := newManager(t, Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Func(func(ev trace.Event) { events = append(events, ev) })})
	pod := apiPod("job", "uid-job")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{succeededState("a")}})
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{runningState("a")}})
	got, _ := m.GetPodStatus("uid-job")
	if got.Phase != v1.PodSucceeded {
		t.Errorf("phase after an illegal transition = %s, want Succeeded kept", got.Phase)
	}
	if len(events) != 2 || events[1].Event != "reject" {
		t.Errorf("trace = %v, want set then reject", events)
	}
}

func TestManagerRemoveOrphanedStatuses(t *testing.T) {
	m := newManager(t, Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	for _, uid := range []types.UID{"a", "b"} {
		m.SetPodStatus(apiPod(string(uid), uid), v1.PodStatus{Phase: v1.PodPending})
	}
	m.RemoveOrphanedStatuses(map[types.UID]bool{"b": true})
	if _, ok := m.GetPodStatus("a"); ok {
		t.Errorf("GetPodStatus(a) after RemoveOrphanedStatuses found a status, want none")
	}
	if _, ok := m.GetPodStatus("b"); !ok {
		t.Errorf("GetPodStatus(b) after RemoveOrphanedStatuses found nothing, want its status")
	}
}

// Writes happen in namespace and name order, whatever the order of SetPodStatus calls.
func TestManagerWriteOrder(t *testing.T) {
	pods := []*v1.Pod{apiPod("c", "uid-1"), apiPod("a", "uid-2"), apiPod("b", "uid-3")}
	e := newEnv(t, nil, pods...)
	for _, p := range pods {
		e.pods.add(p)
		e.m.SetPodStatus(p, runningStatus(p, e.clock.Now()))
	}
	e.events = nil
	e.step(t)
	var got []string
	for _, ev := range e.events {
		got = append(got, ev.Pod)
	}
	if diff := cmp.Diff([]string{"default/a", "default/b", "default/c"}, got); diff != "" {
		t.Errorf("patch order mismatch (-want +got):\n%s", diff)
	}
}

func TestGetPodPhase(t *testing.T) {
	m := newManager(t, Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}}
	if _, ok := m.GetPodPhase("u1"); ok {
		t.Error("GetPodPhase(u1) found a phase before any SetPodStatus")
	}
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning})
	if got, ok := m.GetPodPhase("u1"); !ok || got != v1.PodRunning {
		t.Errorf("GetPodPhase(u1) = %q, %v, want Running, true", got, ok)
	}
}

// TestPodStatusStamp: the stamp changes with the status, not with a set that changes nothing,
// and a status that comes back after it was forgotten gets a stamp never handed out before,
// though its version starts again.
func TestPodStatusStamp(t *testing.T) {
	pod := apiPod("web", "uid-web")
	e := newEnv(t, nil, pod)
	e.pods.add(pod)
	if _, ok := e.m.PodStatusStamp(pod.UID); ok {
		t.Fatal("PodStatusStamp() of a pod without a status = true")
	}
	e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
	first, ok := e.m.PodStatusStamp(pod.UID)
	if !ok || first == 0 {
		t.Fatalf("PodStatusStamp() = %d, %v after a status, want a stamp", first, ok)
	}
	e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
	if same, _ := e.m.PodStatusStamp(pod.UID); same != first {
		t.Errorf("PodStatusStamp() after an unchanged status = %d, want %d", same, first)
	}
	pending := runningStatus(pod, e.clock.Now())
	pending.Phase = v1.PodPending
	pending.ContainerStatuses = nil
	e.m.SetPodStatus(pod, pending)
	second, _ := e.m.PodStatusStamp(pod.UID)
	if second == first {
		t.Errorf("PodStatusStamp() after a changed status = %d, the stamp of the status before", second)
	}
	e.m.RemoveOrphanedStatuses(map[types.UID]bool{})
	if _, ok := e.m.PodStatusStamp(pod.UID); ok {
		t.Error("PodStatusStamp() of a forgotten status = true")
	}
	e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
	if again, _ := e.m.PodStatusStamp(pod.UID); again == first || again == second {
		t.Errorf("PodStatusStamp() of a status set again = %d, a stamp handed out before (%d, %d)", again, first, second)
	}
}

// TestStartTimeKeptAsTheOldOne: the start time a status is cached with is the old status's, to
// the last field (the location too), whether the status handed over carries that very instant
// (then its own copy is kept), none, a later one or the same instant in another location; and
// each cached version owns its start time, shared with neither the version before it, the pod,
// nor the status handed over.
func TestStartTimeKeptAsTheOldOne(t *testing.T) {
	elsewhere := time.FixedZone("elsewhere", 3600)
	for _, tc := range []struct {
		name  string
		given func(old metav1.Time) *metav1.Time
	}{
		{"the old instant", func(old metav1.Time) *metav1.Time { return &old }},
		{"none", func(metav1.Time) *metav1.Time { return nil }},
		{"a later instant", func(old metav1.Time) *metav1.Time { t := metav1.NewTime(old.Add(time.Minute)); return &t }},
		{"the old instant elsewhere", func(old metav1.Time) *metav1.Time { t := metav1.NewTime(old.In(elsewhere)); return &t }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := apiPod("web", "uid-web")
			e := newEnv(t, nil, pod)
			e.pods.add(pod)
			e.m.SetPodStatus(pod, runningStatus(pod, e.clock.Now()))
			first, _ := e.m.GetPodStatus(pod.UID)
			want := *first.StartTime

			e.clock.Advance(time.Second)
			next := runningStatus(pod, e.clock.Now())
			next.Phase = v1.PodSucceeded // a change, so that a new version is cached
			next.StartTime = tc.given(want)
			given := next.StartTime
			e.m.SetPodStatus(pod, next)
			got, _ := e.m.GetPodStatus(pod.UID)
			if got.Phase != v1.PodSucceeded {
				t.Fatalf("phase = %s, want the new version cached", got.Phase)
			}
			if got.StartTime == nil || *got.StartTime != want {
				t.Fatalf("start time = %v, want the old one %v to the last field", got.StartTime, want)
			}
			if got.StartTime == first.StartTime || got.StartTime == given {
				t.Error("the cached start time is shared with the version before or the status handed over")
			}
		})
	}
}

// TestStartTimeKeptFromThePod: with no status cached, the old status is the pod's own, which the
// status manager shares with its sources: its start time (nanoseconds and all, so that rounding
// in place would show) is copied into the cached version, never shared nor changed.
func TestStartTimeKeptFromThePod(t *testing.T) {
	pod := apiPod("web", "uid-web")
	started := metav1.NewTime(vclock.Epoch.Add(1500 * time.Millisecond).Add(123 * time.Nanosecond))
	pod.Status.StartTime = &started
	e := newEnv(t, nil, pod)
	e.pods.add(pod)
	for _, tc := range []struct {
		name  string
		given func() *metav1.Time
	}{
		{"the pod's own instant", func() *metav1.Time { t := started; return &t }},
		{"none", func() *metav1.Time { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.m.RemoveOrphanedStatuses(map[types.UID]bool{})
			status := runningStatus(pod, e.clock.Now())
			status.StartTime = tc.given()
			e.m.SetPodStatus(pod, status)
			got, ok := e.m.GetPodStatus(pod.UID)
			if !ok || got.StartTime == nil {
				t.Fatalf("GetPodStatus() = %v, %v, want a cached status with a start time", got, ok)
			}
			if got.StartTime == pod.Status.StartTime {
				t.Error("the cached start time is the pod's own")
			}
			if *pod.Status.StartTime != started {
				t.Errorf("the pod's start time = %v, want %v untouched", *pod.Status.StartTime, started)
			}
		})
	}
}
