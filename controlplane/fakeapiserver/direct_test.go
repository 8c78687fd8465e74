package fakeapiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// directOps are the requests Direct makes, as a test drives them over either path.
type directOps interface {
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	PatchPodStatus(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Pod, error)
	DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	CreateNode(ctx context.Context, node *corev1.Node) (*corev1.Node, error)
	PatchNodeStatus(ctx context.Context, name string, pt types.PatchType, patch []byte) (*corev1.Node, error)
	GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
	CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error)
	UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error)
	CreateEvent(ctx context.Context, ev *corev1.Event) (*corev1.Event, error)
	PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Event, error)
	CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

var _ directOps = (*fakeapiserver.Direct)(nil)

// wireOps makes the same requests with client-go over HTTP.
type wireOps struct{ c kubernetes.Interface }

func (w wireOps) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return w.c.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}
func (w wireOps) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return w.c.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}
func (w wireOps) PatchPodStatus(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Pod, error) {
	return w.c.CoreV1().Pods(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{}, "status")
}
func (w wireOps) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	return w.c.CoreV1().Pods(namespace).Delete(ctx, name, opts)
}
func (w wireOps) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return w.c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}
func (w wireOps) CreateNode(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	return w.c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
}
func (w wireOps) PatchNodeStatus(ctx context.Context, name string, pt types.PatchType, patch []byte) (*corev1.Node, error) {
	return w.c.CoreV1().Nodes().Patch(ctx, name, pt, patch, metav1.PatchOptions{}, "status")
}
func (w wireOps) GetLease(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	return w.c.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
}
func (w wireOps) CreateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return w.c.CoordinationV1().Leases(lease.Namespace).Create(ctx, lease, metav1.CreateOptions{})
}
func (w wireOps) UpdateLease(ctx context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return w.c.CoordinationV1().Leases(lease.Namespace).Update(ctx, lease, metav1.UpdateOptions{})
}
func (w wireOps) CreateEvent(ctx context.Context, ev *corev1.Event) (*corev1.Event, error) {
	return w.c.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
}
func (w wireOps) PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.Event, error) {
	return w.c.CoreV1().Events(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{})
}
func (w wireOps) CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return w.c.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, tr, metav1.CreateOptions{})
}

// twin is one of two servers a test drives alike, one over HTTP, one in process.
type twin struct {
	srv   *fakeapiserver.Server
	clock *clocktesting.FakeClock
	rec   *trace.Recorder
	ops   directOps
}

func newTwin(t *testing.T, direct bool) *twin {
	t.Helper()
	tw := &twin{clock: clocktesting.NewFakeClock(start)}
	var err error
	if tw.rec, err = trace.NewRecorder(trace.RecorderOptions{Clock: tw.clock, Keep: true}); err != nil {
		t.Fatal(err)
	}
	tw.srv = newServer(t, fakeapiserver.Options{Clock: tw.clock, Tracer: tw.rec})
	if direct {
		tw.ops = tw.srv.Direct(rest.DefaultKubernetesUserAgent())
		return tw
	}
	c, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: tw.srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	tw.ops = wireOps{c}
	return tw
}

