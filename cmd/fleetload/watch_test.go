package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func testNode(name string, ready v1.ConditionStatus) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}}}}
}

func testPod(ns, name string, phase v1.PodPhase, ready v1.ConditionStatus) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Status: v1.PodStatus{Phase: phase}}
	if ready != "" {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: ready}}
	}
	return p
}

// TestFleetWatchFollowsTheWatches: the watches, started before the first create, count the Ready
// nodes and the created, Running and Ready pods of the default namespace as they change; done
// closes once every node is Ready and every pod Running and Ready, not before, and the times are
// the watches' moments, counted from the first create.
func TestFleetWatchFollowsTheWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(
			testNode("sim-0", v1.ConditionTrue), testNode("sim-1", v1.ConditionFalse),
			testPod("other", "elsewhere", v1.PodRunning, v1.ConditionTrue), // not the default namespace: not counted
		)
		w := newTestWatch(ctx, t, client, 2, 2)
		begin := time.Now()
		w.start(begin)
		pods := client.CoreV1().Pods("default")
		// load-0's create returns at once; the watch sees load-1 one second before its create
		// returns, as a loaded client may.
		if _, err := pods.Create(ctx, testPod("default", "load-0", v1.PodPending, ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		w.created("load-0", "", time.Now())
		time.Sleep(time.Second)
		if _, err := pods.Create(ctx, testPod("default", "load-1", v1.PodPending, ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(time.Second)
		w.created("load-1", "", time.Now())
		if got, want := w.snapshot(), (counts{created: 2, readyNodes: 1}); got != want {
			t.Errorf("after the creates: %+v, want %+v", got, want)
		}
		time.Sleep(3 * time.Second) // t = 5 s: load-0 runs, then is Ready
		if _, err := pods.UpdateStatus(ctx, testPod("default", "load-0", v1.PodRunning, v1.ConditionFalse), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(time.Second) // t = 6 s
		if _, err := pods.UpdateStatus(ctx, testPod("default", "load-0", v1.PodRunning, v1.ConditionTrue), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(2 * time.Second) // t = 8 s: load-1 runs and is Ready at once
		if _, err := pods.UpdateStatus(ctx, testPod("default", "load-1", v1.PodRunning, v1.ConditionTrue), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case <-w.done:
			t.Fatal("done with a node not Ready")
		default:
		}
		if got, want := w.snapshot(), (counts{created: 2, readyNodes: 1, running: 2, readyPods: 2}); got != want {
			t.Errorf("with every pod Running: %+v, want %+v", got, want)
		}
		time.Sleep(2 * time.Second) // t = 10 s: the last node becomes Ready
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, testNode("sim-1", v1.ConditionTrue), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		<-w.done
		w.stop()
		running, ready, toRunning, toReady := w.times()
		if running != 10*time.Second || ready != 10*time.Second {
			t.Errorf("every node Ready and pod Running at %v, Ready at %v, want 10s and 10s", running, ready)
		}
		// load-0: created at 0 s, Running at 5 s, Ready at 6 s; load-1: seen at 1 s (its create
		// returned at 2 s), Running and Ready at 8 s.
		if want := (spread{median: 5 * time.Second, p99: 7 * time.Second, max: 7 * time.Second}); toRunning != want {
			t.Errorf("create to Running: %v, want %v", toRunning, want)
		}
		if want := (spread{median: 6 * time.Second, p99: 7 * time.Second, max: 7 * time.Second}); toReady != want {
			t.Errorf("create to Ready: %v, want %v", toReady, want)
		}
	})
}

// TestFleetWatchCountsALeaverOut: a pod that stops running (a container that exits) is counted
// out again, and its time to Running is the one it runs again; the moment every pod was Running
// is the first, as a count taken then would have found.
func TestFleetWatchCountsALeaverOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue))
		w := newTestWatch(ctx, t, client, 1, 1)
		w.start(time.Now())
		pods := client.CoreV1().Pods("default")
		steps := []struct {
			phase v1.PodPhase
			ready v1.ConditionStatus
			want  counts
		}{
			{v1.PodRunning, v1.ConditionFalse, counts{created: 1, readyNodes: 1, running: 1}},
			{v1.PodFailed, v1.ConditionFalse, counts{created: 1, readyNodes: 1}},
			{v1.PodRunning, v1.ConditionTrue, counts{created: 1, readyNodes: 1, running: 1, readyPods: 1}},
		}
		if _, err := pods.Create(ctx, testPod("default", "load-0", v1.PodPending, ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, s := range steps {
			time.Sleep(time.Second)
			if _, err := pods.UpdateStatus(ctx, testPod("default", "load-0", s.phase, s.ready), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if got := w.snapshot(); got != s.want {
				t.Errorf("step %d (%s): %+v, want %+v", i, s.phase, got, s.want)
			}
		}
		<-w.done
		running, _, toRunning, _ := w.times()
		if running != time.Second || toRunning.median != 3*time.Second {
			t.Errorf("every pod Running at %v, the pod's time to Running %v, want 1s and 3s", running, toRunning.median)
		}
	})
}

func TestSpreadOf(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // unsorted: 100 down to 1
	}
	tests := []struct {
		name string
		in   []time.Duration
		want spread
	}{
		{"none", nil, spread{}},
		{"one", ms(7), spread{7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond}},
		{"odd", ms(3, 1, 2), spread{2 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}},
		{"hundred", ms(hundred...), spread{50 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, spreadOf(tt.in), cmp.AllowUnexported(spread{})); diff != "" {
				t.Errorf("spreadOf() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFetchProfile: the profiles come from the kubelet server of the fleet's first node, at the
// address and port its Node reports, once the node has registered (the API server serves before
// it does).
func TestFetchProfile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/heap" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("profile bytes"))
	}))
	defer srv.Close()
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := fake.NewClientset()
	w, err := watchFleet(ctx, client, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	dir := t.TempDir()
	cfg := config{prefix: "sim", nodes: 10, profileDir: dir}
	done := make(chan error, 1)
	go func() { done <- fetchProfile(ctx, w, cfg, "heap", "heap.pprof") }()
	// sim-0 registers after the fetch began.
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sim-0"}, Status: v1.NodeStatus{
		Addresses:       []v1.NodeAddress{{Type: v1.NodeHostName, Address: "sim-0"}, {Type: v1.NodeInternalIP, Address: host}},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: int32(p)}}}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("fetchProfile() = %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "heap.pprof"))
	if err != nil || string(got) != "profile bytes" {
		t.Errorf("heap.pprof = %q, %v; want the server's answer", got, err)
	}
	if err := fetchProfile(ctx, w, cfg, "nothing", "nothing.pprof"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("fetchProfile() of a path the server does not have = %v, want its 404", err)
	}
}

