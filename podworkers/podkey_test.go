package podworkers

import (
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// TestPodKey checks the key the workers hand to other components: the worker's own string for a
// pod it knows under that namespace and name, nothing otherwise.
func TestPodKey(t *testing.T) {
	h := newHarness(t)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: newNamedPod("uid-a", "ns", "a", false)})
	h.drain()
	for _, tc := range []struct {
		name            string
		uid             types.UID
		namespace, pod  string
		want            string
		wantOK, wantOwn bool
	}{
		{"the worker's pod", "uid-a", "ns", "a", "ns/a", true, true},
		{"another name for the UID", "uid-a", "ns", "b", "", false, false},
		{"another namespace for the UID", "uid-a", "other", "a", "", false, false},
		{"a UID without a worker", "uid-b", "ns", "a", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := h.w.PodKey(tc.uid, tc.namespace, tc.pod)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("PodKey(%q, %q, %q) = %q, %v, want %q, %v", tc.uid, tc.namespace, tc.pod, got, ok, tc.want, tc.wantOK)
			}
			if tc.wantOwn && unsafe.StringData(got) != unsafe.StringData(h.w.pods[tc.uid].key) {
				t.Errorf("PodKey(%q) is a copy, not the worker's key", tc.uid)
			}
			keys := &kubecontainer.SharedKeys{Keeper: h.w}
			if got := keys.Key(tc.uid, tc.namespace, tc.pod); got != tc.namespace+"/"+tc.pod {
				t.Errorf("SharedKeys.Key(%q, %q, %q) = %q, want %q", tc.uid, tc.namespace, tc.pod, got, tc.namespace+"/"+tc.pod)
			}
		})
	}
}