// read answers GET path from the server's handler: what the store holds, as the wire serves it.
func (tw *twin) read(t *testing.T, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	tw.srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	b, err := io.ReadAll(w.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDirectMatchesTheWire makes every request Direct serves, successes and failures, once over
// HTTP with client-go and once in process, on two servers alike, and wants the same answers, the
// same errors, the same stored objects and watch history, the same trace and the same request
// metrics.
func TestDirectMatchesTheWire(t *testing.T) {
	ctx := context.Background()
	// A time with nanoseconds, which the wire cuts to seconds (Time) or microseconds (MicroTime).
	fine := metav1.NewTime(start.Add(1500*time.Millisecond + 1234))
	micro := metav1.NewMicroTime(start.Add(2*time.Second + 1234567))
	grace := int64(0)
	wrongUID := types.UID("wrong")
	truth := true
	steps := []struct {
		name string
		do   func(o directOps, prev []any) (any, error)
	}{
		{"create node", func(o directOps, _ []any) (any, error) {
			return o.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{}},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: fine}}}})
		}},
		{"create node again", func(o directOps, _ []any) (any, error) {
			return o.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
		}},
		{"get node", func(o directOps, _ []any) (any, error) { return o.GetNode(ctx, "node-1") }},
		{"get missing node", func(o directOps, _ []any) (any, error) { return o.GetNode(ctx, "node-2") }},
		{"patch node status", func(o directOps, _ []any) (any, error) {
			return o.PatchNodeStatus(ctx, "node-1", types.StrategicMergePatchType,
				[]byte(`{"status":{"conditions":[{"type":"Ready","status":"False","lastHeartbeatTime":"2026-01-01T00:00:09Z"}]}}`))
		}},
		{"patch missing node status", func(o directOps, _ []any) (any, error) {
			return o.PatchNodeStatus(ctx, "node-2", types.StrategicMergePatchType, []byte(`{"status":{}}`))
		}},
		{"create mirror pod", func(o directOps, prev []any) (any, error) {
			node := prev[0].(*corev1.Node)
			pod := newPod("default", "static-node-1", "node-1")
			pod.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc", "kubernetes.io/config.hash": "abc"}
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: node.UID, Controller: &truth}}
			return o.CreatePod(ctx, pod)
		}},
		{"create pod", func(o directOps, _ []any) (any, error) { return o.CreatePod(ctx, newPod("default", "web", "node-1")) }},
		{"create pod without a namespace", func(o directOps, _ []any) (any, error) { return o.CreatePod(ctx, newPod("", "web", "node-1")) }},
		{"create invalid pod", func(o directOps, _ []any) (any, error) {
			pod := newPod("default", "bad", "node-1")
			pod.Spec.Containers = nil
			return o.CreatePod(ctx, pod)
		}},
		{"get pod", func(o directOps, _ []any) (any, error) { return o.GetPod(ctx, "default", "web") }},
		{"get missing pod", func(o directOps, _ []any) (any, error) { return o.GetPod(ctx, "default", "nope") }},
		{"patch pod status", func(o directOps, _ []any) (any, error) {
			return o.PatchPodStatus(ctx, "default", "web", types.StrategicMergePatchType,
				[]byte(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`))
		}},
		{"patch pod status again", func(o directOps, _ []any) (any, error) {
			return o.PatchPodStatus(ctx, "default", "web", types.StrategicMergePatchType,
				[]byte(`{"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2026-01-01T00:00:04Z"}]}}`))
		}},
		{"patch pod status unchanged", func(o directOps, _ []any) (any, error) {
			return o.PatchPodStatus(ctx, "default", "web", types.StrategicMergePatchType, []byte(`{"status":{"phase":"Running"}}`))
		}},
		{"patch pod status with a bad patch", func(o directOps, _ []any) (any, error) {
			return o.PatchPodStatus(ctx, "default", "web", types.StrategicMergePatchType, []byte(`{"status":`))
		}},
		{"patch pod status invalid", func(o directOps, _ []any) (any, error) {
			return o.PatchPodStatus(ctx, "default", "web", types.StrategicMergePatchType, []byte(`{"status":{"phase":"Bogus"}}`))
		}},
		{"create lease", func(o directOps, _ []any) (any, error) {
			return o.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), RenewTime: &micro}})
		}},
		{"get lease", func(o directOps, _ []any) (any, error) { return o.GetLease(ctx, "kube-node-lease", "node-1") }},
		{"update lease", func(o directOps, prev []any) (any, error) {
			lease := prev[len(prev)-1].(*coordinationv1.Lease).DeepCopy()
			later := metav1.NewMicroTime(micro.Add(10*time.Second + 999))
			lease.Spec.RenewTime = &later
			return o.UpdateLease(ctx, lease)
		}},
		{"update stale lease", func(o directOps, prev []any) (any, error) {
			lease := prev[len(prev)-2].(*coordinationv1.Lease).DeepCopy()
			return o.UpdateLease(ctx, lease)
		}},
		{"update lease too large with its managed fields", func(o directOps, prev []any) (any, error) {
			// Stored without them, at the second try of the update: that try's object is made
			// from the request's again.
			lease := prev[len(prev)-2].(*coordinationv1.Lease).DeepCopy()
			later := metav1.NewMicroTime(micro.Add(20 * time.Second))
			lease.Spec.RenewTime = &later
			for i := range 90 {
				var b strings.Builder
				b.WriteString(`{"f:metadata":{"f:labels":{`)
				for j := range 1000 {
					if j > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `"f:label-%d-%d":{}`, i, j)
				}
				b.WriteString(`}}}`)
				lease.ManagedFields = append(lease.ManagedFields, metav1.ManagedFieldsEntry{Manager: fmt.Sprintf("applier-%d", i),
					Operation: metav1.ManagedFieldsOperationApply, APIVersion: "coordination.k8s.io/v1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(b.String())}})
			}
			return o.UpdateLease(ctx, lease)
		}},
		{"create event", func(o directOps, _ []any) (any, error) {
			return o.CreateEvent(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started", Message: "started",
				FirstTimestamp: fine, LastTimestamp: fine, Count: 1, Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}})
		}},
		{"patch event", func(o directOps, _ []any) (any, error) {
			return o.PatchEvent(ctx, "default", "web.1", types.StrategicMergePatchType, []byte(`{"count":2,"lastTimestamp":"2026-01-01T00:00:20Z","message":"started"}`))
		}},
		{"patch missing event", func(o directOps, _ []any) (any, error) {
			return o.PatchEvent(ctx, "default", "web.2", types.StrategicMergePatchType, []byte(`{"count":2}`))
		}},
		{"create token", func(o directOps, prev []any) (any, error) {
			pod := prev[7].(*corev1.Pod)
			exp := int64(3607)
			return o.CreateToken(ctx, "default", "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
				ExpirationSeconds: &exp, BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}})
		}},
		{"create token of a missing service account", func(o directOps, _ []any) (any, error) {
			return o.CreateToken(ctx, "default", "nobody", &authenticationv1.TokenRequest{})
		}},
		{"delete pod of another UID", func(o directOps, _ []any) (any, error) {
			return nil, o.DeletePod(ctx, "default", "web", metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &wrongUID}})
		}},
		{"delete pod gracefully", func(o directOps, _ []any) (any, error) {
			return nil, o.DeletePod(ctx, "default", "static-node-1", metav1.DeleteOptions{})
		}},
		{"delete pod", func(o directOps, prev []any) (any, error) {
			uid := prev[7].(*corev1.Pod).UID
			return nil, o.DeletePod(ctx, "default", "web", metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &uid}})
		}},
		{"delete missing pod", func(o directOps, _ []any) (any, error) {
			return nil, o.DeletePod(ctx, "default", "web", metav1.DeleteOptions{GracePeriodSeconds: &grace})
		}},
	}
	wire, direct := newTwin(t, false), newTwin(t, true)
	var wirePrev, directPrev []any
	for _, step := range steps {
		wireGot, wireErr := step.do(wire.ops, wirePrev)
		directGot, directErr := step.do(direct.ops, directPrev)
		wirePrev, directPrev = append(wirePrev, wireGot), append(directPrev, directGot)
		if diff := cmp.Diff(wireGot, directGot); diff != "" {
			t.Errorf("%s: answer (-wire +direct):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(wireErr, directErr); diff != "" {
			t.Errorf("%s: error (-wire +direct):\n%s", step.name, diff)
		}
		wire.clock.Step(1500 * time.Millisecond)
		direct.clock.Step(1500 * time.Millisecond)
		if step.name == "update lease too large with its managed fields" {
			// The step means something only if the first try failed and the second stored.
			if lease, ok := directGot.(*coordinationv1.Lease); directErr != nil || !ok || len(lease.ManagedFields) != 0 {
				t.Errorf("%s: got %v, %v; want the lease stored without managed fields", step.name, directGot, directErr)
			}
		}
	}
	for _, path := range []string{"/api/v1/pods", "/api/v1/nodes", "/api/v1/events", "/apis/coordination.k8s.io/v1/leases", "/metrics"} {
		if diff := cmp.Diff(wire.read(t, path), direct.read(t, path)); diff != "" {
			t.Errorf("GET %s (-wire +direct):\n%s", path, diff)
		}
	}
	wireEvents, _, err := wire.srv.PodEventsSince("node-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	directEvents, _, err := direct.srv.PodEventsSince("node-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wireEvents, directEvents); diff != "" {
		t.Errorf("watch history (-wire +direct):\n%s", diff)
	}
	if diff := cmp.Diff(wire.rec.Events(), direct.rec.Events()); diff != "" {
		t.Errorf("trace (-wire +direct):\n%s", diff)
	}
	if len(wire.rec.Events()) == 0 {
		t.Error("no pod write was traced")
	}
}

// TestDirectAnswersAreCopies changes what Direct answers and wants the stored object unchanged.
func TestDirectAnswersAreCopies(t *testing.T) {
	ctx := context.Background()
	tw := newTwin(t, true)
	if _, err := tw.ops.CreatePod(ctx, newPod("default", "web", "node-1")); err != nil {
		t.Fatal(err)
	}
	got, err := tw.ops.GetPod(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	before := tw.read(t, "/api/v1/namespaces/default/pods/web")
	got.Labels["app"] = "changed"
	got.Spec.Containers[0].Image = "changed"
	again, err := tw.ops.GetPod(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if again.Labels["app"] != "web" || again.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("GetPod() after a change to an earlier answer = %v, %v; want the stored pod", again.Labels, again.Spec.Containers[0].Image)
	}
	if after := tw.read(t, "/api/v1/namespaces/default/pods/web"); after != before {
		t.Errorf("stored pod changed with an answer:\nbefore %s\nafter  %s", before, after)
	}
}

// TestDirectUpdatesRace updates one lease from two goroutines without a resource version, so
// that an update whose stored object moved between its read and its write tries again on the
// newer one (its second try's object made anew from the request's), and wants every update
// stored with what its request said.
func TestDirectUpdatesRace(t *testing.T) {
	ctx := context.Background()
	tw := newTwin(t, true)
	if _, err := tw.ops.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1")}}); err != nil {
		t.Fatal(err)
	}
	const writers, writes = 2, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				holder := fmt.Sprintf("holder-%d-%d", w, i)
				lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseTransitions: ptr.To(int32(i))}}
				got, err := tw.ops.UpdateLease(ctx, lease)
				switch {
				case err != nil:
					errs <- err
				case got.Spec.HolderIdentity == nil || *got.Spec.HolderIdentity != holder || *got.Spec.LeaseTransitions != int32(i):
					errs <- fmt.Errorf("UpdateLease(%s) answered %v", holder, got.Spec)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := tw.ops.GetLease(ctx, "kube-node-lease", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if rv := got.ResourceVersion; rv == "" {
		t.Fatalf("stored lease has no resource version")
	}
	if h := *got.Spec.HolderIdentity; h != fmt.Sprintf("holder-0-%d", writes-1) && h != fmt.Sprintf("holder-1-%d", writes-1) {
		t.Errorf("stored holder = %s, want one writer's last", h)
	}
}

// TestGetNodeView wants GetNodeView to answer what GetNode answers (the stored node without its
// apiVersion and kind), for a node and for a missing one, and to count as the same request.
func TestGetNodeView(t *testing.T) {
	ctx := context.Background()
	copies, views := newTwin(t, true), newTwin(t, true)
	for _, tw := range []*twin{copies, views} {
		if _, err := tw.ops.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"a": "b"}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}); err != nil {
			t.Fatal(err)
		}
	}
	direct := views.ops.(*fakeapiserver.Direct)
	for _, name := range []string{"node-1", "node-2"} {
		want, wantErr := copies.ops.GetNode(ctx, name)
		got, gotErr := direct.GetNodeView(ctx, name)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GetNodeView(%s) (-GetNode +GetNodeView):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantErr, gotErr); diff != "" {
			t.Errorf("GetNodeView(%s) error (-GetNode +GetNodeView):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff(copies.read(t, "/metrics"), views.read(t, "/metrics")); diff != "" {
		t.Errorf("metrics (-GetNode +GetNodeView):\n%s", diff)
	}
}

// TestUpdateLeaseView wants UpdateLeaseView to answer what UpdateLease answers, for an update
// and for a stale one, to store the same lease and to count as the same request.
func TestUpdateLeaseView(t *testing.T) {
	ctx := context.Background()
	copies, views := newTwin(t, true), newTwin(t, true)
	var created []*coordinationv1.Lease
	for _, tw := range []*twin{copies, views} {
		lease, err := tw.ops.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40)}})
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, lease)
	}
	direct := views.ops.(*fakeapiserver.Direct)
	renew := func(l *coordinationv1.Lease, at time.Duration) *coordinationv1.Lease {
		l = l.DeepCopy()
		l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(start.Add(at + 1234)))
		return l
	}
	for i, at := range []time.Duration{10 * time.Second, 20 * time.Second} {
		// The second update sends the created lease again: stale, a conflict.
		want, wantErr := copies.ops.UpdateLease(ctx, renew(created[0], at))
		got, gotErr := direct.UpdateLeaseView(ctx, renew(created[1], at))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("update %d: UpdateLeaseView (-UpdateLease +UpdateLeaseView):\n%s", i, diff)
		}
		if diff := cmp.Diff(wantErr, gotErr); diff != "" {
			t.Errorf("update %d: error (-UpdateLease +UpdateLeaseView):\n%s", i, diff)
		}
	}
	for _, path := range []string{"/apis/coordination.k8s.io/v1/leases", "/metrics"} {
		if diff := cmp.Diff(copies.read(t, path), views.read(t, path)); diff != "" {
			t.Errorf("GET %s (-UpdateLease +UpdateLeaseView):\n%s", path, diff)
		}
	}
}

// TestPatchPodStatusView wants PatchPodStatusView to answer what PatchPodStatus answers, for a
// patch that changes the status, one that changes nothing, a bad one and one of a missing pod,
// to store the same pod and to count as the same request; and its answer to be the stored pod's
// fields themselves, not a copy of them.
func TestPatchPodStatusView(t *testing.T) {
	ctx := context.Background()
	copies, views := newTwin(t, true), newTwin(t, true)
	for _, tw := range []*twin{copies, views} {
		if _, err := tw.ops.CreatePod(ctx, newPod("default", "web", "node-1")); err != nil {
			t.Fatal(err)
		}
	}
	direct := views.ops.(*fakeapiserver.Direct)
	var last *corev1.Pod
	for _, tc := range []struct{ name, pod, patch string }{
		{"running", "web", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`},
		{"unchanged", "web", `{"status":{"phase":"Running"}}`},
		{"bad patch", "web", `{"status":`},
		{"invalid", "web", `{"status":{"phase":"Bogus"}}`},
		{"missing pod", "nope", `{"status":{"phase":"Running"}}`},
	} {
		want, wantErr := copies.ops.PatchPodStatus(ctx, "default", tc.pod, types.StrategicMergePatchType, []byte(tc.patch))
		got, gotErr := direct.PatchPodStatusView(ctx, "default", tc.pod, types.StrategicMergePatchType, []byte(tc.patch))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: PatchPodStatusView (-PatchPodStatus +PatchPodStatusView):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(wantErr, gotErr); diff != "" {
			t.Errorf("%s: error (-PatchPodStatus +PatchPodStatusView):\n%s", tc.name, diff)
		}
		if gotErr == nil {
			last = got
		}
	}
	for _, path := range []string{"/api/v1/pods", "/metrics"} {
		if diff := cmp.Diff(copies.read(t, path), views.read(t, path)); diff != "" {
			t.Errorf("GET %s (-PatchPodStatus +PatchPodStatusView):\n%s", path, diff)
		}
	}
	// The in-process list hands over the stored pod's fields: the view shares them.
	list, err := direct.ListPods(ctx, "default", metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || last == nil {
		t.Fatalf("listed %d pods, answered %v, want one of each", len(list.Items), last)
	}
	if s := &list.Items[0]; &s.Status.Conditions[0] != &last.Status.Conditions[0] || &s.Spec.Containers[0] != &last.Spec.Containers[0] {
		t.Errorf("the view does not share the stored pod's status and spec")
	}
}