// TestFleetWatchRefusesPodsOfAnEarlierRun: pods named as this run's that exist before it would
// count as its own (Running before any create); the watch refuses to start, naming them.
func TestFleetWatchRefusesPodsOfAnEarlierRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue), testPod("default", "load-0", v1.PodRunning, v1.ConditionTrue))
		w, err := watchFleet(ctx, client, 1, 1)
		if err == nil {
			defer w.stop()
			w.start(time.Now())
			t.Fatalf("watchFleet() with pod load-0 there already = nil error (counts %+v), want a refusal", w.snapshot())
		}
		if !strings.Contains(err.Error(), "default/load-0") {
			t.Errorf("watchFleet() = %v, want the pod named", err)
		}
	})
}

// TestFleetWatchCountsOnlyItsPods: a Running pod of another name, or of a name beyond the run's
// total, is not the run's and does not complete it; nor does anything before the first create.
func TestFleetWatchCountsOnlyItsPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue), testPod("default", "web", v1.PodRunning, v1.ConditionTrue))
		w := newTestWatch(ctx, t, client, 1, 1)
		time.Sleep(time.Second)
		w.start(time.Now())
		pods := client.CoreV1().Pods("default")
		for _, name := range []string{"load-1", "load-01", "web-2"} {
			if _, err := pods.Create(ctx, testPod("default", name, v1.PodRunning, v1.ConditionTrue), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		select {
		case <-w.done:
			t.Errorf("done with none of the run's pods created (counts %+v)", w.snapshot())
		default:
		}
		if got, want := w.snapshot(), (counts{readyNodes: 1}); got != want {
			t.Errorf("counts = %+v, want %+v", got, want)
		}
	})
}

// TestFleetWatchNeverBeforeTheFirstCreate: a fleet complete before the first create (its nodes
// Ready, no pods) is done at the first create, not at a moment before it.
func TestFleetWatchNeverBeforeTheFirstCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue))
		w := newTestWatch(ctx, t, client, 1, 0)
		synctest.Wait()
		time.Sleep(time.Second)
		select {
		case <-w.done:
			t.Fatal("done before the first create")
		default:
		}
		w.start(time.Now())
		<-w.done
		if running, ready, _, _ := w.times(); running != 0 || ready != 0 {
			t.Errorf("times = %v, %v; want 0 and 0", running, ready)
		}
	})
}

