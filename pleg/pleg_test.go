package pleg

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func ev(uid string, t EventType, id string) Event {
	return Event{ID: types.UID(uid), Type: t, Data: id}
}

// TestRelisting ports generic_test.go TestRelisting.
func TestRelisting(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{
		pod("1234", container("c1", exited), container("c2", running), container("c3", unknown)),
		pod("4567", container("c1", exited)),
	}
	want := []Event{ev("1234", ContainerDied, "c1"), ev("1234", ContainerStarted, "c2"), ev("4567", ContainerDied, "c1")}
	if diff := cmp.Diff(want, tp.pleg.Relist()); diff != "" {
		t.Errorf("first Relist() mismatch (-want +got):\n%s", diff)
	}
	if got := tp.pleg.Relist(); len(got) != 0 {
		t.Errorf("Relist() with no change = %v, want no events", got)
	}
	tp.lister.pods = []*kubecontainer.Pod{
		pod("1234", container("c2", exited), container("c3", running)),
		pod("4567", container("c4", running)),
	}
	want = []Event{
		ev("1234", ContainerRemoved, "c1"), ev("1234", ContainerDied, "c2"), ev("1234", ContainerStarted, "c3"),
		ev("4567", ContainerRemoved, "c1"), ev("4567", ContainerStarted, "c4"),
	}
	if diff := cmp.Diff(want, tp.pleg.Relist()); diff != "" {
		t.Errorf("third Relist() mismatch (-want +got):\n%s", diff)
	}
}

// TestRelistingWithSandboxes ports generic_test.go TestRelistingWithSandboxes: sandboxes produce
// container events (ready is running, notready is exited).
func TestRelistingWithSandboxes(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{
		podWithSandboxes("1234", sandbox("c1", kubecontainer.SandboxNotReady), sandbox("c2", kubecontainer.SandboxReady), sandbox("c3", "unknown")),
		podWithSandboxes("4567", sandbox("c1", kubecontainer.SandboxNotReady)),
	}
	want := []Event{ev("1234", ContainerDied, "c1"), ev("1234", ContainerStarted, "c2"), ev("4567", ContainerDied, "c1")}
	if diff := cmp.Diff(want, tp.pleg.Relist()); diff != "" {
		t.Errorf("first Relist() mismatch (-want +got):\n%s", diff)
	}
	if got := tp.pleg.Relist(); len(got) != 0 {
		t.Errorf("Relist() with no change = %v, want no events", got)
	}
	tp.lister.pods = []*kubecontainer.Pod{
		podWithSandboxes("1234", sandbox("c2", kubecontainer.SandboxNotReady), sandbox("c3", kubecontainer.SandboxReady)),
		podWithSandboxes("4567", sandbox("c4", kubecontainer.SandboxReady)),
	}
	want = []Event{
		ev("1234", ContainerRemoved, "c1"), ev("1234", ContainerDied, "c2"), ev("1234", ContainerStarted, "c3"),
		ev("4567", ContainerRemoved, "c1"), ev("4567", ContainerStarted, "c4"),
	}
	if diff := cmp.Diff(want, tp.pleg.Relist()); diff != "" {
		t.Errorf("third Relist() mismatch (-want +got):\n%s", diff)
	}
}

