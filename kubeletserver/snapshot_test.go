package kubeletserver_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

// fakeKubelet holds two pods: one with a status and a runtime view, one the status manager and
// the PLEG have not seen yet.
type fakeKubelet struct {
	pods     []*v1.Pod
	statuses map[types.UID]v1.PodStatus
	runtime  map[types.UID]*kubecontainer.PodStatus
}

func (k fakeKubelet) GetPods() []*v1.Pod { return k.pods }

func (k fakeKubelet) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	s, ok := k.statuses[uid]
	return s, ok
}

func (k fakeKubelet) GetRuntimeStatus(uid types.UID) *kubecontainer.PodStatus { return k.runtime[uid] }

func TestCaptureReadsTheKubelet(t *testing.T) {
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"}}
	db := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db", UID: "uid-db"}}
	rs := &kubecontainer.PodStatus{UID: "uid-web", Name: "web", Namespace: "default"}
	k := fakeKubelet{
		pods:     []*v1.Pod{web, db},
		statuses: map[types.UID]v1.PodStatus{"uid-web": {Phase: v1.PodRunning}},
		runtime:  map[types.UID]*kubecontainer.PodStatus{"uid-web": rs},
	}
	got := kubeletserver.Capture("node-1", k, t0)
	want := &kubeletserver.Snapshot{Node: "node-1", Taken: t0, Pods: []kubeletserver.PodView{
		{Pod: web, Status: v1.PodStatus{Phase: v1.PodRunning}, HasStatus: true, Runtime: rs},
		{Pod: db},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Capture() (-want +got):\n%s", diff)
	}
}

// stampedKubelet is a fakeKubelet with status stamps that counts the statuses it copies.
type stampedKubelet struct {
	fakeKubelet
	stamps map[types.UID]uint64
	copies *int
}

func (k stampedKubelet) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	*k.copies++
	return k.fakeKubelet.GetPodStatus(uid)
}

func (k stampedKubelet) PodStatusStamp(uid types.UID) (uint64, bool) {
	s, ok := k.stamps[uid]
	return s, ok
}

// TestCaptureAfterReusesUnchangedStatuses: the snapshot after another is the same as a fresh
// one, and copies only the statuses whose stamps changed (or that are new).
func TestCaptureAfterReusesUnchangedStatuses(t *testing.T) {
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"}}
	db := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db", UID: "uid-db"}}
	cache := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cache", UID: "uid-cache"}}
	copies := 0
	k := stampedKubelet{
		fakeKubelet: fakeKubelet{
			pods:     []*v1.Pod{web, db},
			statuses: map[types.UID]v1.PodStatus{"uid-web": {Phase: v1.PodRunning}, "uid-db": {Phase: v1.PodPending}},
		},
		stamps: map[types.UID]uint64{"uid-web": 1, "uid-db": 2},
		copies: &copies,
	}
	first := kubeletserver.CaptureAfter(nil, "node-1", k, t0)
	if copies != 2 {
		t.Errorf("first snapshot copied %d statuses, want 2", copies)
	}

	// db's status changes, cache is new with a status, web's is as it was.
	k.statuses = map[types.UID]v1.PodStatus{"uid-web": {Phase: v1.PodRunning}, "uid-db": {Phase: v1.PodRunning}, "uid-cache": {Phase: v1.PodPending}}
	k.stamps = map[types.UID]uint64{"uid-web": 1, "uid-db": 3, "uid-cache": 4}
	k.pods = []*v1.Pod{web, db, cache}
	copies = 0
	second := kubeletserver.CaptureAfter(first, "node-1", k, t0)
	if copies != 2 {
		t.Errorf("second snapshot copied %d statuses, want 2 (db's changed, cache's new)", copies)
	}
	if diff := cmp.Diff(kubeletserver.Capture("node-1", k.fakeKubelet, t0), second,
		cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".StatusStamp" }, cmp.Ignore())); diff != "" {
		t.Errorf("CaptureAfter() differs from Capture() (-capture +after):\n%s", diff)
	}

	// A kubelet without stamps is copied every time.
	copies = 0
	plain := countingKubelet{k.fakeKubelet, &copies}
	kubeletserver.CaptureAfter(second, "node-1", plain, t0)
	if copies != 3 {
		t.Errorf("a snapshot of a kubelet without stamps copied %d statuses, want 3", copies)
	}
}

// countingKubelet is a fakeKubelet, without stamps, that counts the statuses it copies.
type countingKubelet struct {
	fakeKubelet
	copies *int
}

func (k countingKubelet) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	*k.copies++
	return k.fakeKubelet.GetPodStatus(uid)
}