// TestFleetWatchTimesARecreatedPod: a pod deleted and created again under its name is timed from
// its own creation, and counted once.
func TestFleetWatchTimesARecreatedPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue))
		w := newTestWatch(ctx, t, client, 1, 2)
		w.start(time.Now())
		pods := client.CoreV1().Pods("default")
		if _, err := pods.Create(ctx, testPod("default", "load-0", v1.PodRunning, v1.ConditionTrue), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(10 * time.Second)
		if err := pods.Delete(ctx, "load-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := w.snapshot(), (counts{readyNodes: 1}); got != want {
			t.Errorf("after the delete: %+v, want %+v", got, want)
		}
		if _, err := pods.Create(ctx, testPod("default", "load-0", v1.PodPending, ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(time.Second)
		if _, err := pods.UpdateStatus(ctx, testPod("default", "load-0", v1.PodRunning, v1.ConditionTrue), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		_, _, toRunning, _ := w.times()
		if toRunning.median != time.Second {
			t.Errorf("the second load-0's create to Running = %v, want 1s", toRunning.median)
		}
		if got, want := w.snapshot(), (counts{created: 1, readyNodes: 1, running: 1, readyPods: 1}); got != want {
			t.Errorf("after the second load-0 runs: %+v, want %+v", got, want)
		}
	})
}

// TestFleetWatchAnotherUID: a pod of the name with another UID (a recreation a relist delivers
// as an update) is another pod, timed from when the watch saw it.
func TestFleetWatchAnotherUID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue))
		w := newTestWatch(ctx, t, client, 1, 1)
		w.start(time.Now())
		first := testPod("default", "load-0", v1.PodRunning, v1.ConditionFalse)
		first.UID = "uid-1"
		w.pod(first, false)
		w.created("load-0", "uid-1", time.Now())
		time.Sleep(5 * time.Second)
		second := testPod("default", "load-0", v1.PodRunning, v1.ConditionTrue)
		second.UID = "uid-2"
		w.pod(second, false)
		w.created("load-0", "uid-1", time.Now()) // a late return of the first create changes nothing
		_, _, toRunning, toReady := w.times()
		if toRunning.median != 0 || toReady.median != 0 {
			t.Errorf("uid-2's create to Running %v, to Ready %v; want 0 and 0", toRunning.median, toReady.median)
		}
		if got, want := w.snapshot(), (counts{created: 1, readyNodes: 1, running: 1, readyPods: 1}); got != want {
			t.Errorf("counts = %+v, want %+v", got, want)
		}
	})
}

// TestFleetWatchCountsRelists: a watch that ends with an error (here 410 Gone, as when it fell
// behind the server's history) lists again, and the list is counted; the first lists are not.
func TestFleetWatchCountsRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		client := fake.NewClientset(testNode("sim-0", v1.ConditionTrue))
		watchers := make(chan *watch.FakeWatcher, 10)
		client.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
			fw := watch.NewFake()
			watchers <- fw
			return true, fw, nil
		})
		w := newTestWatch(ctx, t, client, 1, 1)
		w.start(time.Now())
		fw := <-watchers
		synctest.Wait()
		if got := w.relists(); got != 0 {
			t.Errorf("relists before any error = %d, want 0", got)
		}
		fw.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
		<-watchers // after the reflector's backoff, a list, then a new watch
		synctest.Wait()
		if got := w.relists(); got != 1 {
			t.Errorf("relists after a 410 = %d, want 1", got)
		}
		w.stop()
	})
}

// TestListCounter: a fetch of everything is a list's first page or a watch that begins with
// every object; a list right after such a watch (the reflector's fallback when the server
// refuses it) is the same fetch, and a watch from a resource version is none.
func TestListCounter(t *testing.T) {
	yes := true
	list := metav1.ListOptions{ResourceVersion: "0", Limit: 500}
	page2 := metav1.ListOptions{Limit: 500, Continue: "next"}
	watchFrom := metav1.ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true}
	watchList := metav1.ListOptions{AllowWatchBookmarks: true, SendInitialEvents: &yes}
	tests := []struct {
		name string
		seen []metav1.ListOptions
		want int64
	}{
		{"a list and its watch", []metav1.ListOptions{list, page2, watchFrom, watchFrom}, 1},
		{"two lists", []metav1.ListOptions{list, watchFrom, list, watchFrom}, 2},
		{"a watch-list", []metav1.ListOptions{watchList, watchFrom}, 1},
		{"a refused watch-list, then a list", []metav1.ListOptions{watchList, list, page2, watchFrom, watchList, list}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c listCounter
			for _, o := range tt.seen {
				c.see(&o)
			}
			if got := c.count(); got != tt.want {
				t.Errorf("count() = %d, want %d", got, tt.want)
			}
		})
	}
}

