package fakeapiserver_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// wirePair is one server reached over HTTP by client-go and in process by Direct.
type wirePair struct {
	srv    *fakeapiserver.Server
	wire   kubernetes.Interface
	direct *fakeapiserver.Direct
}

func newWirePair(t *testing.T, opts fakeapiserver.Options) *wirePair {
	t.Helper()
	srv := newServer(t, opts)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: ts.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return &wirePair{srv: srv, wire: c, direct: srv.Direct(rest.DefaultKubernetesUserAgent())}
}

func watchPod(name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// collect reads w until it closes or until (with until not empty) the ADDED event of the object
// named until, and stops it.
func collect(t *testing.T, w watch.Interface, until string) []watch.Event {
	t.Helper()
	defer w.Stop()
	var out []watch.Event
	// A guard, not a deadline: every watch here delivers what it is waited for at once, so a
	// minute without it means it never will, and the test says so instead of hanging.
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-w.ResultChan():
		case <-guard.C:
			t.Fatalf("the watch delivered neither %q nor its end within a minute; got %d events", until, len(out))
		}
		if !ok {
			break
		}
		out = append(out, ev)
		if m, err := meta.Accessor(ev.Object); err == nil && until != "" && ev.Type == watch.Added && m.GetName() == until {
			return out
		}
	}
	if until != "" {
		t.Fatalf("the watch ended before %s was added; got %d events", until, len(out))
	}
	return out
}

// TestInProcessWatchMatchesTheWire opens the same pod watches over HTTP with client-go and in
// process, side by side on one server, makes the same writes under both, and wants the same
// events: initial events, bookmarks, selections entered and left, deletions and errors.
func TestInProcessWatchMatchesTheWire(t *testing.T) {
	ctx := context.Background()
	p := newWirePair(t, fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	x := map[string]string{"app": "x"}
	for _, pod := range []*corev1.Pod{watchPod("p1", "a", x), watchPod("p2", "b", nil), watchPod("p3", "", x)} {
		if _, err := p.direct.CreatePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	now := strconv.FormatUint(p.srv.ResourceVersion(), 10)
	onA := "spec.nodeName=a"
	cases := map[string]metav1.ListOptions{
		"every pod, from a list":  {},
		"node a, a watch-list":    {FieldSelector: onA, SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true},
		"node a, from now":        {FieldSelector: onA, ResourceVersion: now, AllowWatchBookmarks: true},
		"a label, from version 0": {LabelSelector: "app=x", ResourceVersion: "0"},
	}
	type pair struct{ wire, direct watch.Interface }
	watches := map[string]pair{}
	for name, opts := range cases {
		w, err := p.wire.CoreV1().Pods("").Watch(ctx, opts)
		if err != nil {
			t.Fatalf("%s: wire watch: %v", name, err)
		}
		d, err := p.direct.WatchPods(ctx, "", opts)
		if err != nil {
			t.Fatalf("%s: in-process watch: %v", name, err)
		}
		watches[name] = pair{w, d}
	}
	// p3 is bound to a (it enters node a's selection), p1's status changes, p2 and p1 go, and
	// a last pod on a ends every watch's events.
	if err := p.wire.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p3"}, Target: corev1.ObjectReference{Kind: "Node", Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.direct.PatchPodStatus(ctx, "default", "p1", "application/strategic-merge-patch+json", []byte(`{"status":{"phase":"Running"}}`)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p2", "p1"} {
		if err := p.direct.DeletePod(ctx, "default", name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.direct.CreatePod(ctx, watchPod("end", "a", x)); err != nil {
		t.Fatal(err)
	}
	for name, w := range watches {
		want := collect(t, w.wire, "end")
		got := collect(t, w.direct, "end")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: in-process events differ from the wire's (-wire +in-process):\n%s", name, diff)
		}
		if len(want) < 2 {
			t.Errorf("%s: %d events, want the writes' too", name, len(want))
		}
	}
}

// TestInProcessWatchErrorsMatchTheWire: a pods, nodes or leases watch from a version the history
// no longer holds ends
// with 410 Gone, one from a version the server has not reached with Too large resource version,
// and bad options fail the request, in process as over HTTP.
func TestInProcessWatchErrorsMatchTheWire(t *testing.T) {
	ctx := context.Background()
	p := newWirePair(t, fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, HistorySize: 2})
	// Each kind's history holds its own writes: five of each compact all three.
	for i := range 5 {
		if _, err := p.direct.CreatePod(ctx, watchPod("p"+strconv.Itoa(i), "a", nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.direct.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n" + strconv.Itoa(i)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.direct.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n" + strconv.Itoa(i), Namespace: "kube-node-lease"}}); err != nil {
			t.Fatal(err)
		}
	}
	// The controllers watch all three kinds across namespaces.
	kinds := []struct {
		name         string
		wire, direct func(metav1.ListOptions) (watch.Interface, error)
	}{
		{"pods",
			func(o metav1.ListOptions) (watch.Interface, error) { return p.wire.CoreV1().Pods("").Watch(ctx, o) },
			func(o metav1.ListOptions) (watch.Interface, error) { return p.direct.WatchPods(ctx, "", o) }},
		{"nodes",
			func(o metav1.ListOptions) (watch.Interface, error) { return p.wire.CoreV1().Nodes().Watch(ctx, o) },
			func(o metav1.ListOptions) (watch.Interface, error) { return p.direct.WatchNodes(ctx, o) }},
		{"leases",
			func(o metav1.ListOptions) (watch.Interface, error) {
				return p.wire.CoordinationV1().Leases("").Watch(ctx, o)
			},
			func(o metav1.ListOptions) (watch.Interface, error) { return p.direct.WatchLeases(ctx, "", o) }},
	}
	for _, k := range kinds {
		for name, opts := range map[string]metav1.ListOptions{
			"compacted": {ResourceVersion: "1"},
			"too large": {ResourceVersion: "1000000"},
		} {
			w, err := k.wire(opts)
			if err != nil {
				t.Fatalf("%s, %s: wire watch: %v", k.name, name, err)
			}
			d, err := k.direct(opts)
			if err != nil {
				t.Fatalf("%s, %s: in-process watch: %v", k.name, name, err)
			}
			want, got := collect(t, w, ""), collect(t, d, "")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, %s: in-process events differ from the wire's (-wire +in-process):\n%s", k.name, name, diff)
			}
			if len(want) != 1 || want[0].Type != watch.Error {
				t.Errorf("%s, %s: wire events = %v, want one error", k.name, name, want)
			}
		}
		bad := metav1.ListOptions{FieldSelector: "spec.unknown=x"}
		_, wireErr := k.wire(bad)
		_, directErr := k.direct(bad)
		if wireErr == nil || directErr == nil || wireErr.Error() != directErr.Error() {
			t.Errorf("%s: watch with %v: wire error %v, in-process error %v; want the same error", k.name, bad, wireErr, directErr)
		}
	}
}

