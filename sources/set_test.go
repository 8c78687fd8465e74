package sources

import (
	"fmt"
	"math/rand/v2"
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

// TestAPIKeepsItsOrder: the api source keeps its pods in order at each change; every SET must be
// the one made by sorting the whole store, whatever the changes (pods replaced, deleted, re-added,
// a whole relist, and keys that two namespace and name pairs share).
func TestAPIKeepsItsOrder(t *testing.T) {
	ev := &events{}
	a := newAPI(t, ev)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() *v1.Pod {
		ns := []string{"a", "a-b", "b", "a/b"}[rng.IntN(4)]
		name := []string{"x", "y", "b/x", "z"}[rng.IntN(4)]
		return apiPod(ns, name, fmt.Sprintf("img:%d", rng.IntN(1000)))
	}
	for i := range 2000 {
		var u podconfig.Update
		switch r := rng.IntN(20); {
		case r == 0:
			var pods []*v1.Pod
			for range rng.IntN(6) {
				pods = append(pods, pick())
			}
			u = a.Replace(pods)
		case r < 6:
			u = a.Delete(pick())
		default:
			u = a.Add(pick())
		}
		want := makeStoreSet(podconfig.APISource, a.pods)
		if diff := gocmp.Diff(want.names, ev.take()[0].Pods); diff != "" {
			t.Fatalf("change %d: traced names (-sorted store +kept order):\n%s", i, diff)
		}
		if len(u.Pods) != len(want.update.Pods) {
			t.Fatalf("change %d: SET of %d pods, want %d", i, len(u.Pods), len(want.update.Pods))
		}
		for j := range u.Pods {
			if u.Pods[j] != want.update.Pods[j] {
				t.Fatalf("change %d: pod %d = %s, want %s", i, j, podkey.Of(u.Pods[j]), podkey.Of(want.update.Pods[j]))
			}
		}
	}
}
