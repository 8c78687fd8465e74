package fakeapiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func nodeUser(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: "system:node:" + name, Groups: []string{"system:nodes", "system:authenticated"}}
}

func TestRequestClass(t *testing.T) {
	n1 := nodeUser("n1")
	kcm := authenticationv1.UserInfo{Username: "system:kube-controller-manager", Groups: []string{"system:authenticated"}}
	tests := []struct {
		name string
		user *authenticationv1.UserInfo
		verb verbs
		t    target
		want apf.Class
	}{
		{"no user (Direct, the store's own work) is exempt", nil, verbCreate, target{res: podsTarget, namespace: "default"}, apf.Class{}},
		{"the bearer token's user is exempt", &tokenUser, verbCreate, target{res: podsTarget, namespace: "default"},
			apf.Class{Level: apf.Exempt, Flow: apf.Flow{Schema: "exempt"}}},
		{"the anonymous user is global-default", &anonymousUser, verbCreate, target{res: podsTarget, namespace: "default"},
			apf.Class{Level: apf.GlobalDefault, Flow: apf.Flow{Schema: "global-default", Distinguisher: "system:anonymous"}}},
		{"a node's lease update is node-high", &n1, verbUpdate, target{res: leasesTarget, namespace: "kube-node-lease", name: "n1"},
			apf.Class{Level: apf.NodeHigh, Flow: apf.Flow{Schema: "system-node-high", Distinguisher: "system:node:n1"}}},
		{"a node's node status patch is node-high", &n1, verbPatch, target{res: nodesTarget, name: "n1", subresource: "status"},
			apf.Class{Level: apf.NodeHigh, Flow: apf.Flow{Schema: "system-node-high", Distinguisher: "system:node:n1"}}},
		{"a node's pod status patch is system", &n1, verbPatch, target{res: podsTarget, namespace: "default", name: "p", subresource: "status"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}},
		{"a node's token request is system", &n1, verbCreate, target{res: serviceAccountTarget, namespace: "default", name: "default", subresource: "token"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}},
		{"the controller manager's list of pods is workload-high", &kcm, verbList, target{res: podsTarget},
			apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-controller-manager", Distinguisher: ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, requestClass(tt.user, tt.verb, tt.t)); diff != "" {
				t.Errorf("requestClass (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreLockTurns starts requests one at a time while the store lock is held, and reads the
// order they got it in from the resource versions of their writes: an administrator's create
// over HTTP (system:masters, exempt) goes before the nodes' event creates that waited longer,
// and two nodes' event creates (system-nodes, one flow a node) alternate.
func TestStoreLockTurns(t *testing.T) {
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, BearerToken: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	ua := "kubelet/v1.35.4 (linux/amd64) kubernetes/fake"
	nodes := map[string]*Direct{"n1": srv.DirectAs(ua, nodeUser("n1")), "n2": srv.DirectAs(ua, nodeUser("n2"))}
	rvs := map[string]uint64{}
	var mu sync.Mutex
	record := func(name, rv string) {
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			t.Errorf("%s: resourceVersion %q: %v", name, rv, err)
		}
		mu.Lock()
		rvs[name] = n
		mu.Unlock()
	}
	starts := []struct {
		name string
		run  func() (string, error)
	}{}
	for _, w := range []struct{ name, node string }{{"n1-a", "n1"}, {"n1-b", "n1"}, {"n1-c", "n1"}, {"n2-a", "n2"}} {
		starts = append(starts, struct {
			name string
			run  func() (string, error)
		}{w.name, func() (string, error) {
			ev, err := nodes[w.node].CreateEvent(t.Context(), &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: w.name, Namespace: "default"},
				InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: w.node},
				Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "kubelet", Host: w.node},
			})
			return ev.ResourceVersion, err
		}})
	}
	starts = append(starts, struct {
		name string
		run  func() (string, error)
	}{"admin", func() (string, error) {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/pods",
			strings.NewReader(`{"metadata":{"name":"admin"},"spec":{"containers":[{"name":"c","image":"i"}]}}`))
		r.Header.Set("Authorization", "Bearer secret")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusCreated {
			t.Errorf("POST pod = %d %s", w.Code, w.Body)
			return "", nil
		}
		// The answer's resourceVersion, not the store's: the other writers hold the store
		// lock while this one returns, and the store is read only under it.
		var created corev1.Pod
		if err := json.Unmarshal(w.Body.Bytes(), &created); err != nil {
			return "", fmt.Errorf("decode the created pod %s: %w", w.Body, err)
		}
		return created.ResourceVersion, nil
	}})

	var wg sync.WaitGroup
	srv.store.lock()
	for i, s := range starts {
		wg.Go(func() {
			rv, err := s.run()
			if err != nil {
				t.Errorf("%s: %v", s.name, err)
				return
			}
			record(s.name, rv)
		})
		for srv.store.mu.Waiting() < i+1 {
			runtime.Gosched()
		}
	}
	srv.store.mu.Unlock()
	wg.Wait()

	var order []string
	for len(order) < len(rvs) {
		best := ""
		for name, rv := range rvs {
			if !contains(order, name) && (best == "" || rv < rvs[best]) {
				best = name
			}
		}
		order = append(order, best)
	}
	if diff := cmp.Diff([]string{"admin", "n1-a", "n2-a", "n1-b", "n1-c"}, order); diff != "" {
		t.Errorf("the writes' order (-want +got):\n%s", diff)
	}
}

// TestRequestClassAllocatesNothing: classifying is on every request's path, in process too.
func TestRequestClassAllocatesNothing(t *testing.T) {
	n1 := nodeUser("n1")
	tg := target{res: podsTarget, namespace: "default", name: "p", subresource: "status"}
	if n := testing.AllocsPerRun(100, func() { requestClass(&n1, verbPatch, tg) }); n != 0 {
		t.Errorf("requestClass allocates %v times, want 0", n)
	}
}
