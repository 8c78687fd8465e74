package syncloop

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/trace"
)

// step is the part of a trace event that the sequence tests compare.
type step struct {
	Component trace.Component
	Event     string
	Op        string
	To        string
	Func      string
}

// subsequence returns the first len(want) events of got, in order, that match want's steps one
// after the other; comparing it with want shows the first step missing.
func subsequence(got []trace.Event, want []step) []step {
	var out []step
	for _, e := range got {
		if len(out) == len(want) {
			break
		}
		w := want[len(out)]
		s := step{Component: e.Component, Event: e.Event, Func: e.Func}
		if w.Op != "" {
			s.Op = e.Op
		}
		if w.To != "" || (e.Event == "state" && w.Event == "state") {
			s.To = e.To
		}
		if s == w {
			out = append(out, s)
		}
	}
	return out
}

// runningWithMirror is the condition "the static pod's mirror pod shows Running in the API".
func runningWithMirror(e *env, pod *v1.Pod) func() bool {
	return func() bool {
		m := e.apiPod(pod.Namespace, pod.Name)
		return m != nil && m.Status.Phase == v1.PodRunning && m.Annotations[kubecontainer.ConfigMirrorAnnotationKey] == string(pod.UID)
	}
}

func TestStaticPodRunsWithMirrorPod(t *testing.T) {
	e := newEnv(t, envOptions{latencies: fakeruntime.DefaultLatencies})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	if !e.run(30*time.Second, runningWithMirror(e, pod)) {
		t.Fatalf("mirror pod of %s not Running after %v", pod.Name, e.now())
	}
	mirror := e.apiPod(pod.Namespace, pod.Name)
	if got, want := mirror.OwnerReferences, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: testNode}}; len(got) != 1 || got[0].Kind != want[0].Kind || got[0].Name != want[0].Name {
		t.Errorf("mirror owner references = %v, want the node %s", got, testNode)
	}
	if mirror.UID == pod.UID {
		t.Errorf("mirror UID = %s, want a UID of its own", mirror.UID)
	}
	if got := e.phase(pod.UID); got != v1.PodRunning {
		t.Errorf("status manager phase of %s = %s, want Running", pod.UID, got)
	}
	want := []string{
		`Normal Pulling Pulling image "registry.k8s.io/pause:3.10"`,
		`Normal Pulled Successfully pulled image "registry.k8s.io/pause:3.10"`,
		"Normal Created Created container: app",
		"Normal Started Started container app",
	}
	if diff := cmp.Diff(want, e.events.list()); diff != "" {
		t.Errorf("Kubernetes events (-want +got):\n%s", diff)
	}
	node, err := e.client.CoreV1().Nodes().Get(context.Background(), testNode, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	if got := node.Status.Capacity.Pods().Value(); got != 110 {
		t.Errorf("node pods capacity = %d, want 110", got)
	}
}

