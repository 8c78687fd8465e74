package kubeletserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// crashingPod is web: its app container ran twice; the first instance exited with 1 at 12s, the
// second runs since 20s. A second container, side, is still being created.
func crashingPod() kubeletserver.PodView {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web",
			Annotations: map[string]string{kubeletserver.AnnotationLog + "app": "hello\nworld"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox:1.36"}, {Name: "side", Image: "nginx:1.27"}}},
	}
	return kubeletserver.PodView{
		Pod: pod, HasStatus: true,
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
			{Name: "app", ContainerID: "fake://c-000002", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, ContainerID: "fake://c-000001"}}},
			{Name: "side", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
		}},
		Runtime: &kubecontainer.PodStatus{UID: pod.UID, Name: pod.Name, Namespace: pod.Namespace, ContainerStatuses: []kubecontainer.ContainerStatus{
			{ID: "c-000002", Name: "app", Image: "busybox:1.36", State: kubecontainer.ContainerStateRunning, StartedAt: t0.Add(20 * time.Second), RestartCount: 1},
			{ID: "c-000001", Name: "app", Image: "busybox:1.36", State: kubecontainer.ContainerStateExited, StartedAt: t0.Add(10 * time.Second), FinishedAt: t0.Add(12 * time.Second), ExitCode: 1},
			{ID: "c-000003", Name: "side", Image: "nginx:1.27", State: kubecontainer.ContainerStateCreated},
		}},
	}
}

type fixture struct {
	clk   *clocktesting.FakePassiveClock
	board *kubeletserver.Board
	h     *kubeletserver.NodeHandler
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clk: clocktesting.NewFakePassiveClock(t0.Add(30 * time.Second)), board: kubeletserver.NewBoard("node-1")}
	f.board.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(30 * time.Second), Pods: []kubeletserver.PodView{crashingPod()}})
	var err error
	f.h, err = kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{
		Board: f.board, Clock: f.clk, Configz: map[string]string{"syncFrequency": "1m0s"},
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "kubelet_node_name{node=\"node-1\"} 1\n")
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) get(path string) (int, string) {
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestHealthz(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		path     string
		code     int
		body     string
		clockAdd time.Duration
	}{
		{"/healthz", 200, "ok", 0},
		{"/healthz?verbose", 200, "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n", 0},
		{"/healthz/syncloop", 200, "ok", 0},
		{"/healthz", 500, "[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n", 6 * time.Minute},
		{"/healthz?exclude=syncloop", 200, "ok", 6 * time.Minute},
		{"/healthz/syncloop", 500, "internal server error: sync Loop took longer than expected\n", 6 * time.Minute},
	} {
		f.clk.SetTime(t0.Add(30*time.Second + tc.clockAdd))
		code, body := f.get(tc.path)
		if code != tc.code || body != tc.body {
			t.Errorf("GET %s after %v = %d %q, want %d %q", tc.path, tc.clockAdd, code, body, tc.code, tc.body)
		}
	}
}

func TestPodsAndRunningPods(t *testing.T) {
	f := newFixture(t)
	_, body := f.get("/pods")
	var list v1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "web" || list.Items[0].Status.Phase != v1.PodRunning {
		t.Errorf("/pods = %s", body)
	}
	_, body = f.get("/runningpods/")
	list = v1.PodList{}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	want := []v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: types.UID("uid-web")},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox:1.36"}}}}}
	if diff := cmp.Diff(want, list.Items); diff != "" {
		t.Errorf("/runningpods/ (-want +got):\n%s", diff)
	}
	if _, body := f.get("/configz"); body != `{"kubeletconfig":{"syncFrequency":"1m0s"}}`+"\n" {
		t.Errorf("/configz = %s", body)
	}
	if _, body := f.get("/metrics"); !strings.Contains(body, "kubelet_node_name") {
		t.Errorf("/metrics = %s", body)
	}
}

