package fakeapiserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestStatusWritesWithoutSameSpec makes the same writes on two servers, one whose field manager
// walks only the status of status writes that change nothing else (statusOnly) through the update
// field managers' converters (updateTypes), and one that runs the library's own field manager over
// the whole object, and wants every stored object, managed fields and their times included, to be
// the same: status writes by the kubelet and by another manager (which takes fields over), writes
// that change nothing, writes of the pod that change its spec and labels between them, managed
// fields of a version the server does not have, a pod's status with its labels and finalizers
// (kept, as kube-apiserver keeps them, and owned by the writer), a node's status with and without
// a change of its labels.
func TestStatusWritesWithoutSameSpec(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(true)
	ctx := context.Background()
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	type server struct {
		s   *Server
		clk *clocktesting.FakeClock
		cut bool
	}
	newServer := func(cut bool) server {
		clk := clocktesting.NewFakeClock(start)
		s, err := New(Options{Clock: clk, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return server{s: s, clk: clk, cut: cut}
	}
	patch := func(manager, ns, name, sub, body string) func(*Server) error {
		return func(s *Server) error {
			res := podsTarget
			if ns == "" {
				res = nodesTarget
			}
			d := s.Direct(manager + "/v1")
			_, err := d.patch(ctx, d.target(res, ns, name, sub), types.StrategicMergePatchType, []byte(body))
			return err
		}
	}
	steps := []struct {
		name  string
		write func(*Server) error
	}{
		{"create pod", func(s *Server) error {
			_, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}})
			return err
		}},
		{"create node", func(s *Server) error {
			_, err := s.Direct("kubelet/v1").CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}})
			return err
		}},
		{"kubelet: pending", patch("kubelet", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}]}}`)},
		{"kubelet: running", patch("kubelet", "default", "web", "status",
			`{"status":{"phase":"Running","podIP":"10.0.0.5","containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-01-01T00:00:02Z"}}}]}}`)},
		{"kubelet: same again", patch("kubelet", "default", "web", "status", `{"status":{"phase":"Running"}}`)},
		{"kubelet: a time", patch("kubelet", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:05Z"}]}}`)},
		{"controller takes a condition", patch("controller", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"False","lastTransitionTime":"2026-01-01T00:00:06Z"},{"type":"DisruptionTarget","status":"True","lastTransitionTime":"2026-01-01T00:00:06Z"}]}}`)},
		{"kubelet takes it back", patch("kubelet", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:07Z"}]}}`)},
		{"spec changes", patch("kubectl", "default", "web", "", `{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}`)},
		{"kubelet after the spec changed", patch("kubelet", "default", "web", "status",
			`{"status":{"containerStatuses":[{"name":"app","image":"nginx:1.28","imageID":"","ready":false,"restartCount":1,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`)},
		{"labels change", patch("kubectl", "default", "web", "", `{"metadata":{"labels":{"app":"web"}}}`)},
		{"kubelet after the labels changed", patch("kubelet", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:08Z"}]}}`)},
		{"managed fields of another version", patch("kubectl", "default", "web", "",
			`{"metadata":{"labels":{"tier":"front"},"managedFields":[{"manager":"old","operation":"Update","apiVersion":"v1beta1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:app":{}}}}},{"manager":"kubectl","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{}}}}}}]}}`)},
		{"kubelet after the other version", patch("kubelet", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:09Z"}]}}`)},
		{"controller again", patch("controller", "default", "web", "status",
			`{"status":{"conditions":[{"type":"DisruptionTarget","status":"False","lastTransitionTime":"2026-01-01T00:00:10Z"}]}}`)},
		{"kubelet removes a field", patch("kubelet", "default", "web", "status", `{"status":{"podIP":null}}`)},
		{"kubelet: invalid", patch("kubelet", "default", "web", "status", `{"status":{"phase":"Bogus"}}`)},
		{"kubelet labels the pod through its status", patch("kubelet", "default", "web", "status",
			`{"metadata":{"labels":{"a":"b"},"finalizers":["example.com/f"]},"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:11Z"}]}}`)},
		{"kubelet after its label", patch("kubelet", "default", "web", "status",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:12Z"}]}}`)},
		{"node status", patch("kubelet", "", "node-1", "status",
			`{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:10Z"}]}}`)},
		{"node status again", patch("kubelet", "", "node-1", "status",
			`{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:20Z"}]}}`)},
		{"node status with a label", patch("kubelet", "", "node-1", "status",
			`{"metadata":{"labels":{"zone":"a"}},"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:30Z"}]}}`)},
		{"node status again, labels kept", patch("kubelet", "", "node-1", "status",
			`{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:40Z"}]}}`)},
	}
	whole, cut := newServer(false), newServer(true)
	for _, step := range steps {
		var errs [2]error
		for i, srv := range []server{whole, cut} {
			fieldmanager.Shortcuts.Set(srv.cut)
			errs[i] = step.write(srv.s)
			srv.clk.Step(1500 * time.Millisecond)
		}
		fieldmanager.Shortcuts.Set(true)
		if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && errs[0].Error() != errs[1].Error()) {
			t.Errorf("%s: error = %v walking the whole object, %v leaving out the spec", step.name, errs[0], errs[1])
		}
		for _, key := range []struct {
			res      *resource
			ns, name string
		}{{podsTarget, "default", "web"}, {nodesTarget, "", "node-1"}} {
			var raw [2]string
			for i, srv := range []server{whole, cut} {
				raw[i] = storedRaw(srv.s, key.res, key.ns, key.name)
			}
			if diff := cmp.Diff(raw[0], raw[1]); diff != "" {
				t.Errorf("%s: stored %s (-library, whole object +shortcuts):\n%s", step.name, key.name, diff)
			}
		}
	}
	// The comparison means something only if the status alone was walked, the entry of another
	// version went (the library drops it when it cannot convert to its version), and managers
	// shared the status.
	var stored *entry
	_ = cut.s.store.locked(func() error {
		stored, _ = cut.s.store.get(podsTarget, "default", "web")
		return nil
	})
	if _, _, ok := fieldProbe(t).StatusOnly(target{res: podsTarget, subresource: "status"}.write(), stored.obj, stored.obj.DeepCopyObject()); !ok {
		t.Error("StatusOnly() walks the whole of a status write that changes nothing else")
	}
	relabeledPod := stored.obj.DeepCopyObject()
	mustMeta(relabeledPod).SetFinalizers(nil)
	if _, _, ok := fieldProbe(t).StatusOnly(target{res: podsTarget, subresource: "status"}.write(), stored.obj, relabeledPod); ok {
		t.Error("StatusOnly() walks only the status of a pod's status write that changes its finalizers")
	}
	managers := map[string]bool{}
	for _, e := range stored.meta().GetManagedFields() {
		managers[e.Manager+"/"+e.Subresource] = true
		if e.Manager == "kubelet" && !strings.Contains(string(e.FieldsV1.Raw), `"f:labels":{"f:a":{}}`) {
			t.Errorf("kubelet's fields = %s, want the label it set through the status", e.FieldsV1.Raw)
		}
	}
	if want := map[string]bool{"kubectl/": true, "kubelet/status": true, "controller/status": true}; !cmp.Equal(managers, want) {
		t.Errorf("managers of the pod = %v, want %v", managers, want)
	}
	var node *entry
	_ = cut.s.store.locked(func() error {
		node, _ = cut.s.store.get(nodesTarget, "", "node-1")
		return nil
	})
	relabeled := node.obj.DeepCopyObject()
	mustMeta(relabeled).SetLabels(map[string]string{"zone": "b"})
	if _, _, ok := fieldProbe(t).StatusOnly(target{res: nodesTarget, subresource: "status"}.write(), node.obj, relabeled); ok {
		t.Error("StatusOnly() walks only the status of a node's status write that changes its labels")
	}
}

// TestUpdateConverters wants the update field managers' type and object converters to give what
// the library's give: the kind of a typed value turned into an object, and the same object when
// it is converted to a version, its own or another.
func TestUpdateConverters(t *testing.T) {
	tc, err := fieldProbe(t).TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	tv, err := tc.ObjectToTyped(pod)
	if err != nil {
		t.Fatal(err)
	}
	full, err := tc.TypedToObject(tv)
	if err != nil {
		t.Fatal(err)
	}
	types, conv, typedValue := fieldProbe(t).UpdateConverters(tc)
	short, err := types.TypedToObject(tv)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := short.GetObjectKind().GroupVersionKind(), full.GetObjectKind().GroupVersionKind(); got != want {
		t.Errorf("kind of the typed value = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name   string
		in     runtime.Object
		target schema.GroupVersion
	}{
		{"typed value to its version", short, corev1.SchemeGroupVersion},
		{"typed value to a version the scheme lacks", short, schema.GroupVersion{Version: "v1beta1"}},
		{"object of the version", pod, corev1.SchemeGroupVersion},
		{"object to a version the scheme lacks", pod, schema.GroupVersion{Version: "v1beta1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if typedValue(in) {
				in = full
			}
			want, wantErr := scheme.ConvertToVersion(in.DeepCopyObject(), tc.target)
			got, err := conv.ConvertToVersion(tc.in, tc.target)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("ConvertToVersion() error = %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ConvertToVersion() (-library +update converter):\n%s", diff)
			}
		})
	}
	if got, _ := conv.ConvertToVersion(pod, corev1.SchemeGroupVersion); got != runtime.Object(pod) {
		t.Error("ConvertToVersion() copied an object that is already of the version")
	}
}
