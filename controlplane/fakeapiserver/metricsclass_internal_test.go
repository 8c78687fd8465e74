package fakeapiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fixedUsage is a ResourceMetrics that returns fixed samples.
type fixedUsage struct{ usage ResourceUsage }

func (f fixedUsage) ResourceUsage() ResourceUsage { return f.usage }

// TestMetricsReadsWaitInTheirClass: the metrics API's reads of nodes and pods wait for the store
// lock in the request's class (an anonymous user's, global-default), as kube-apiserver admits a
// metrics.k8s.io request by its flow schema. While the lock is held, a controller manager's
// create (workload-high) starts waiting, then the metrics read, then an exempt create. The exempt
// create goes first, then the limited levels, tied at the same pass, in the order their waiters
// came: so the read sees both objects. Were the read exempt, it would go first and see neither.
func TestMetricsReadsWaitInTheirClass(t *testing.T) {
	t0 := vclock.Epoch.Add(-time.Minute)
	sample := func(at time.Time, cpu float64) UsageSample {
		return UsageSample{Timestamp: at, StartTime: t0, CPUSeconds: cpu, MemoryBytes: 1 << 20}
	}
	prev, last := sample(t0, 1), sample(t0.Add(10*time.Second), 2)
	source := fixedUsage{ResourceUsage{
		Nodes: []NodeUsage{{Name: "n1", Previous: prev, Latest: last}, {Name: "n2", Previous: prev, Latest: last}},
		Pods: []PodUsage{
			{Namespace: "default", Name: "p1", Containers: []ContainerUsage{{Name: "c", Previous: prev, Latest: last}}},
			{Namespace: "default", Name: "p2", Containers: []ContainerUsage{{Name: "c", Previous: prev, Latest: last}}},
		},
	}}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	node := func(name string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	tests := []struct {
		name   string
		path   string
		create func(d *Direct, name string) error
		first  string // created by the controller manager, which waits first
		last   string // created exempt, which waits last
	}{
		{"node metrics", "/apis/metrics.k8s.io/v1beta1/nodes",
			func(d *Direct, name string) error { _, err := d.CreateNode(t.Context(), node(name)); return err }, "n1", "n2"},
		{"pod metrics", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
			func(d *Direct, name string) error { _, err := d.CreatePod(t.Context(), pod(name)); return err }, "p1", "p2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, ResourceMetrics: source})
			if err != nil {
				t.Fatal(err)
			}
			kcm := srv.DirectAs("kube-controller-manager", authenticationv1.UserInfo{Username: "system:kube-controller-manager", Groups: []string{"system:authenticated"}})
			admin := srv.Direct("admin")
			var read struct {
				Items []struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
				} `json:"items"`
			}
			steps := []func(){
				func() {
					if err := tt.create(kcm, tt.first); err != nil {
						t.Error(err)
					}
				},
				func() {
					w := httptest.NewRecorder()
					srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.path, nil))
					if w.Code != http.StatusOK {
						t.Errorf("GET %s = %d %s", tt.path, w.Code, w.Body)
						return
					}
					if err := json.Unmarshal(w.Body.Bytes(), &read); err != nil {
						t.Error(err)
					}
				},
				func() {
					if err := tt.create(admin, tt.last); err != nil {
						t.Error(err)
					}
				},
			}
			var wg sync.WaitGroup
			srv.store.lock()
			for i, step := range steps {
				wg.Go(step)
				for srv.store.mu.Waiting() < i+1 {
					runtime.Gosched()
				}
			}
			srv.store.mu.Unlock()
			wg.Wait()
			var got []string
			for _, it := range read.Items {
				got = append(got, it.Metadata.Name)
			}
			if len(got) != 2 {
				t.Errorf("the metrics read saw %v, want %s and %s: it waited in the exempt class, not the anonymous user's", got, tt.first, tt.last)
			}
		})
	}
}
