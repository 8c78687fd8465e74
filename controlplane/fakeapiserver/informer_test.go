package fakeapiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestInformer runs a node-scoped pod informer, as the kubelet's API source does, and checks it
// sees the pods of its node come, change and go.
func TestInformer(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	f.createPod(t, newPod("default", "before", "node-1"))
	f.createPod(t, newPod("default", "elsewhere", "node-2"))

	factory := informers.NewSharedInformerFactoryWithOptions(f.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", "node-1").String()
		}))
	inf := factory.Core().V1().Pods().Informer()
	events := make(chan string, 16)
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { events <- "add " + obj.(*corev1.Pod).Name },
		UpdateFunc: func(_, obj any) { events <- "update " + obj.(*corev1.Pod).Name },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			events <- "delete " + obj.(*corev1.Pod).Name
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	pod := f.createPod(t, newPod("default", "after", "node-1"))
	pod.Labels["x"] = "y"
	if _, err := f.client.CoreV1().Pods("default").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.CoreV1().Pods("default").Delete(ctx, "after", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	// The grace-0 delete is an update (the deletionTimestamp) before the delete.
	want := []string{"add before", "add after", "update after", "update after", "delete after"}
	for _, w := range want {
		if got := <-events; got != w {
			t.Errorf("informer event = %q, want %q", got, w)
		}
	}
}

// TestEventRecorder records events through client-go's broadcaster with the core/v1 sink, as the
// kubelet does, and reads them back, aggregated into one event with a count.
func TestEventRecorder(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pod := f.createPod(t, newPod("default", "p", "node-1"))
	w, err := f.client.CoreV1().Events("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	broadcaster := record.NewBroadcaster(record.WithSleepDuration(time.Millisecond))
	stop := broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: f.client.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: "node-1"})
	recorder.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	first := next(t, w).Object.(*corev1.Event)
	recorder.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
	second := next(t, w).Object.(*corev1.Event)
	stop.Stop()
	broadcaster.Shutdown()
	if first.Reason != "BackOff" || first.InvolvedObject.UID != pod.UID || first.Count != 1 {
		t.Errorf("first event = %s for %s count %d, want BackOff for the pod with count 1", first.Reason, first.InvolvedObject.UID, first.Count)
	}
	if second.Name != first.Name || second.Count != 2 {
		t.Errorf("second event = %s count %d, want the same event (%s) patched to count 2", second.Name, second.Count, first.Name)
	}
}

// TestInformerWatchList runs a namespace informer with client-go's WatchListClient (on by
// default since client-go v0.35): it must sync from one watch with sendInitialEvents, ended by
// the initial-events bookmark, with no list request, and then see a namespace come.
func TestInformerWatchList(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	var mu sync.Mutex
	var requests []string
	cfg := f.restConfig()
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			requests = append(requests, r.URL.Query().Get("watch")+" "+r.URL.Query().Get("sendInitialEvents"))
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Namespaces().Informer()
	added := make(chan string, 16)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*corev1.Namespace).Name },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	f.createNamespace(t, "team")
	var got []string
	for range 5 {
		got = append(got, <-added)
	}
	sort.Strings(got[:4]) // the initial sync replaces the informer's store at once, in no order
	if want := "[default kube-node-lease kube-public kube-system team]"; fmt.Sprint(got) != want {
		t.Errorf("namespaces the informer added = %v, want %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) == 0 || requests[0] != "true true" {
		t.Errorf("informer requests (watch, sendInitialEvents) = %q, want a watch-list first", requests)
	}
	for _, r := range requests {
		if r == " " {
			t.Errorf("informer listed (%q), want it to sync from the watch-list alone", requests)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
