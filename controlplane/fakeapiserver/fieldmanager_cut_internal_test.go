package fakeapiserver

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestStatusWritesWithoutSameSpec makes the same writes on two servers, one whose field manager
// leaves out the spec of status writes that keep it (withoutSameSpec) and one that walks the whole
// object, and wants every stored object, managed fields and their times included, to be the same:
// status writes by the kubelet and by another manager (which takes fields over), writes that
// change nothing, a write of the pod that changes its spec between them, a node's status.
func TestStatusWritesWithoutSameSpec(t *testing.T) {
	defer func() { cutSameSpec = true }()
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
			_, err := s.Direct("kubelet/v1").CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
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
		{"kubelet removes a field", patch("kubelet", "default", "web", "status", `{"status":{"podIP":null}}`)},
		{"kubelet: invalid", patch("kubelet", "default", "web", "status", `{"status":{"phase":"Bogus"}}`)},
		{"node status", patch("kubelet", "", "node-1", "status",
			`{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:10Z"}]}}`)},
		{"node status again", patch("kubelet", "", "node-1", "status",
			`{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:20Z"}]}}`)},
	}
	whole, cut := newServer(false), newServer(true)
	for _, step := range steps {
		var errs [2]error
		for i, srv := range []server{whole, cut} {
			cutSameSpec = srv.cut
			errs[i] = step.write(srv.s)
			srv.clk.Step(1500 * time.Millisecond)
		}
		cutSameSpec = true
		if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && errs[0].Error() != errs[1].Error()) {
			t.Errorf("%s: error = %v walking the whole object, %v leaving out the spec", step.name, errs[0], errs[1])
		}
		for _, key := range []struct {
			res      *resource
			ns, name string
		}{{podsTarget, "default", "web"}, {nodesTarget, "", "node-1"}} {
			var raw [2]string
			for i, srv := range []server{whole, cut} {
				_ = srv.s.store.locked(func() error {
					if e, ok := srv.s.store.get(key.res, key.ns, key.name); ok {
						raw[i] = string(e.raw)
					}
					return nil
				})
			}
			if diff := cmp.Diff(raw[0], raw[1]); diff != "" {
				t.Errorf("%s: stored %s (-whole +without the spec):\n%s", step.name, key.name, diff)
			}
		}
	}
	// The comparison means something only if the spec was left out, and managers shared the
	// status.
	var stored *entry
	_ = cut.s.store.locked(func() error {
		stored, _ = cut.s.store.get(podsTarget, "default", "web")
		return nil
	})
	if _, _, ok := withoutSameSpec(target{res: podsTarget, subresource: "status"}, stored.obj, stored.obj.DeepCopyObject()); !ok {
		t.Error("withoutSameSpec() left the spec of a status write that keeps it")
	}
	managers := map[string]bool{}
	for _, e := range stored.meta().GetManagedFields() {
		managers[e.Manager+"/"+e.Subresource] = true
	}
	if want := map[string]bool{"kubectl/": true, "kubelet/status": true, "controller/status": true}; !cmp.Equal(managers, want) {
		t.Errorf("managers of the pod = %v, want %v", managers, want)
	}
}
