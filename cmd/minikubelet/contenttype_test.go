package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// exchange is what one request asked for and sent, and what its answer was.
type exchange struct {
	method, path              string
	watch                     bool
	accept, contentType, resp string
}

// TestKubeletClientSpeaksProtobuf: a node's clients against an API server given with
// --kubeconfig ask for protobuf with JSON as the fallback and send protobuf bodies, as the
// kubelet with its default --kube-api-content-type, for the kinds of request a node makes: its
// node, its pods (list, watch, status), its lease, its events, and a request outside the typed
// clients (not its service account token requests, which this test does not make).
func TestKubeletClientSpeaksProtobuf(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	var mu sync.Mutex
	var seen []exchange
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.Handler().ServeHTTP(w, r)
		mu.Lock()
		seen = append(seen, exchange{r.Method, r.URL.Path, r.URL.Query().Get("watch") == "true", r.Header.Get("Accept"), r.Header.Get("Content-Type"), w.Header().Get("Content-Type")})
		mu.Unlock()
	}))
	defer ts.Close()

	cfg, err := resolveArgs(t, "--nodes", "1")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connectAPI(t.Context(), cfg, &rest.Config{Host: ts.URL}, clock.RealClock{}, trace.Discard, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := conn.clients("n1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	node, err := c.api.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "sim-00"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node: %v", err)
	}
	if _, err := c.heartbeat.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("get node: %v", err)
	}
	if _, err := c.heartbeat.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("patch node status: %v", err)
	}
	if _, err := c.heartbeat.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node.Name)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease: %v", err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: node.Name, Containers: []v1.Container{{Name: "c", Image: "i"}}}}
	if pod, err = c.api.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	list, err := c.api.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name})
	if err != nil || len(list.Items) != 1 || list.Items[0].UID != pod.UID {
		t.Fatalf("list pods = %v, %v; want the pod", list, err)
	}
	w, err := c.api.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name, ResourceVersion: "0"})
	if err != nil {
		t.Fatalf("watch pods: %v", err)
	}
	if ev := <-w.ResultChan(); ev.Object.(*v1.Pod).UID != pod.UID {
		t.Errorf("watch event = %v, want the pod", ev)
	}
	w.Stop()
	pod.Status.Phase = v1.PodRunning
	if _, err := c.api.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update pod status: %v", err)
	}
	if _, err := c.events.Create(&v1.Event{ObjectMeta: metav1.ObjectMeta{Name: "p.1", Namespace: "default"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}, Reason: "Started", Type: v1.EventTypeNormal}); err != nil {
		t.Fatalf("create event: %v", err)
	}
	if _, err := c.api.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps").DoRaw(ctx); err != nil {
		t.Fatalf("raw list of configmaps: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 10 {
		t.Fatalf("the server saw %d requests, want 10", len(seen))
	}
	for _, x := range seen {
		if x.accept != "application/vnd.kubernetes.protobuf,application/json" {
			t.Errorf("%s %s asked for %q, want protobuf then JSON", x.method, x.path, x.accept)
		}
		switch {
		case x.method == http.MethodPost || x.method == http.MethodPut:
			if x.contentType != "application/vnd.kubernetes.protobuf" {
				t.Errorf("%s %s sent %q, want protobuf", x.method, x.path, x.contentType)
			}
		case x.method == http.MethodPatch:
			if x.contentType != string(types.StrategicMergePatchType) {
				t.Errorf("%s %s sent %q, want a strategic merge patch", x.method, x.path, x.contentType)
			}
		}
		want := "application/vnd.kubernetes.protobuf"
		if x.watch {
			want += ";stream=watch"
		}
		if x.resp != want {
			t.Errorf("%s %s was answered with %q, want %q", x.method, x.path, x.resp, want)
		}
	}
}
