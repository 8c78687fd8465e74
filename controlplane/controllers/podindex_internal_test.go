package controllers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/minikubelet/minikubelet/api/podkey"
)

// The index answers each node's pods and the unbound ones in key order, and follows the store
// as pods come and go.
func TestInformerPodIndex(t *testing.T) {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	index, err := newInformerPodIndex(inf)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(ns, name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.PodSpec{NodeName: node}}
	}
	store := inf.GetIndexer()
	for _, p := range []*v1.Pod{pod("b", "x", "n1"), pod("a", "y", "n1"), pod("a", "x", "n2"), pod("a", "z", ""), pod("a", "w", "n1")} {
		if err := store.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Delete(pod("a", "w", "n1")); err != nil {
		t.Fatal(err)
	}
	// A pod bound after it was queued moves from "" to its node.
	if err := store.Update(pod("a", "z", "n2")); err != nil {
		t.Fatal(err)
	}
	if err := store.Add(pod("a", "v", "")); err != nil {
		t.Fatal(err)
	}
	keys := func(pods []*v1.Pod, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, p := range pods {
			out = append(out, podkey.Of(p))
		}
		return out
	}
	for _, tt := range []struct {
		node string
		want []string
	}{
		{"n1", []string{"a/y", "b/x"}},
		{"n2", []string{"a/x", "a/z"}},
		{"n3", []string{}},
	} {
		if diff := cmp.Diff(tt.want, keys(index.PodsOnNode(tt.node))); diff != "" {
			t.Errorf("PodsOnNode(%q) (-want +got):\n%s", tt.node, diff)
		}
	}
	if diff := cmp.Diff([]string{"a/v"}, keys(index.UnboundPods())); diff != "" {
		t.Errorf("UnboundPods (-want +got):\n%s", diff)
	}
}