func TestStaticPodRemovalFlow(t *testing.T) {
	e := newEnv(t, envOptions{latencies: fakeruntime.Latencies{ContainerStop: 2 * time.Second}})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	if !e.run(30*time.Second, runningWithMirror(e, pod)) {
		t.Fatalf("mirror pod of %s not Running after %v", pod.Name, e.now())
	}
	start := len(e.trace())
	e.setFile() // the manifest is deleted
	gone := func() bool {
		_, known := e.loop.Workers().State(pod.UID)
		_, inManager := e.pm.GetMirrorPodByPod(pod)
		return !known && !inManager && e.apiPod(pod.Namespace, pod.Name) == nil
	}
	if !e.run(30*time.Second, gone) {
		t.Fatalf("static pod %s not cleaned up after %v", pod.Name, e.now())
	}
	got := e.trace()[start:]
	want := []step{
		// 1. The source change becomes a REMOVE.
		{Component: trace.PodConfig, Event: "update", Op: "REMOVE", Func: "podStorage.merge"},
		// 2. HandlePodRemoves: the pod manager forgets the static pod, the worker gets a kill.
		{Component: trace.SyncLoop, Event: "config", Op: "REMOVE", Func: "HandlePodRemoves"},
		{Component: trace.PodManager, Event: "remove", Func: "RemovePod"},
		// 3. Termination requested.
		{Component: trace.PodWorkers, Event: "state", To: "terminating", Func: "UpdatePod"},
		// 4. SyncTerminatingPod kills the container with the spec's grace.
		{Component: trace.PodWorkers, Event: "sync", Op: "terminating", Func: "SyncTerminatingPod"},
		{Component: trace.Runtime, Event: "killing", Func: "killContainer"},
		{Component: trace.Runtime, Event: "exited", Func: "killContainer"},
		{Component: trace.PLEG, Event: "ContainerDied", Func: "relist"},
		{Component: trace.PodWorkers, Event: "state", To: "terminated", Func: "completeTerminating"},
		// 5. SyncTerminatedPod, then the worker is finished.
		{Component: trace.PodWorkers, Event: "sync", Op: "terminated", Func: "SyncTerminatedPod"},
		{Component: trace.PodWorkers, Event: "state", To: "finished", Func: "completeTerminated"},
		// 6. Housekeeping forgets the worker.
		{Component: trace.PodWorkers, Event: "state", Func: "removeTerminatedWorker"},
		// 7. Housekeeping deletes the orphaned mirror pod.
		{Component: trace.Housekeeping, Event: "delete-mirror", Func: "HandlePodCleanups"},
		// 8. The API echoes the deletion; the mirror has no static pod any more.
		{Component: trace.PodConfig, Event: "update", Op: "REMOVE", Func: "podStorage.merge"},
		{Component: trace.SyncLoop, Event: "config", Op: "REMOVE", Func: "HandlePodRemoves"},
		{Component: trace.SyncLoop, Event: "skip", Func: "HandlePodRemoves"},
	}
	if diff := cmp.Diff(want, subsequence(got, want)); diff != "" {
		for _, ev := range got {
			t.Log(ev.Text())
		}
		t.Errorf("removal flow (-want +got):\n%s", diff)
	}
	// The mirror pod is protected while the static pod terminates: no delete before terminated.
	for _, ev := range got {
		if ev.Component == trace.PodWorkers && ev.To == "terminated" {
			break
		}
		if ev.Event == "delete-mirror" {
			t.Errorf("mirror pod deleted at %v, before the static pod was terminated", ev.T)
		}
	}
	// SyncTerminatingPod's final status is written when the kill ends (2s after it started),
	// not when the kill was asked for.
	var killStart, killEnd, finalStatus time.Duration = -1, -1, -1
	for _, ev := range got {
		switch {
		case ev.Component == trace.Runtime && ev.Event == "killing":
			killStart = ev.T
		case ev.Component == trace.Runtime && ev.Event == "exited":
			killEnd = ev.T
		case killEnd >= 0 && finalStatus < 0 && ev.Component == trace.Status && ev.Func == "SetPodStatus":
			finalStatus = ev.T
		}
	}
	if killEnd-killStart != 2*time.Second || finalStatus != killEnd {
		t.Errorf("kill from %v to %v, final status at %v: want a 2s kill and the final status at its end", killStart, killEnd, finalStatus)
	}
}

func TestMirrorPodDeletedOutOfBandIsRecreated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace *int64
		limit time.Duration
	}{
		// A graceful delete sets deletionTimestamp: DELETE → HandlePodUpdates → SyncPod deletes it
		// with a UID precondition and creates a new one at once.
		{name: "graceful", grace: nil, limit: 2 * time.Second},
		// A forced delete removes the object: REMOVE → HandlePodRemoves syncs with the removed mirror,
		// which still matches, so the mirror comes back on a later sync (the 60-90s resync at most).
		{name: "forced", grace: ptr.To[int64](0), limit: 95 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
			e.setFile(pod)
			if !e.run(30*time.Second, runningWithMirror(e, pod)) {
				t.Fatalf("mirror pod of %s not Running after %v", pod.Name, e.now())
			}
			old := e.apiPod(pod.Namespace, pod.Name)
			err := e.client.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: tc.grace})
			if err != nil {
				t.Fatalf("delete mirror pod: %v", err)
			}
			recreated := func() bool {
				m := e.apiPod(pod.Namespace, pod.Name)
				return m != nil && m.UID != old.UID && m.DeletionTimestamp == nil
			}
			if !e.run(tc.limit, recreated) {
				t.Fatalf("mirror pod not recreated within %v", tc.limit)
			}
			if s, _ := e.loop.Workers().State(pod.UID); s != podworkers.Sync {
				t.Errorf("worker state of %s = %v, want sync", pod.UID, s)
			}
		})
	}
}