// TestInProcessListMatchesTheWire lists pods page by page both ways and wants the same pages.
func TestInProcessListMatchesTheWire(t *testing.T) {
	ctx := context.Background()
	p := newWirePair(t, fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	for i := range 3 {
		if _, err := p.direct.CreatePod(ctx, watchPod("p"+strconv.Itoa(i), "a", nil)); err != nil {
			t.Fatal(err)
		}
	}
	for name, opts := range map[string]metav1.ListOptions{
		"all":     {},
		"from 0":  {ResourceVersion: "0", FieldSelector: "spec.nodeName=a"},
		"a page":  {Limit: 2},
		"missing": {FieldSelector: "spec.nodeName=b"},
	} {
		want, wireErr := p.wire.CoreV1().Pods("").List(ctx, opts)
		got, directErr := p.direct.ListPods(ctx, "", opts)
		if wireErr != nil || directErr != nil {
			t.Fatalf("%s: wire error %v, in-process error %v", name, wireErr, directErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: in-process list differs from the wire's (-wire +in-process):\n%s", name, diff)
		}
		if want.Continue != "" {
			opts.Continue = want.Continue
			want, _ = p.wire.CoreV1().Pods("").List(ctx, opts)
			got, _ = p.direct.ListPods(ctx, "", opts)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, next page: in-process list differs from the wire's (-wire +in-process):\n%s", name, diff)
			}
		}
	}
}

// TestInProcessNodesAndLeasesMatchTheWire lists and watches nodes and leases over HTTP with
// client-go and in process, side by side on one server, makes the same writes under both (a
// node's status, a lease's renewal, a node deleted, then a last one of each to end the
// watches), and wants the same lists and events.
func TestInProcessNodesAndLeasesMatchTheWire(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	p := newWirePair(t, fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	lease := func(name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: ptr.To(metav1.NewMicroTime(clk.Now()))}}
	}
	for _, name := range []string{"a", "b"} {
		if _, err := p.direct.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": name}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.direct.CreateLease(ctx, lease(name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, opts := range map[string]metav1.ListOptions{"all": {}, "from 0": {ResourceVersion: "0"}, "a page": {Limit: 1}, "a label": {LabelSelector: "zone=b"}} {
		wantNodes, wireErr := p.wire.CoreV1().Nodes().List(ctx, opts)
		gotNodes, directErr := p.direct.ListNodes(ctx, opts)
		if wireErr != nil || directErr != nil {
			t.Fatalf("%s: nodes: wire error %v, in-process error %v", name, wireErr, directErr)
		}
		if diff := cmp.Diff(wantNodes, gotNodes); diff != "" {
			t.Errorf("%s: in-process node list differs from the wire's (-wire +in-process):\n%s", name, diff)
		}
		wantLeases, wireErr := p.wire.CoordinationV1().Leases("").List(ctx, opts)
		gotLeases, directErr := p.direct.ListLeases(ctx, "", opts)
		if wireErr != nil || directErr != nil {
			t.Fatalf("%s: leases: wire error %v, in-process error %v", name, wireErr, directErr)
		}
		if diff := cmp.Diff(wantLeases, gotLeases); diff != "" {
			t.Errorf("%s: in-process lease list differs from the wire's (-wire +in-process):\n%s", name, diff)
		}
	}
	watchList := metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	type pair struct{ wire, direct watch.Interface }
	open := func(what string, wire, direct func() (watch.Interface, error)) pair {
		t.Helper()
		w, err := wire()
		if err != nil {
			t.Fatalf("%s: wire watch: %v", what, err)
		}
		d, err := direct()
		if err != nil {
			t.Fatalf("%s: in-process watch: %v", what, err)
		}
		return pair{w, d}
	}
	nodes := open("nodes", func() (watch.Interface, error) { return p.wire.CoreV1().Nodes().Watch(ctx, watchList) },
		func() (watch.Interface, error) { return p.direct.WatchNodes(ctx, watchList) })
	leases := open("leases", func() (watch.Interface, error) {
		return p.wire.CoordinationV1().Leases("").Watch(ctx, watchList)
	}, func() (watch.Interface, error) { return p.direct.WatchLeases(ctx, "", watchList) })

	clk.Advance(10 * time.Second)
	if _, err := p.direct.PatchNodeStatus(ctx, "a", "application/strategic-merge-patch+json",
		[]byte(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}`)); err != nil {
		t.Fatal(err)
	}
	renewed, err := p.direct.GetLease(ctx, "kube-node-lease", "a")
	if err != nil {
		t.Fatal(err)
	}
	renewed.Spec.RenewTime = ptr.To(metav1.NewMicroTime(clk.Now()))
	if _, err := p.direct.UpdateLease(ctx, renewed); err != nil {
		t.Fatal(err)
	}
	if err := p.wire.CoreV1().Nodes().Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.direct.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "end"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.direct.CreateLease(ctx, lease("end")); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]pair{"nodes": nodes, "leases": leases} {
		want := collect(t, w.wire, "end")
		got := collect(t, w.direct, "end")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: in-process events differ from the wire's (-wire +in-process):\n%s", name, diff)
		}
		// Two initial events, their bookmark, the writes and the last object.
		if len(want) < 5 {
			t.Errorf("%s: %d events, want the initial ones and the writes'", name, len(want))
		}
	}
}

// TestInProcessWatchRestartLosesNothing: an in-process watch ends at its timeout, as over HTTP,
// by closing its channel; a watch resumed from the last version the first delivered gets every
// write made in between; Stop ends a watch whose receiver no longer reads.
func TestInProcessWatchRestartLosesNothing(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	srv := newServer(t, fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	direct := srv.Direct(rest.DefaultKubernetesUserAgent())
	create := func(name string) {
		t.Helper()
		if _, err := direct.CreatePod(ctx, watchPod(name, "a", nil)); err != nil {
			t.Fatal(err)
		}
	}
	create("p1")
	w, err := direct.WatchPods(ctx, "", metav1.ListOptions{ResourceVersion: strconv.FormatUint(srv.ResourceVersion(), 10), TimeoutSeconds: ptr.To[int64](1)})
	if err != nil {
		t.Fatal(err)
	}
	create("p2")
	ev := <-w.ResultChan()
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok || ev.Type != watch.Added || pod.Name != "p2" {
		t.Fatalf("first event = %s %T, want ADDED p2", ev.Type, ev.Object)
	}
	// The watch's timer was set before its first event was handed over: stepping past it ends
	// the watch, whether it waits yet or not (the fired timer waits for it).
	clk.Step(2 * time.Second)
	for ev := range w.ResultChan() {
		t.Errorf("event after the timeout: %s", ev.Type)
	}
	create("p3")
	w2, err := direct.WatchPods(ctx, "", metav1.ListOptions{ResourceVersion: pod.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	ev = <-w2.ResultChan()
	if pod, ok := ev.Object.(*corev1.Pod); !ok || ev.Type != watch.Added || pod.Name != "p3" {
		t.Errorf("resumed watch's first event = %s %T, want ADDED p3", ev.Type, ev.Object)
	}
	// A receiver that stops reading: Stop ends the watch, whose channel closes.
	create("p4")
	create("p5")
	w2.Stop()
	for range w2.ResultChan() {
	}
}