// TestDetectingContainerDeaths ports generic_test.go TestDetectingContainerDeaths.
func TestDetectingContainerDeaths(t *testing.T) {
	tests := []struct {
		name          string
		before, after []*kubecontainer.Pod
		want          []Event
	}{
		{
			name:   "missing containers",
			before: []*kubecontainer.Pod{pod("1234", container("c1", running), container("c2", running), container("c3", exited))},
			after:  []*kubecontainer.Pod{pod("1234", container("c1", running))},
			want:   []Event{ev("1234", ContainerDied, "c2"), ev("1234", ContainerRemoved, "c2"), ev("1234", ContainerRemoved, "c3")},
		},
		{
			name:   "missing pods",
			before: []*kubecontainer.Pod{pod("1234", container("c2", running))},
			after:  nil,
			want:   []Event{ev("1234", ContainerDied, "c2"), ev("1234", ContainerRemoved, "c2")},
		},
	}
	for _, tt := range tests {
		for _, relists := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s after %d relists", tt.name, relists), func(t *testing.T) {
				tp := newTestPLEG(t)
				tp.lister.pods = tt.before
				for range relists {
					tp.pleg.Relist()
				}
				tp.lister.pods = tt.after
				if diff := cmp.Diff(tt.want, tp.pleg.Relist()); diff != "" {
					t.Errorf("Relist() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestRelistWithCache ports generic_test.go TestRelistWithCache.
func TestRelistWithCache(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{
		pod("test-pod-0", container("c0", running)),
		pod("test-pod-1", container("c1", running)),
	}
	status0 := &kubecontainer.PodStatus{UID: "test-pod-0", Name: "name-test-pod-0", Namespace: "ns",
		ContainerStatuses: []kubecontainer.ContainerStatus{container("c0", running)}}
	status1 := &kubecontainer.PodStatus{UID: "test-pod-1", Name: "name-test-pod-1", Namespace: "ns",
		ContainerStatuses: []kubecontainer.ContainerStatus{container("c1", running)}}
	tp.lister.statuses["test-pod-0"] = status0
	tp.lister.statuses["test-pod-1"] = &kubecontainer.PodStatus{}
	tp.lister.errs["test-pod-1"] = errStatus

	got := tp.pleg.Relist()
	if diff := cmp.Diff([]Event{ev("test-pod-0", ContainerStarted, "c0")}, got); diff != "" {
		t.Errorf("first Relist() mismatch (-want +got):\n%s", diff)
	}
	checkCache(t, tp.cache, "test-pod-0", status0, nil)
	checkCache(t, tp.cache, "test-pod-1", &kubecontainer.PodStatus{}, errStatus)

	tp.lister.statuses["test-pod-1"] = status1
	delete(tp.lister.errs, "test-pod-1")
	got = tp.pleg.Relist()
	if diff := cmp.Diff([]Event{ev("test-pod-1", ContainerStarted, "c1")}, got); diff != "" {
		t.Errorf("second Relist() mismatch (-want +got):\n%s", diff)
	}
	checkCache(t, tp.cache, "test-pod-0", status0, nil)
	checkCache(t, tp.cache, "test-pod-1", status1, nil)
	if n := tp.lister.calls["test-pod-0"]; n != 1 {
		t.Errorf("GetPodStatus(test-pod-0) calls = %d, want 1", n)
	}
}

func checkCache(t *testing.T, c *Cache, uid types.UID, want *kubecontainer.PodStatus, wantErr error) {
	t.Helper()
	got, err := c.Get(uid)
	if err != wantErr {
		t.Errorf("Cache.Get(%s) error = %v, want %v", uid, err, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Cache.Get(%s) mismatch (-want +got):\n%s", uid, diff)
	}
}

// TestRemoveCacheEntry ports generic_test.go TestRemoveCacheEntry.
func TestRemoveCacheEntry(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{pod("test-pod", container("c1", running))}
	tp.pleg.Relist()
	tp.lister.pods = nil
	tp.pleg.Relist()
	checkCache(t, tp.cache, "test-pod", &kubecontainer.PodStatus{UID: "test-pod"}, nil)
}

// TestHealthy ports generic_test.go TestHealthy.
func TestHealthy(t *testing.T) {
	tp := newTestPLEG(t)
	steps := []struct {
		name    string
		do      func()
		want    bool
		wantErr string
	}{
		{name: "fresh", do: func() {}, want: false, wantErr: "pleg has yet to be successful"},
		{name: "10m without a relist", do: func() { tp.clk.Advance(10 * time.Minute) }, want: false, wantErr: "pleg has yet to be successful"},
		{name: "relist then 1m", do: func() { tp.pleg.Relist(); tp.clk.Advance(time.Minute) }, want: true},
		{name: "3m more", do: func() { tp.clk.Advance(DefaultRelistThreshold) }, want: false, wantErr: "pleg was last seen active 4m0s ago; threshold is 3m0s"},
		{name: "failed relist does not help", do: func() { tp.lister.listErr = errStatus; tp.pleg.Relist() }, want: false, wantErr: "pleg was last seen active 4m0s ago; threshold is 3m0s"},
		{name: "successful relist", do: func() { tp.lister.listErr = nil; tp.pleg.Relist() }, want: true},
	}
	for _, s := range steps {
		s.do()
		ok, err := tp.pleg.Healthy()
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if ok != s.want || gotErr != s.wantErr {
			t.Errorf("%s: Healthy() = %v, %q, want %v, %q", s.name, ok, gotErr, s.want, s.wantErr)
		}
	}
	var changes []string
	for _, e := range tp.events {
		if e.Event == "health" {
			changes = append(changes, e.From+">"+e.To)
		}
	}
	want := []string{"unhealthy>healthy", "healthy>unhealthy", "unhealthy>healthy"}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("traced health changes mismatch (-want +got):\n%s", diff)
	}
}

// TestReinspect ports generic_test.go TestReinspect.
func TestReinspect(t *testing.T) {
	tests := []struct {
		name                                         string
		requestReinspect, alreadyReinspect           bool
		updateCacheError                             bool
		podDeleted                                   bool
		expectUpdateCache                            bool
		expectReinspect, expectEvent, expectStatusOK bool
	}{
		{name: "RequestReinspect a pod not previously listed, success", requestReinspect: true, expectUpdateCache: true, expectEvent: true, expectStatusOK: true},
		{name: "RequestReinspect a pod not previously listed, failure", requestReinspect: true, updateCacheError: true, expectUpdateCache: true, expectReinspect: true, expectStatusOK: true},
		{name: "RequestReinspect of a pod already listed, success", requestReinspect: true, alreadyReinspect: true, expectUpdateCache: true, expectEvent: true, expectStatusOK: true},
		{name: "RequestReinspect of a pod already listed, failure", requestReinspect: true, alreadyReinspect: true, updateCacheError: true, expectUpdateCache: true, expectReinspect: true, expectStatusOK: true},
		{name: "Don't request reinspection"},
		{name: "Already listed for reinspection, success", alreadyReinspect: true, expectUpdateCache: true, expectEvent: true, expectStatusOK: true},
		{name: "Already listed for reinspection, failure", alreadyReinspect: true, updateCacheError: true, expectUpdateCache: true, expectReinspect: true, expectStatusOK: true},
		{name: "Pod deleted, should clear reinspect", alreadyReinspect: true, podDeleted: true, expectUpdateCache: true, expectEvent: true},
	}
	const uid = types.UID("test-pod")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := newTestPLEG(t)
			p := &kubecontainer.Pod{ID: uid, Name: "name", Namespace: "ns"}
			tp.lister.pods = []*kubecontainer.Pod{p}
			tp.pleg.Relist() // the pod is listed with no containers: no events, no status read
			if tp.lister.calls[uid] != 0 {
				t.Fatalf("GetPodStatus calls after the setup relist = %d, want 0", tp.lister.calls[uid])
			}
			if tt.requestReinspect || tt.alreadyReinspect {
				tp.pleg.RequestReinspect(uid)
			}
			if tt.podDeleted {
				tp.lister.pods = nil
			}
			wantStatus := &kubecontainer.PodStatus{UID: uid, TimeStamp: tp.clk.Now()}
			var wantErr error
			if tt.updateCacheError {
				wantStatus, wantErr = nil, errStatus
				tp.lister.errs[uid] = errStatus
			} else {
				tp.lister.statuses[uid] = wantStatus
			}

			events := tp.pleg.Relist()

			wantCalls := 0
			if tt.expectUpdateCache && !tt.podDeleted {
				wantCalls = 1
			}
			if got := tp.lister.calls[uid]; got != wantCalls {
				t.Errorf("GetPodStatus calls = %d, want %d", got, wantCalls)
			}
			if got := tp.pleg.reinspect[uid]; got != tt.expectReinspect {
				t.Errorf("pod marked for reinspection = %v, want %v", got, tt.expectReinspect)
			}
			if tt.expectEvent {
				if diff := cmp.Diff([]Event{{ID: uid, Type: PodSync}}, events); diff != "" {
					t.Errorf("Relist() mismatch (-want +got):\n%s", diff)
				}
			} else if len(events) != 0 {
				t.Errorf("Relist() = %v, want no events", events)
			}
			switch {
			case tt.podDeleted:
				checkCache(t, tp.cache, uid, &kubecontainer.PodStatus{UID: uid}, nil)
			case tt.expectStatusOK:
				checkCache(t, tp.cache, uid, wantStatus, wantErr)
			}
		})
	}
}

func TestRelistFailureChangesNothing(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{pod("1234", container("c1", running))}
	tp.lister.listErr = errStatus
	if got := tp.pleg.Relist(); got != nil {
		t.Errorf("Relist() with a failing runtime = %v, want nil", got)
	}
	if ts := tp.cache.Timestamp(); !ts.IsZero() {
		t.Errorf("cache timestamp after a failed relist = %v, want zero", ts)
	}
	tp.lister.listErr = nil
	if diff := cmp.Diff([]Event{ev("1234", ContainerStarted, "c1")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("Relist() after recovery mismatch (-want +got):\n%s", diff)
	}
}

func TestNextWake(t *testing.T) {
	tp := newTestPLEG(t)
	g, err := New(Options{Runtime: tp.lister, Cache: tp.cache, Clock: tp.clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	tp.pleg = g
	if w, ok := tp.pleg.NextWake(); !ok || !w.Equal(tp.clk.Now()) {
		t.Errorf("NextWake() before the first relist = %v, %v, want now, true", w, ok)
	}
	tp.clk.Advance(300 * time.Millisecond)
	tp.pleg.Relist()
	if w, _ := tp.pleg.NextWake(); !w.Equal(tp.clk.Now().Add(DefaultRelistPeriod)) {
		t.Errorf("NextWake() after a relist = %v, want one period later", w.Sub(tp.clk.Now()))
	}
}

func TestRelistTracesSentEvents(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{pod("1234", container("c1", running), container("c2", kubecontainer.ContainerStateCreated))}
	tp.pleg.Relist()
	var got []string
	for _, e := range tp.events {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s", e.Component, e.Event, e.Pod, e.UID, e.Container, e.From, e.To, e.Func))
	}
	// c2 is created: ContainerChanged is computed but neither returned nor traced.
	want := []string{
		"pleg|ContainerStarted|ns/name-1234|1234|c1|||relist",
		"pleg|health||||unhealthy|healthy|Healthy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

func TestEventTypeString(t *testing.T) {
	if got := EventType(42).String(); got != "EventType(42)" {
		t.Errorf("EventType(42).String() = %q, want EventType(42)", got)
	}
	if got := ContainerDied.String(); got != "ContainerDied" {
		t.Errorf("ContainerDied.String() = %q", got)
	}
}

func TestNewMissingOptions(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New(Options{}) = %v, want minikubelet.ErrMissingOption", err)
	}
	for _, name := range []string{"Runtime", "Cache", "Clock", "Tracer"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("New(Options{}) = %q, want it to name %s", err, name)
		}
	}
}

// TestRelistKeepsItsOwnCopy checks that a pod's old listing is the PLEG's own: a lister that
// writes its next listing over the arrays of the last one (one backing array per listing, reused)
// does not change what the next relist compares with, and the record's storage, reused from
// relist to relist, follows each change.
func TestRelistKeepsItsOwnCopy(t *testing.T) {
	tp := newTestPLEG(t)
	p := pod("1234", container("c1", running), container("c2", running))
	tp.lister.pods = []*kubecontainer.Pod{p}
	if diff := cmp.Diff([]Event{ev("1234", ContainerStarted, "c1"), ev("1234", ContainerStarted, "c2")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("first Relist() mismatch (-want +got):\n%s", diff)
	}
	for _, step := range []struct {
		name  string
		state kubecontainer.ContainerState
		want  []Event
	}{
		{"c2 exits, written in place", exited, []Event{ev("1234", ContainerDied, "c2")}},
		{"no change", exited, nil},
		{"c2 runs again, written in place", running, []Event{ev("1234", ContainerStarted, "c2")}},
		{"no change again", running, nil},
	} {
		p.Containers[1].State = step.state
		if diff := cmp.Diff(step.want, tp.pleg.Relist(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: Relist() mismatch (-want +got):\n%s", step.name, diff)
		}
	}
}

// TestRelistKeepsOneContainerInItsRecord checks the same for a pod of one container and one
// sandbox, whose copy lives in the record itself, as its lists grow past one entry and shrink back.
func TestRelistKeepsOneContainerInItsRecord(t *testing.T) {
	tp := newTestPLEG(t)
	p := pod("1234", container("c1", running))
	tp.lister.pods = []*kubecontainer.Pod{p}
	if diff := cmp.Diff([]Event{ev("1234", ContainerStarted, "c1")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("first Relist() mismatch (-want +got):\n%s", diff)
	}
	r := tp.pleg.records["1234"]
	if len(r.kept.Containers) != 1 || &r.kept.Containers[0] != &r.container[0] {
		t.Fatalf("the record's copy of one container is not in the record")
	}
	p.Containers[0].State = exited
	if diff := cmp.Diff([]Event{ev("1234", ContainerDied, "c1")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("c1 exits, written in place: Relist() mismatch (-want +got):\n%s", diff)
	}
	p.Containers = append(p.Containers, container("c2", running))
	if diff := cmp.Diff([]Event{ev("1234", ContainerStarted, "c2")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("c2 added: Relist() mismatch (-want +got):\n%s", diff)
	}
	p.Containers = p.Containers[1:]
	if diff := cmp.Diff([]Event{ev("1234", ContainerRemoved, "c1")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("c1 removed: Relist() mismatch (-want +got):\n%s", diff)
	}
	p.Containers[0].State = exited
	if diff := cmp.Diff([]Event{ev("1234", ContainerDied, "c2")}, tp.pleg.Relist()); diff != "" {
		t.Errorf("c2 exits, written in place: Relist() mismatch (-want +got):\n%s", diff)
	}
}
