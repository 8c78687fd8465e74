package sources

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
)

// TestMakeStoreSet: a store's SET orders its pods by namespace, then name (not by the
// "namespace/name" key, which sorts "a-b/x" before "a/x"), and names them by their keys.
func TestMakeStoreSet(t *testing.T) {
	pods := []*v1.Pod{
		apiPod("a-b", "x", "img"), apiPod("a", "y", "img"), apiPod("a", "x", "img"), apiPod("b", "a", "img"),
	}
	store := map[string]*v1.Pod{}
	for _, p := range pods {
		store[podkey.Of(p)] = p
	}
	got := makeStoreSet(podconfig.APISource, store)
	wantPods := []*v1.Pod{pods[2], pods[1], pods[0], pods[3]}
	if diff := gocmp.Diff([]string{"a/x", "a/y", "a-b/x", "b/a"}, got.names); diff != "" {
		t.Errorf("makeStoreSet() names (-want +got):\n%s", diff)
	}
	if len(got.update.Pods) != len(wantPods) {
		t.Fatalf("makeStoreSet() has %d pods, want %d", len(got.update.Pods), len(wantPods))
	}
	for i, p := range got.update.Pods {
		if p != wantPods[i] {
			t.Errorf("makeStoreSet() pod %d = %s, want %s (the store's object)", i, podkey.Of(p), podkey.Of(wantPods[i]))
		}
	}
	if got.update.Op != podconfig.SET || got.update.Source != podconfig.APISource {
		t.Errorf("makeStoreSet() = %v from %q, want a SET from %q", got.update.Op, got.update.Source, podconfig.APISource)
	}
	// The SET of an empty store carries an empty list, as the kubelet's does.
	if empty := makeStoreSet(podconfig.FileSource, nil); empty.update.Pods == nil || len(empty.update.Pods) != 0 {
		t.Errorf("makeStoreSet(empty) pods = %#v, want an empty list", empty.update.Pods)
	}
}
