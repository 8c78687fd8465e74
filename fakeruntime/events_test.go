package fakeruntime

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// recorded is one Kubernetes event as the runtime recorded it, with the virtual instant.
type recorded struct {
	At                    time.Duration
	Pod                   string
	Type, Reason, Message string
}

// recorderFunc adapts a function to an EventRecorder.
type recorderFunc func(object runtime.Object, eventType, reason, message string)

func (f recorderFunc) Event(object runtime.Object, eventType, reason, message string) {
	f(object, eventType, reason, message)
}

func TestRuntimeRecordsKubernetesEventsWhenStepsHappen(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var got []recorded
	rt, err := New(Options{
		Clock:     clk,
		Latencies: Latencies{ImagePull: 2 * time.Second, ContainerStart: time.Second, ContainerStop: time.Second},
		Tracer:    trace.Discard,
		Recorder: recorderFunc(func(object runtime.Object, eventType, reason, message string) {
			ref := object.(*v1.ObjectReference)
			got = append(got, recorded{At: clk.Since(vclock.Epoch), Pod: ref.Namespace + "/" + ref.Name + " " + string(ref.UID) + " " + ref.FieldPath, Type: eventType, Reason: reason, Message: message})
		}),
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := podtest.New("web")
	rt.FailImagePull("busybox:1.36", 1)
	run := func() {
		for {
			next, ok := rt.NextWake()
			if !ok {
				return
			}
			clk.Set(next)
			rt.Advance()
		}
	}
	sync := func() {
		status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus() error = %v", err)
		}
		_, _ = rt.SyncPod(pod, status, nil)
		run()
	}
	sync() // the pull fails at 2s
	sync() // held back: image pull back-off
	clk.Set(vclock.Epoch.Add(12 * time.Second))
	sync() // pulls again, starts at 15s
	if _, err := rt.KillPod(pod, nil, nil); err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	run()

	// Every event is about the container, by its field path, as GenerateContainerRef makes it.
	p := "default/web uid-web spec.containers{app}"
	want := []recorded{
		{At: 0, Pod: p, Type: "Normal", Reason: "Pulling", Message: `Pulling image "busybox:1.36"`},
		{At: 2 * time.Second, Pod: p, Type: "Warning", Reason: "Failed", Message: `Failed to pull image "busybox:1.36"`},
		// startContainer's own event after the image manager's, as in kuberuntime.
		{At: 2 * time.Second, Pod: p, Type: "Warning", Reason: "Failed", Message: "Error: ErrImagePull"},
		{At: 2 * time.Second, Pod: p, Type: "Normal", Reason: "BackOff", Message: `Back-off pulling image "busybox:1.36"`},
		{At: 2 * time.Second, Pod: p, Type: "Warning", Reason: "Failed", Message: "Error: ImagePullBackOff"},
		{At: 12 * time.Second, Pod: p, Type: "Normal", Reason: "Pulling", Message: `Pulling image "busybox:1.36"`},
		{At: 14 * time.Second, Pod: p, Type: "Normal", Reason: "Pulled", Message: `Successfully pulled image "busybox:1.36"`},
		{At: 14 * time.Second, Pod: p, Type: "Normal", Reason: "Created", Message: "Container created"},
		{At: 15 * time.Second, Pod: p, Type: "Normal", Reason: "Started", Message: "Container started"},
		{At: 15 * time.Second, Pod: p, Type: "Normal", Reason: "Killing", Message: "Stopping container app"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded events mismatch (-want +got):\n%s", diff)
	}
}

// TestSandboxChangedRecordedBeforeTheKill checks SyncPod's first step for a pod whose sandbox
// died: the Normal SandboxChanged event about the pod (no field path), then the kill of what is
// left, then a new sandbox. A pod's first sandbox records nothing.
func TestSandboxChangedRecordedBeforeTheKill(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var got []string
	rt, err := New(Options{Clock: clk, Tracer: trace.Discard,
		Recorder: recorderFunc(func(object runtime.Object, eventType, reason, message string) {
			ref := object.(*v1.ObjectReference)
			got = append(got, reason+" "+ref.FieldPath+" "+message)
		}),
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := podtest.New("web")
	sync := func() {
		status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus() error = %v", err)
		}
		_, _ = rt.SyncPod(pod, status, nil)
		for next, ok := rt.NextWake(); ok; next, ok = rt.NextWake() {
			clk.Set(next)
			rt.Advance()
		}
	}
	sync()
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "SandboxChanged") }) {
		t.Errorf("first sync recorded SandboxChanged: %q", got)
	}
	if err := rt.KillSandbox("default/web"); err != nil {
		t.Fatalf("KillSandbox() error = %v", err)
	}
	got = nil
	sync()
	want := []string{
		"SandboxChanged  Pod sandbox changed, it will be killed and re-created.",
		"Killing spec.containers{app} Stopping container app",
	}
	if len(got) < 2 || !cmp.Equal(want, got[:2]) {
		t.Errorf("events after the sandbox died = %q, want them to begin with %q", got, want)
	}
}