// TestGetPodView wants GetPodView to answer what GetPod answers (the stored pod without its
// apiVersion and kind), for a pod and for a missing one, and to count as the same request.
func TestGetPodView(t *testing.T) {
	ctx := context.Background()
	copies, views := newTwin(t, true), newTwin(t, true)
	for _, tw := range []*twin{copies, views} {
		if _, err := tw.ops.CreatePod(ctx, newPod("default", "web", "node-1")); err != nil {
			t.Fatal(err)
		}
	}
	direct := views.ops.(*fakeapiserver.Direct)
	for _, name := range []string{"web", "nope"} {
		want, wantErr := copies.ops.GetPod(ctx, "default", name)
		got, gotErr := direct.GetPodView(ctx, "default", name)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GetPodView(%s) (-GetPod +GetPodView):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantErr, gotErr); diff != "" {
			t.Errorf("GetPodView(%s) error (-GetPod +GetPodView):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff(copies.read(t, "/metrics"), views.read(t, "/metrics")); diff != "" {
		t.Errorf("metrics (-GetPod +GetPodView):\n%s", diff)
	}
}

// TestGetLeaseView wants GetLeaseView to answer what GetLease answers (the stored lease without
// its apiVersion and kind), for a lease and for a missing one, and to count as the same request.
func TestGetLeaseView(t *testing.T) {
	ctx := context.Background()
	copies, views := newTwin(t, true), newTwin(t, true)
	for _, tw := range []*twin{copies, views} {
		if _, err := tw.ops.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40)}}); err != nil {
			t.Fatal(err)
		}
	}
	direct := views.ops.(*fakeapiserver.Direct)
	for _, name := range []string{"node-1", "node-2"} {
		want, wantErr := copies.ops.GetLease(ctx, "kube-node-lease", name)
		got, gotErr := direct.GetLeaseView(ctx, "kube-node-lease", name)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GetLeaseView(%s) (-GetLease +GetLeaseView):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantErr, gotErr); diff != "" {
			t.Errorf("GetLeaseView(%s) error (-GetLease +GetLeaseView):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff(copies.read(t, "/metrics"), views.read(t, "/metrics")); diff != "" {
		t.Errorf("metrics (-GetLease +GetLeaseView):\n%s", diff)
	}
}
