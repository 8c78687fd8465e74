package kubelet

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDue checks when a stepping driver must settle a kubelet: before its first pass, when a
// component's wake has come, and when its API watch has an event for it; not after a settled
// instant with nothing new. (A watch of its own, which knows only the server's resource
// version, says it has events after every write: Due is then true, which costs a pass and no
// more.)
func TestDue(t *testing.T) {
	e := newEnv(t, envOptions{routedWatch: true})
	if !e.k.Due() {
		t.Fatal("Due() = false before the first Settle")
	}
	e.settle()
	if e.k.Due() {
		t.Fatal("Due() = true right after the instant settled")
	}
	next, _ := e.k.NextWake()
	e.clk.Set(next.Add(-time.Nanosecond))
	if e.k.Due() {
		t.Errorf("Due() = true before the next wake %v", next)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: testNode, Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := e.client.CoreV1().Pods("default").Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !e.k.Due() {
		t.Error("Due() = false with a watch event for the node")
	}
	e.settle()
	e.clk.Set(next)
	if !e.k.Due() {
		t.Errorf("Due() = false at the wake %v", next)
	}
}
