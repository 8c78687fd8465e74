package fakeapiserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func TestPodBinding(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	created := f.createPod(t, newPod("", "web", ""))
	// Gates can only be set at creation: an update may only remove them.
	gated := newPod("", "gated", "")
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	f.createPod(t, gated)
	binding := func(name string, uid string, node string) *corev1.Binding {
		return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: typesUID(uid)},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	}

	tests := []struct {
		name    string
		b       *corev1.Binding
		wantErr func(error) bool
		errText string
	}{
		{"a wrong UID", binding("web", "nope", "node-1"), apierrors.IsConflict, "Precondition failed"},
		{"no target", binding("web", "", ""), apierrors.IsInvalid, "target.name"},
		{"a missing pod", binding("nope", "", "node-1"), apierrors.IsNotFound, `pods "nope" not found`},
		{"scheduling gates", binding("gated", "", "node-1"), apierrors.IsConflict, "non-empty .spec.schedulingGates"},
		{"binds", binding("web", string(created.UID), "node-1"), nil, ""},
		{"already bound", binding("web", "", "node-2"), apierrors.IsConflict, `pod web is already assigned to node "node-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pods.Bind(ctx, tt.b, metav1.CreateOptions{})
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Bind() = %v, want nil", err)
			case tt.wantErr != nil && (!tt.wantErr(err) || !strings.Contains(err.Error(), tt.errText)):
				t.Fatalf("Bind() = %v, want an error with %q", err, tt.errText)
			}
		})
	}
	got, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var scheduled corev1.ConditionStatus
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			scheduled = c.Status
		}
	}
	if got.Spec.NodeName != "node-1" || scheduled != corev1.ConditionTrue {
		t.Errorf("after Bind: nodeName %q, PodScheduled %q; want node-1, True", got.Spec.NodeName, scheduled)
	}
	// Only POST is served on pods/binding.
	req, _ := http.NewRequest(http.MethodGet, f.ts.URL+"/api/v1/namespaces/default/pods/web/binding", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET pods/web/binding = %d, want 405", res.StatusCode)
	}
}

func typesUID(s string) types.UID { return types.UID(s) }
