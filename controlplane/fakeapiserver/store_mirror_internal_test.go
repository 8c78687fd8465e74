package fakeapiserver

import (
	"context"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestStoreMirrorsObjects wants each mirrored bucket's current to hold exactly its objects after
// every kind of write (create, update, status patch, delete, a pod's graceful delete and its
// removal), and peek to answer what get answers under the lock: the GETs and the first read of
// an update that take no lock read the mirror, and a stale or missing entry there would make an
// update retry or a GET answer an old version. Events are not mirrored: peek finds none.
func TestStoreMirrorsObjects(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "n"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("n")}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	event := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"}, Reason: "R"}
	steps := []struct {
		name string
		do   func(d *Direct) error
	}{
		{"create pod", func(d *Direct) error { _, err := d.CreatePod(ctx, pod); return err }},
		{"create node", func(d *Direct) error { _, err := d.CreateNode(ctx, node); return err }},
		{"create lease", func(d *Direct) error { _, err := d.CreateLease(ctx, lease); return err }},
		{"create event", func(d *Direct) error { _, err := d.CreateEvent(ctx, event); return err }},
		{"update lease", func(d *Direct) error {
			l := lease.DeepCopy()
			l.Spec.HolderIdentity = ptr.To("m")
			_, err := d.UpdateLease(ctx, l)
			return err
		}},
		{"patch pod status", func(d *Direct) error {
			_, err := d.PatchPodStatus(ctx, "default", "p", types.StrategicMergePatchType, []byte(`{"status":{"phase":"Running"}}`))
			return err
		}},
		{"patch node status", func(d *Direct) error {
			_, err := d.PatchNodeStatus(ctx, "n", types.StrategicMergePatchType, []byte(`{"status":{"phase":"Running"}}`))
			return err
		}},
		{"delete pod gracefully", func(d *Direct) error { return d.DeletePod(ctx, "default", "p", metav1.DeleteOptions{}) }},
		{"remove pod", func(d *Direct) error {
			return d.DeletePod(ctx, "default", "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}},
	}
	s, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.Direct("test")
	for _, step := range steps {
		if err := step.do(d); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		st := s.store
		st.mu.Lock()
		for name, b := range st.buckets {
			if b.current == nil {
				if name != "events" {
					t.Errorf("after %s: %s is not mirrored", step.name, name)
				}
				continue
			}
			n := 0
			b.current.Range(func(k, v any) bool {
				n++
				if e, ok := b.objects[k.(string)]; !ok || e != v.(*entry) {
					t.Errorf("after %s: %s's mirror holds %s, objects %v (present %t)", step.name, name, k, e, ok)
				}
				return true
			})
			if n != len(b.objects) {
				t.Errorf("after %s: %s's mirror holds %d objects, objects %d", step.name, name, n, len(b.objects))
			}
		}
		st.mu.Unlock()
	}
	if _, ok := s.store.peek(eventsTarget, "default", "e"); ok {
		t.Error("peek found an event: events are not mirrored")
	}
	if _, err := d.GetPod(ctx, "default", "p"); !apierrors.IsNotFound(err) {
		t.Errorf("GET of the removed pod = %v, want NotFound", err)
	}
	got, err := d.GetLease(ctx, "kube-node-lease", "n")
	if err != nil || *got.Spec.HolderIdentity != "m" {
		t.Errorf("GET of the updated lease = %v, %v; want holder m", got, err)
	}
}
