package fakeapiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestInformerRecoversFromExpired makes an informer's watch end and, in the same instant, writes
// more pods than the history keeps, so that the informer's resumed watch gets 410 Gone. The
// informer must relist and end up with every pod.
func TestInformerRecoversFromExpired(t *testing.T) {
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, HistorySize: 3})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	var mu sync.Mutex // guards requests
	var requests []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/pods") {
			mu.Lock()
			requests = append(requests, r.URL.RawQuery)
			mu.Unlock()
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: ts.URL, QPS: -1})
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Core().V1().Pods().Informer()
	added := make(chan string, 16)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { added <- obj.(*corev1.Pod).Name },
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
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p0"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	first, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-added; got != "p0" {
		t.Fatalf("informer added %q, want p0", got)
	}
	res := served["v1/pods"]
	_ = srv.store.locked(func() error {
		srv.store.closeWatches()
		for _, name := range []string{"p1", "p2", "p3", "p4", "p5"} {
			p := pod.DeepCopy()
			p.Name = name
			if _, err := srv.store.commit(res, watch.Added, p, nil); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	got := map[string]bool{}
	for len(got) < 5 {
		got[<-added] = true
	}
	mu.Lock()
	defer mu.Unlock()
	var resumed, relisted bool
	for _, q := range requests {
		if strings.Contains(q, "resourceVersion="+first.ResourceVersion) && strings.Contains(q, "watch=true") {
			resumed = true
		}
		if resumed && strings.Contains(q, "sendInitialEvents=true") {
			relisted = true
		}
	}
	if !resumed || !relisted {
		t.Errorf("requests %q: want a watch resumed from rv %s followed by a watch-list relist", requests, first.ResourceVersion)
	}
}
