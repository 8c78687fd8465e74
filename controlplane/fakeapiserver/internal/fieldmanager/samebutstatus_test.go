package fieldmanager

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestSameButStatusAsCopies wants sameButStatus to answer what reflect.DeepEqual of copies of
// the two objects with their type meta, status and managed fields cleared answers (the way it
// replaced), for pods and nodes that differ in each of those and in what must be compared.
func TestSameButStatusAsCopies(t *testing.T) {
	copies := func(a, b any) bool {
		rest := func(v reflect.Value) any {
			c := reflect.New(v.Type()).Elem()
			c.Set(v)
			c.FieldByName("Status").SetZero()
			c.FieldByName("TypeMeta").SetZero()
			c.FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta).ManagedFields = nil
			return c.Addr().Interface()
		}
		return reflect.DeepEqual(rest(reflect.ValueOf(a).Elem()), rest(reflect.ValueOf(b).Elem()))
	}
	base := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	tests := map[string]func(p *corev1.Pod){
		"same":                    func(*corev1.Pod) {},
		"status":                  func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed },
		"type meta":               func(p *corev1.Pod) { p.TypeMeta = metav1.TypeMeta{} },
		"managed fields":          func(p *corev1.Pod) { p.ManagedFields = nil },
		"labels":                  func(p *corev1.Pod) { p.Labels["a"] = "c" },
		"labels empty":            func(p *corev1.Pod) { p.Labels = map[string]string{} },
		"finalizers empty":        func(p *corev1.Pod) { p.Finalizers = []string{} },
		"owners":                  func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{{Controller: ptr.To(true)}} },
		"resource version":        func(p *corev1.Pod) { p.ResourceVersion = "2" },
		"spec":                    func(p *corev1.Pod) { p.Spec.Containers[0].Image = "x" },
		"spec shared":             func(p *corev1.Pod) { p.Spec = base.Spec },
		"spec empty list":         func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{} },
		"spec pointer same value": func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) },
	}
	for name, change := range tests {
		p := base.DeepCopy()
		change(p)
		got, want := sameButStatus(reflect.ValueOf(base).Elem(), reflect.ValueOf(p).Elem()), copies(base, p)
		if got != want {
			t.Errorf("%s: sameButStatus() = %t, the copies' DeepEqual %t", name, got, want)
		}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{PodCIDR: "x"}}
	for _, n := range []*corev1.Node{node.DeepCopy(), {ObjectMeta: metav1.ObjectMeta{Name: "n"}}, {ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: node.Spec}} {
		got, want := sameButStatus(reflect.ValueOf(node).Elem(), reflect.ValueOf(n).Elem()), copies(node, n)
		if got != want {
			t.Errorf("node %+v: sameButStatus() = %t, the copies' DeepEqual %t", n, got, want)
		}
	}
}