func TestContainerLogs(t *testing.T) {
	f := newFixture(t)
	started2 := "minikubelet: container app started (id c-000002, image busybox:1.36, restart 1)\n"
	started1 := "minikubelet: container app started (id c-000001, image busybox:1.36, restart 0)\n"
	for _, tc := range []struct {
		query string
		code  int
		body  string
	}{
		{"", 200, started2 + "hello\nworld\n"},
		{"?previous=true", 200, started1 + "hello\nworld\nminikubelet: container app exited with code 1\n"},
		{"?previous=true&tailLines=1", 200, "minikubelet: container app exited with code 1\n"},
		{"?tailLines=0", 200, ""},
		{"?timestamps=true&tailLines=1", 200, "2026-01-01T00:00:20.000000000Z world\n"},
		{"?limitBytes=10", 200, "minikubele"},
		{"?previous=true&sinceSeconds=19", 200, "minikubelet: container app exited with code 1\n"},
		{"?sinceTime=2026-01-01T00:00:11Z&previous=1", 200, "minikubelet: container app exited with code 1\n"},
		{"?sinceSeconds=0", 422, ""},
		{"?sinceSeconds=5&sinceTime=2026-01-01T00:00:11Z", 422, ""},
		{"?tailLines=-1", 422, ""},
		{"?follow=maybe", 400, ""},
	} {
		code, body := f.get("/containerLogs/default/web/app" + tc.query)
		if code != tc.code || (tc.code == 200 && body != tc.body) {
			t.Errorf("logs%s = %d %q, want %d %q", tc.query, code, body, tc.code, tc.body)
		}
	}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/containerLogs/default/nope/app", 404, "pod \"nope\" does not exist\n"},
		{"/containerLogs/default/web/nope", 404, "container \"nope\" not found in pod \"web\"\n"},
		{"/containerLogs/default/web/side", 400, "container \"side\" in pod \"web\" is waiting to start: ContainerCreating\n"},
		{"/containerLogs/default/web/side?previous=true", 400, "previous terminated container \"side\" in pod \"web\" not found\n"},
	} {
		if code, body := f.get(tc.path); code != tc.code || body != tc.body {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, code, body, tc.code, tc.body)
		}
	}
}

// TestCrashLoopLogs: while a container waits in CrashLoopBackOff, its current log and its
// previous log are both the last terminated instance's, as on a kubelet.
func TestCrashLoopLogs(t *testing.T) {
	f := newFixture(t)
	pv := crashingPod()
	pv.Status.ContainerStatuses[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	pv.Status.ContainerStatuses[0].LastTerminationState.Terminated.ContainerID = "fake://c-000002"
	pv.Runtime.ContainerStatuses[0].State = kubecontainer.ContainerStateExited
	pv.Runtime.ContainerStatuses[0].FinishedAt = t0.Add(22 * time.Second)
	f.board.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(30 * time.Second), Pods: []kubeletserver.PodView{pv}})
	want := "minikubelet: container app exited with code 0\n"
	for _, q := range []string{"?tailLines=1", "?previous=true&tailLines=1"} {
		if code, body := f.get("/containerLogs/default/web/app" + q); code != 200 || body != want {
			t.Errorf("logs%s = %d %q, want %q", q, code, body, want)
		}
	}
}

// TestRemovedInstanceLogs: once the runtime no longer has the instance the API status names
// (the container deletor removed the previous one), the kubelet has already answered 200 when the
// runtime's ContainerStatus fails, and the error's text is the body, never an empty success.
func TestRemovedInstanceLogs(t *testing.T) {
	f := newFixture(t)
	pv := crashingPod()
	pv.Runtime.ContainerStatuses = slices.DeleteFunc(pv.Runtime.ContainerStatuses, func(c kubecontainer.ContainerStatus) bool { return c.ID == "c-000001" })
	f.board.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(30 * time.Second), Pods: []kubeletserver.PodView{pv}})
	for _, q := range []string{"?previous=true", "?previous=true&follow=true", "?previous=true&tailLines=1"} {
		if code, body := f.get("/containerLogs/default/web/app" + q); code != 200 || body != "unable to retrieve container logs for fake://c-000001" {
			t.Errorf("logs%s = %d %q, want 200 with the kubelet's error for a removed instance", q, code, body)
		}
	}
	if code, body := f.get("/containerLogs/default/web/app?tailLines=1"); code != 200 || body != "world\n" {
		t.Errorf("logs?tailLines=1 = %d %q, want the running instance's last line", code, body)
	}
}

// TestFollow: a follower gets the lines so far, then the exit line once a snapshot shows the
// instance exited, and the stream ends.
func TestFollow(t *testing.T) {
	f := newFixture(t)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/containerLogs/default/web/app?follow=true", nil))
	}()
	exited := crashingPod()
	exited.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, ContainerID: "fake://c-000002"}}
	exited.Runtime.ContainerStatuses[0].State = kubecontainer.ContainerStateExited
	exited.Runtime.ContainerStatuses[0].FinishedAt = t0.Add(40 * time.Second)
	exited.Runtime.ContainerStatuses[0].ExitCode = 137
	f.board.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(40 * time.Second), Pods: []kubeletserver.PodView{exited}})
	<-done
	want := "minikubelet: container app started (id c-000002, image busybox:1.36, restart 1)\nhello\nworld\nminikubelet: container app exited with code 137\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("followed log = %q, want %q", got, want)
	}
}

