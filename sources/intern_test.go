package sources

import (
	"encoding/json"
	"fmt"
	"testing"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// decodeBoundPod decodes a pod bound to sim-00 as a watch over HTTP would: every string its own.
func decodeBoundPod(t *testing.T, name, uid, ip string) *v1.Pod {
	t.Helper()
	pod := &v1.Pod{}
	data := fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":"default","uid":%q,"labels":{"app":"pause"}},
"spec":{"nodeName":"sim-00","containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10.1"}]},
"status":{"phase":"Running","podIP":%q}}`, name, uid, ip)
	if err := json.Unmarshal(data, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// sameString reports whether a and b are the same bytes in memory, not just equal.
func sameString(a, b string) bool {
	return a == b && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

// TestRunnersInternDecodedPods: both API runners intern what their client decoded before the
// core keeps it (a node's own and a fleet's shared one), and the shared one leaves the pods of
// an in-process watch, the API server's own objects, as they are.
func TestRunnersInternDecodedPods(t *testing.T) {
	newCore := func(t *testing.T) *API {
		core, err := NewAPI(APIOptions{Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return core
	}
	pods := func(t *testing.T) []any {
		return []any{decodeBoundPod(t, "pause-1", "uid-1", "10.1.0.1"), decodeBoundPod(t, "pause-2", "uid-2", "10.1.0.2")}
	}
	imagesShared := func(u podconfig.Update) bool {
		return len(u.Pods) == 2 && sameString(u.Pods[0].Spec.Containers[0].Image, u.Pods[1].Spec.Containers[0].Image)
	}
	t.Run("node", func(t *testing.T) {
		out := make(chan podconfig.Update, 1)
		r, err := NewAPIRunner(APIRunnerOptions{Core: newCore(t), Client: fake.NewClientset(), NodeName: "sim-00", Clock: clock.RealClock{}, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.Replace(pods(t), "1"); err != nil {
			t.Fatal(err)
		}
		if u := <-out; !imagesShared(u) {
			t.Error("the node's runner handed on two decoded pods with a copy each of their image")
		}
	})
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared/in-process=%v", inProcess), func(t *testing.T) {
			out := make(chan podconfig.Update, 1)
			opts := SharedAPIRunnerOptions{Client: fake.NewClientset(), Clock: clock.RealClock{},
				Nodes: map[string]SharedAPINode{"sim-00": {Core: newCore(t), Out: out}}}
			if inProcess {
				opts.Pods = fake.NewClientset().CoreV1().Pods("")
			}
			r, err := NewSharedAPIRunner(opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.store.Replace(pods(t), "1"); err != nil {
				t.Fatal(err)
			}
			if got := imagesShared(<-out); got == inProcess {
				t.Errorf("image shared between the two pods = %v, want %v (in-process watch: %v)", got, !inProcess, inProcess)
			}
		})
	}
}
