package podmanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestOnChange checks that every store and removal of a regular or static pod is reported, after
// the change, and that mirror pods are not.
func TestOnChange(t *testing.T) {
	mirror, static, normal := fixtures()
	m := newManager(t, trace.Discard)
	var got []string
	m.OnChange(func(uid types.UID) {
		_, present := m.GetPodByUID(uid)
		got = append(got, string(uid)+map[bool]string{true: " present", false: " gone"}[present])
	})
	m.AddPod(static)
	m.AddPod(mirror)
	m.UpdatePod(normal)
	m.RemovePod(mirror)
	m.RemovePod(static)
	other := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "other-uid", Name: "other", Namespace: metav1.NamespaceDefault}}
	m.SetPods([]*v1.Pod{other})
	want := []string{"static-pod-uid present", "normal-pod-uid present", "static-pod-uid gone", "normal-pod-uid gone", "other-uid present"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnChange calls (-want +got):\n%s", diff)
	}
}