// newTestWatch is watchFleet over client, failing t on its error, stopped when t ends.
func newTestWatch(ctx context.Context, t *testing.T, client kubernetes.Interface, nodes, total int) *fleetWatch {
	t.Helper()
	w, err := watchFleet(ctx, client, nodes, total)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.stop)
	return w
}

// TestFetchGoroutines: the simulator's goroutine profile, in its text form, is fetched once a
// tick, each into a file of its own named by its count and its time from the start (two fetches
// within a second keep two files), and no more once the creates have ended. The ticks and the
// clock are the test's: a fetch that ignored the creates' end takes the next tick and fails the
// test at once, instead of running on until the context's deadline.
func TestFetchGoroutines(t *testing.T) {
	const wantFetches = 2 // the creates end during the second fetch
	created := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var fetches atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/goroutine" || r.URL.Query().Get("debug") != "1" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("goroutine profile: total 1\n"))
		switch n := fetches.Add(1); {
		case n == wantFetches:
			close(created)
		case n > wantFetches:
			cancel() // fetching after the creates ended: stop it now
		}
	}))
	defer srv.Close()
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sim-0"}, Status: v1.NodeStatus{
		Addresses:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: host}},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: int32(p)}}}})
	w, err := watchFleet(ctx, client, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	dir := t.TempDir()
	cfg := config{prefix: "sim", nodes: 1, profileDir: dir, goroutinesEvery: 200 * time.Millisecond}
	// Each fetch reads the clock once: 200 ms a fetch, so that the two fall in the same second.
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	var reads atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(reads.Add(1)) * cfg.goroutinesEvery) }
	ticks := make(chan time.Time) // unbuffered: a tick is taken only when the last fetch is done
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		fetchGoroutines(ctx, w, cfg, start, now, ticks, created, &out)
	}()
	// A tick after the creates' end may be taken (select picks among the ready cases) but
	// fetches nothing; more than one such tick means the creates' end is ignored.
	sent := 0
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case ticks <- start:
			if sent++; sent > wantFetches+1 {
				cancel()
				<-done
				t.Fatalf("fetchGoroutines took %d ticks and made %d fetches; want it to return after %d fetches, when the creates end", sent, fetches.Load(), wantFetches)
			}
		}
	}
	if n := fetches.Load(); n != wantFetches || out.Len() > 0 {
		t.Fatalf("%d fetches, reported %q; want %d (one a tick until the creates ended) and no failure", n, out.String(), wantFetches)
	}
	files, err := filepath.Glob(filepath.Join(dir, "goroutine-*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	if diff := cmp.Diff([]string{"goroutine-001-200ms.txt", "goroutine-002-400ms.txt"}, files); diff != "" {
		t.Errorf("goroutine profiles (-want +got):\n%s", diff)
	}
	for _, f := range files {
		if got, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(got) != "goroutine profile: total 1\n" {
			t.Errorf("%s = %q, %v; want the server's answer", f, got, err)
		}
	}
}

// TestCheckGoroutinesEvery: -profile-goroutines-every is refused when negative, or when given
// without -profile-dir to write the profiles to.
func TestCheckGoroutinesEvery(t *testing.T) {
	tests := []struct {
		name    string
		cfg     config
		wantErr bool
	}{
		{"none", config{}, false},
		{"none with a directory", config{profileDir: "profiles"}, false},
		{"a period with a directory", config{profileDir: "profiles", goroutinesEvery: 500 * time.Millisecond}, false},
		{"a period without a directory", config{goroutinesEvery: 20 * time.Second}, true},
		{"negative", config{profileDir: "profiles", goroutinesEvery: -time.Second}, true},
		{"negative without a directory", config{goroutinesEvery: -time.Second}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkGoroutinesEvery(tt.cfg); (err != nil) != tt.wantErr {
				t.Errorf("checkGoroutinesEvery(%+v) = %v; want an error %v", tt.cfg, err, tt.wantErr)
			}
		})
	}
}