func TestStaticPodEditReplacesMirrorAfterOldWorkerFinished(t *testing.T) {
	e := newEnv(t, envOptions{latencies: fakeruntime.Latencies{ContainerStop: 3 * time.Second}})
	oldPod := staticPod("web", "uid-web-1", v1.RestartPolicyAlways)
	e.setFile(oldPod)
	if !e.run(30*time.Second, runningWithMirror(e, oldPod)) {
		t.Fatalf("mirror pod of %s not Running after %v", oldPod.Name, e.now())
	}
	oldMirror := e.apiPod(oldPod.Namespace, oldPod.Name)
	start := len(e.trace())

	// The edited manifest has no UID, so it hashes to a new one: REMOVE old, ADD new.
	newPod := staticPod("web", "uid-web-2", v1.RestartPolicyAlways)
	newPod.Spec.Containers[0].Image = "registry.k8s.io/pause:3.11"
	e.setFile(newPod)
	if !e.run(60*time.Second, runningWithMirror(e, newPod)) {
		t.Fatalf("mirror pod of the edited %s not Running after %v", newPod.Name, e.now())
	}
	got := e.trace()[start:]
	var oldFinished, blocked, mirrorDeleted, mirrorCreated time.Duration = -1, -1, -1, -1
	for _, ev := range got {
		switch {
		case ev.UID == string(oldPod.UID) && ev.Component == trace.PodWorkers && ev.To == "finished":
			oldFinished = ev.T
		case ev.UID == string(newPod.UID) && ev.Event == "blocked" && blocked < 0:
			blocked = ev.T
		case ev.Component == trace.Mirror && ev.Event == "reconcile" && ev.UID == string(oldMirror.UID):
			if ev.Reason != "MirrorPodOutdated" {
				t.Errorf("old mirror deleted with reason %q, want MirrorPodOutdated", ev.Reason)
			}
		case ev.Component == trace.Mirror && ev.Event == "delete" && ev.UID == string(oldMirror.UID) && ev.Reason == "":
			mirrorDeleted = ev.T
		case ev.Component == trace.Mirror && ev.Event == "create" && ev.UID == string(newPod.UID) && ev.Reason == "":
			mirrorCreated = ev.T
		}
	}
	if blocked < 0 || oldFinished < 0 || mirrorDeleted < 0 || mirrorCreated < 0 {
		for _, ev := range got {
			t.Log(ev.Text())
		}
		t.Fatalf("blocked=%v oldFinished=%v mirrorDeleted=%v mirrorCreated=%v, want all seen", blocked, oldFinished, mirrorDeleted, mirrorCreated)
	}
	if !(blocked < oldFinished && oldFinished <= mirrorDeleted && mirrorDeleted <= mirrorCreated) {
		t.Errorf("new pod blocked at %v, old finished at %v, old mirror deleted at %v, new mirror created at %v: want that order",
			blocked, oldFinished, mirrorDeleted, mirrorCreated)
	}
}

func TestHousekeepingWaitsForSources(t *testing.T) {
	ready := false
	e := newEnv(t, envOptions{standalone: true, sourcesReady: func() bool { return ready }})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	if !e.run(10*time.Second, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("%s not Running after %v", pod.Name, e.now())
	}
	e.setFile() // removed before every source was seen: the kill is skipped
	e.runFor(5 * time.Second)
	if s, _ := e.loop.Workers().State(pod.UID); s != podworkers.Sync {
		t.Errorf("worker state of %s with sources not ready = %v, want sync", pod.UID, s)
	}
	var skips, cleanups int
	for _, ev := range e.trace() {
		if ev.Component == trace.Housekeeping && ev.Event == "skip" {
			skips++
		}
		if ev.Func == "FailedToDeletePod" || ev.Reason == "FailedToDeletePod" {
			cleanups++
		}
	}
	if skips == 0 {
		t.Error("no housekeeping skip traced while sources were not ready")
	}
	if cleanups != 1 {
		t.Errorf("traced %d refused deletes, want 1", cleanups)
	}

	ready = true
	if !e.run(10*time.Second, func() bool { _, known := e.loop.Workers().State(pod.UID); return !known }) {
		t.Fatalf("worker of %s not forgotten after sources became ready", pod.UID)
	}
	pods, err := e.rt.GetPods(false)
	if err != nil {
		t.Fatalf("GetPods() = %v", err)
	}
	if len(pods) != 0 {
		t.Errorf("runtime still runs %d pods, want 0", len(pods))
	}
}

// TestTraceIsDeterministic runs the same scenario twice and compares the traces byte for byte.
func TestTraceIsDeterministic(t *testing.T) {
	render := func() string {
		e := newEnv(t, envOptions{latencies: fakeruntime.DefaultLatencies})
		pods := []*v1.Pod{
			staticPod("a", "uid-a", v1.RestartPolicyAlways),
			staticPod("b", "uid-b", v1.RestartPolicyAlways),
			crashingPod(v1.RestartPolicyAlways, "1"),
		}
		e.setFile(pods...)
		e.runFor(40 * time.Second)
		e.setFile(pods[1:]...)
		e.runFor(20 * time.Second)
		var out string
		for _, ev := range e.trace() {
			out += ev.Text() + "\n"
		}
		return out
	}
	first, second := render(), render()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second run's trace differs (-first +second):\n%s", diff)
	}
}