// podEventLog is a PodEventRecorder: it keeps the references, keys and containers it is handed.
type podEventLog struct {
	refs       []*v1.ObjectReference
	rvs        []string // each reference's resourceVersion when it was handed over
	keys       []string
	plainCalls int
}

func (l *podEventLog) Event(runtime.Object, string, string, string) { l.plainCalls++ }

func (l *podEventLog) PodEvent(ref *v1.ObjectReference, podKey, container, _, reason, _ string) {
	l.refs = append(l.refs, ref)
	l.rvs = append(l.rvs, ref.ResourceVersion)
	l.keys = append(l.keys, reason+" "+podKey+" ["+container+"]")
}

// TestEventReferencesKeptPerContainer checks that a recorder with PodEvent is handed the pod's
// key and container beside the reference, that the events about one container of one version of
// the pod share one reference equal to the one built afresh, and that a newer resourceVersion
// gets a new reference while those handed out before keep theirs.
func TestEventReferencesKeptPerContainer(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	log := &podEventLog{}
	rt, err := New(Options{Clock: clk, Tracer: trace.Discard, Latencies: Latencies{ImagePull: time.Second}, Recorder: log})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := podtest.New("web")
	pod.ResourceVersion = "1"
	status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatalf("GetPodStatus() error = %v", err)
	}
	_, _ = rt.SyncPod(pod, status, nil)
	for next, ok := rt.NextWake(); ok; next, ok = rt.NextWake() {
		clk.Set(next)
		rt.Advance()
	}
	newer := pod.DeepCopy()
	newer.ResourceVersion = "2"
	if _, err := rt.KillPod(newer, nil, nil); err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	for next, ok := rt.NextWake(); ok; next, ok = rt.NextWake() {
		clk.Set(next)
		rt.Advance()
	}

	if log.plainCalls != 0 {
		t.Errorf("Event called %d times, want every event through PodEvent", log.plainCalls)
	}
	wantKeys := []string{"Pulling default/web [app]", "Pulled default/web [app]", "Created default/web [app]", "Started default/web [app]", "Killing default/web [app]"}
	if diff := cmp.Diff(wantKeys, log.keys); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "1", "1", "1", "2"}, log.rvs); diff != "" {
		t.Errorf("resourceVersions as handed over (-want +got):\n%s", diff)
	}
	for i, ref := range log.refs[:4] {
		if ref != log.refs[0] {
			t.Errorf("event %d about the same container and version got a new reference", i)
		}
	}
	if diff := cmp.Diff(newEventRef(pod, "default/web", pod.UID, "app"), log.refs[0]); diff != "" {
		t.Errorf("kept reference differs from one built afresh (-fresh +kept):\n%s", diff)
	}
	if log.refs[4] == log.refs[0] || log.refs[0].ResourceVersion != "1" {
		t.Errorf("newer version: reference %p (rv %q) reused or changed the earlier %p (rv %q)", log.refs[4], log.refs[4].ResourceVersion, log.refs[0], log.refs[0].ResourceVersion)
	}
	if diff := cmp.Diff(newEventRef(newer, "default/web", pod.UID, "app"), log.refs[4]); diff != "" {
		t.Errorf("reference for the newer version differs from one built afresh (-fresh +kept):\n%s", diff)
	}
}

// TestEventRefOfAnUnknownContainerIsNotKept checks that a reference to a container the pod's spec
// does not name (the implicit field path) is built afresh each time, so that an ephemeral
// container added later with that name gets its own field path.
func TestEventRefOfAnUnknownContainerIsNotKept(t *testing.T) {
	rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	pod := podtest.New("web")
	rt.podFor(pod.UID, pod.Name, pod.Namespace, "")
	first := rt.eventRef(pod, "default/web", pod.UID, "debug")
	if first.FieldPath != "implicitly required container debug" {
		t.Fatalf("FieldPath = %q, want the implicit one", first.FieldPath)
	}
	withDebug := pod.DeepCopy()
	withDebug.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}}
	if got := rt.eventRef(withDebug, "default/web", pod.UID, "debug").FieldPath; got != "spec.ephemeralContainers{debug}" {
		t.Errorf("FieldPath once the ephemeral container is added = %q, want spec.ephemeralContainers{debug}", got)
	}
}

