package controllers

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func decodedPod(name string) *v1.Pod {
	// Built from fresh bytes, as a decoder's strings are: equal, not shared.
	fresh := func(s string) string { return string([]byte(s)) }
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fresh("default"), Labels: map[string]string{fresh("app"): fresh("web")},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: fresh("kubelet"), Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}, Subresource: "status"}}},
		Spec:   v1.PodSpec{NodeName: fresh("node-1"), Containers: []v1.Container{{Name: fresh("app"), Image: fresh("nginx:1.27")}}},
		Status: v1.PodStatus{Phase: v1.PodPhase(fresh("Running"))},
	}
}

// TestCacheTransform: the informers cache objects without their managed fields, as
// kube-controller-manager's do, and pods sharing the strings they repeat; everything else keeps
// its value. A tombstone is passed on as it is.
func TestCacheTransform(t *testing.T) {
	transform := cacheTransform(true)
	var got []*v1.Pod
	for _, name := range []string{"web-1", "web-2"} {
		pod := decodedPod(name)
		want := pod.DeepCopy()
		want.ManagedFields = nil
		out, err := transform(pod)
		if err != nil {
			t.Fatalf("transform(%s) = %v", name, err)
		}
		p, ok := out.(*v1.Pod)
		if !ok {
			t.Fatalf("transform(%s) = %T, want *v1.Pod", name, out)
		}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("transform(%s) mismatch (-want +got):\n%s", name, diff)
		}
		got = append(got, p)
	}
	if unsafe.StringData(got[0].Spec.Containers[0].Image) != unsafe.StringData(got[1].Spec.Containers[0].Image) ||
		unsafe.StringData(got[0].Spec.NodeName) != unsafe.StringData(got[1].Spec.NodeName) {
		t.Error("two pods of one template keep a copy each of their image and node name, want one shared")
	}

	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	out, err := transform(lease)
	if err != nil || out.(*coordinationv1.Lease).ManagedFields != nil {
		t.Errorf("transform(lease) = %v, %v; want the lease without managed fields", out, err)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "default/web-1", Obj: decodedPod("web-1")}
	if out, err := transform(tomb); err != nil || !cmp.Equal(out, any(tomb)) {
		t.Errorf("transform(tombstone) = %v, %v; want it unchanged", out, err)
	}
}
