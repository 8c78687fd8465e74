package main

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources"
)

// waitForPod reads ch until an update carries the pod named name, and returns the names of the
// pods of that update.
func waitForPod(t *testing.T, ch <-chan podconfig.Update, name string) []string {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case u := <-ch:
			var names []string
			for _, p := range u.Pods {
				names = append(names, p.Name+"@"+p.Spec.NodeName)
			}
			if slices.Contains(names, name) {
				return names
			}
		case <-deadline:
			t.Fatalf("no update carried pod %s within %v", name, waitTimeout)
		}
	}
}

// TestRunFleetWatchesPodsInProcess checks that a fleet's shared pod watch, with the embedded API
// server, lists and watches in process (the server's URL answers nothing, so a request over HTTP
// would never list), without waiting for the API client's rate limiter as client-go's watch does
// not, and that each node gets its own pods, the ones there before the watch and the ones after.
func TestRunFleetWatchesPodsInProcess(t *testing.T) {
	limiter := &fakeLimiter{}
	srv, c := newDirectFixture(t, clock.RealClock{}, 0, limiter)
	if c.pods == nil {
		t.Fatal("newNodeClients with the embedded server made no in-process pod watch")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct := srv.Direct(userAgent)
	create := func(name, node string) {
		t.Helper()
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := direct.CreatePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	create("before", "a")
	outs := map[string]chan podconfig.Update{"a": make(chan podconfig.Update, 100), "b": make(chan podconfig.Update, 100)}
	nodes := map[string]sources.SharedAPINode{}
	for name, ch := range outs {
		core, err := sources.NewAPI(sources.APIOptions{Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		nodes[name] = sources.SharedAPINode{Core: core, Out: ch}
	}
	r, err := sources.NewSharedAPIRunner(sources.SharedAPIRunnerOptions{Client: c.api, Pods: c.pods, Clock: clock.RealClock{}, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	if got := waitForPod(t, outs["a"], "before@a"); !slices.Equal(got, []string{"before@a"}) {
		t.Errorf("node a's pods = %v, want its own from before the watch", got)
	}
	create("after", "b")
	if got := waitForPod(t, outs["b"], "after@b"); !slices.Equal(got, []string{"after@b"}) {
		t.Errorf("node b's pods = %v, want its own from after the watch started", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v", err)
	}
	// client-go's Request.Watch takes no token (only a retry after Retry-After waits), and the
	// shared runner starts with a watch-list, so nothing here lists.
	if n := limiter.count(); n != 0 {
		t.Errorf("the pod watch waited %d times for the API client's rate limiter, want none as client-go's watch", n)
	}
}

// TestControllersListInProcess checks that the controllers beside the embedded API server
// get its in-process lists and watches (the server's URL answers nothing, so a request over
// HTTP would never list), waiting for the token bucket their clientset's requests share, and
// that without an embedded server they have none.
func TestControllersListInProcess(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := srv.Direct(userAgent).CreatePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
	base := controllers.RunnerOptions{Names: controllers.Names, Clock: clock.RealClock{}, Tracer: trace.Discard}
	rc := &rest.Config{Host: unreachable}

	opts, err := controllersOptions(base, rc, srv)
	if err != nil {
		t.Fatal(err)
	}
	pods, ok := opts.Pods.(directPods)
	if !ok {
		t.Fatalf("controllers' pods with the embedded server = %T, want directPods", opts.Pods)
	}
	if got, want := pods.wire.limiter, opts.Clientset.CoreV1().RESTClient().GetRateLimiter(); got != want {
		t.Error("the in-process pod list does not wait for the controllers' clientset's rate limiter")
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "x" {
		t.Errorf("List() = %v, %v; want pod x", list, err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	for range w.ResultChan() {
	}
	nodes, ok := opts.Nodes.(directNodes)
	if !ok {
		t.Fatalf("controllers' nodes with the embedded server = %T, want directNodes", opts.Nodes)
	}
	leases, ok := opts.Leases.(directLeases)
	if !ok {
		t.Fatalf("controllers' leases with the embedded server = %T, want directLeases", opts.Leases)
	}
	if nodes.wire != pods.wire || leases.wire != pods.wire {
		t.Error("the in-process node or lease list does not wait as the pod list does")
	}
	if nl, err := nodes.List(ctx, metav1.ListOptions{}); err != nil || nl.ResourceVersion == "" {
		t.Errorf("nodes.List() = %v, %v; want a list", nl, err)
	}
	if ll, err := leases.List(ctx, metav1.ListOptions{}); err != nil || ll.ResourceVersion == "" {
		t.Errorf("leases.List() = %v, %v; want a list", ll, err)
	}

	opts, err = controllersOptions(base, rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Pods != nil || opts.Nodes != nil || opts.Leases != nil || opts.Clientset == nil {
		t.Errorf("controllers' options against a server of another process: pods %T, nodes %T, leases %T, clientset %v; want nothing in process, a clientset",
			opts.Pods, opts.Nodes, opts.Leases, opts.Clientset)
	}
}