// TestEventRefFollowsAContainerMovedToTheInitContainers checks the reference of a pod without a
// resourceVersion (a file or URL pod) whose edited manifest keeps its pinned UID and moves a
// container to the init containers (a sidecar): the kubelet builds the field path from the pod it
// holds, so the events about the container name its new place, and a reference kept from before
// the edit is not handed out again.
func TestEventRefFollowsAContainerMovedToTheInitContainers(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	var got []string
	rt, err := New(Options{Clock: clk, Tracer: trace.Discard,
		Latencies: Latencies{ImagePull: time.Second, ContainerStart: time.Second, ContainerStop: time.Second},
		Recorder: recorderFunc(func(object runtime.Object, _, reason, _ string) {
			got = append(got, reason+" "+object.(*v1.ObjectReference).FieldPath)
		})})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	drain := func() {
		for next, ok := rt.NextWake(); ok; next, ok = rt.NextWake() {
			clk.Set(next)
			rt.Advance()
		}
	}
	sync := func(p *v1.Pod) {
		status, err := rt.GetPodStatus(p.UID, p.Name, p.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus() error = %v", err)
		}
		_, _ = rt.SyncPod(p, status, nil)
		drain()
	}
	pod := podtest.New("web") // no resourceVersion, as every file or URL pod
	sync(pod)
	edited := pod.DeepCopy()
	always := v1.ContainerRestartPolicyAlways
	sidecar := edited.Spec.Containers[0]
	sidecar.RestartPolicy = &always
	edited.Spec.InitContainers = []v1.Container{sidecar}
	edited.Spec.Containers = []v1.Container{{Name: "main", Image: "busybox:1.36"}}
	if ref, want := rt.eventRef(edited, "default/web", pod.UID, sidecar.Name), newEventRef(edited, "default/web", pod.UID, sidecar.Name); *ref != *want {
		t.Errorf("eventRef after the edit = %+v, want %+v", *ref, *want)
	}
	got = nil
	sync(edited)
	if _, err := rt.KillPod(edited, nil, nil); err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	drain()
	for _, e := range got {
		if e == "Killing spec.containers{"+sidecar.Name+"}" {
			t.Errorf("event %q names the container by its place before the edit (all: %q)", e, got)
		}
	}
	if !slices.Contains(got, "Killing spec.initContainers{"+sidecar.Name+"}") {
		t.Errorf("events %q: want the sidecar killed by its new field path", got)
	}
}

// TestKeyOfAPodRecord checks the key a pod's record keeps: the one podkey.Of builds, whether the
// record was made with a key or without, and not another pod's when a pod with the record's UID
// has another name.
func TestKeyOfAPodRecord(t *testing.T) {
	rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	web := podtest.New("web")
	if got := rt.keyOf(web); got != "default/web" {
		t.Errorf("keyOf(web) without a record = %q, want default/web", got)
	}
	rt.podFor(web.UID, web.Name, web.Namespace, "")
	if got := rt.keyOf(web); got != "default/web" {
		t.Errorf("keyOf(web) with a record made without a key = %q, want default/web", got)
	}
	db := podtest.New("db")
	rt.podFor(db.UID, db.Name, db.Namespace, "default/db")
	renamed := db.DeepCopy()
	renamed.Name = "db-2"
	if got := rt.keyOf(renamed); got != "default/db-2" {
		t.Errorf("keyOf(a pod with the record's UID and another name) = %q, want default/db-2", got)
	}
	if got, _ := rt.podIdentity(nil, &kubecontainer.Pod{ID: db.UID, Name: "db", Namespace: "default"}); got != "default/db" {
		t.Errorf("podIdentity(running db) = %q, want default/db", got)
	}
	for _, tt := range []struct {
		key, namespace, name string
		want                 bool
	}{
		{"default/web", "default", "web", true},
		{"default/web", "default", "we", false},
		{"default/web", "defaul", "t/web", false},
		{"defaultxweb", "default", "web", false},
		{"/web", "", "web", true},
	} {
		if got := isKeyOf(tt.key, tt.namespace, tt.name); got != tt.want {
			t.Errorf("isKeyOf(%q, %q, %q) = %v, want %v", tt.key, tt.namespace, tt.name, got, tt.want)
		}
	}
}