func TestUnsupported(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/exec/default/web/app?command=ls", "/attach/default/web/app", "/portForward/default/web", "/run/default/web/app"} {
		code, body := f.get(p)
		var st metav1.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusNotImplemented || !strings.Contains(st.Message, "not supported by the simulated runtime") {
			t.Errorf("GET %s = %d %s", p, code, body)
		}
	}
}

// TestMadeUpUsageIsConsistent: the summary's pod figures are the sums of its containers', the
// node's include them, and /metrics/resource shows the same numbers.
func TestMadeUpUsageIsConsistent(t *testing.T) {
	f := newFixture(t)
	_, body := f.get("/stats/summary")
	var s statsv1alpha1.Summary
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 || len(s.Pods[0].Containers) != 1 {
		t.Fatalf("summary = %s", body)
	}
	p, c := s.Pods[0], s.Pods[0].Containers[0]
	if *p.Memory.WorkingSetBytes != *c.Memory.WorkingSetBytes || *p.CPU.UsageNanoCores != *c.CPU.UsageNanoCores {
		t.Errorf("pod usage differs from its only container's: %s", body)
	}
	if *s.Node.Memory.WorkingSetBytes <= *p.Memory.WorkingSetBytes || s.Node.NodeName != "node-1" {
		t.Errorf("node usage does not include the pod's: %s", body)
	}
	// 10s running at the container's rate.
	if want := 10 * *c.CPU.UsageNanoCores; *c.CPU.UsageCoreNanoSeconds != want {
		t.Errorf("usageCoreNanoSeconds = %d, want %d", *c.CPU.UsageCoreNanoSeconds, want)
	}
	_, res := f.get("/metrics/resource")
	ws := "container_memory_working_set_bytes{container=\"app\",namespace=\"default\",pod=\"web\"} " + jsonNum(*c.Memory.WorkingSetBytes)
	if !strings.Contains(res, ws) || !strings.Contains(res, "# HELP node_cpu_usage_seconds_total [STABLE]") {
		t.Errorf("/metrics/resource lacks %q:\n%s", ws, res)
	}
}

func jsonNum(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestHandlerAsksForASnapshot: on a board that takes snapshots on demand, /pods waits for a
// snapshot taken after the request; /healthz reads the last pass and asks for none; a log
// follower is followed while it follows.
func TestHandlerAsksForASnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		asks := f.board.Demand(500 * time.Millisecond)
		f.clk.SetTime(t0.Add(time.Minute))
		f.board.Passed(t0.Add(time.Minute))
		if code, body := f.get("/healthz"); code != 200 || body != "ok" || len(asks) > 0 {
			t.Errorf("GET /healthz = %d %q, ask pending %v; want 200 ok and no ask", code, body, len(asks) > 0)
		}

		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pods", nil))
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("GET /pods answered from a snapshot taken 30s before it")
		case <-asks:
		}
		f.board.Take(func() *kubeletserver.Snapshot {
			return &kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(time.Minute)}
		})
		<-done
		if got, want := rec.Body.String(), `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`; strings.TrimSpace(got) != want {
			t.Errorf("GET /pods = %q, want the new snapshot's %q", got, want)
		}

		f.board.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(time.Minute), Pods: []kubeletserver.PodView{crashingPod()}})
		ctx, cancel := context.WithCancel(t.Context())
		follow := make(chan struct{})
		go func() {
			defer close(follow)
			f.h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, "/containerLogs/default/web/app?follow=true", nil))
		}()
		synctest.Wait()
		if !f.board.Followed() {
			t.Error("Followed() = false while a log follower waits")
		}
		cancel()
		<-follow
		if f.board.Followed() {
			t.Error("Followed() = true once the follower has gone")
		}
	})
}

// TestSyncLoopCheckReadsPasses: /healthz/syncloop reads the last pass that dispatched, not the
// age of a snapshot: an old snapshot with a recent pass is healthy, and a recent snapshot taken
// on demand with no pass for longer than the threshold is not.
func TestSyncLoopCheckReadsPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		f.board.Demand(500 * time.Millisecond)
		f.clk.SetTime(t0.Add(10 * time.Minute))
		f.board.Passed(t0.Add(9 * time.Minute))
		if code, body := f.get("/healthz/syncloop"); code != 200 {
			t.Errorf("GET /healthz/syncloop a minute after a pass, the snapshot ten = %d %q, want 200", code, body)
		}
		f.board.Take(func() *kubeletserver.Snapshot {
			return &kubeletserver.Snapshot{Node: "node-1", Taken: t0.Add(16 * time.Minute)}
		})
		f.clk.SetTime(t0.Add(16 * time.Minute))
		if code, body := f.get("/healthz/syncloop"); code != 500 {
			t.Errorf("GET /healthz/syncloop seven minutes after a pass, a snapshot just taken = %d %q, want 500", code, body)
		}
	})
}
