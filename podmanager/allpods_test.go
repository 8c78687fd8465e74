package podmanager

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestAllPodsSkipsMirrors checks that AllPods yields the regular and static pods, not the mirror
// pods, and stops when asked to.
func TestAllPodsSkipsMirrors(t *testing.T) {
	m, err := New(Options{Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	m.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", UID: "a"}})
	m.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b", UID: "b"}})
	m.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "m", UID: "m",
		Annotations: map[string]string{v1.MirrorPodAnnotationKey: "x"}}})
	var names []string
	for p := range m.AllPods() {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("AllPods() = %v, want [a b]", names)
	}
	n := 0
	for range m.AllPods() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("AllPods() did not stop: %d", n)
	}
}
