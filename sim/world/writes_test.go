package world

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/volumemanager"
)

// nodeAPI is every client a kubelet's writes go through.
type nodeAPI struct {
	pods   status.PodStatusClient
	mirror podmanager.MirrorAPI
	node   nodestatus.Client
	tokens volumemanager.TokenClient
}

// wireTokens is the token client over client-go, as the kubelet's.
type wireTokens struct{ c kubernetes.Interface }

func (w wireTokens) CreateToken(ctx context.Context, namespace, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return w.c.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, tr, metav1.CreateOptions{})
}

// TestNodeWritesMatchTheAdapters makes a kubelet's writes through NodeWrites and through the
// client-go adapters over HTTP, on two clusters alike, with the link up and then down, and wants
// the same answers and the same errors (their text, which callers trace, and their reason).
func TestNodeWritesMatchTheAdapters(t *testing.T) {
	ctx := context.Background()
	type side struct {
		clk  *vclock.Clock
		link *Link
		api  nodeAPI
	}
	newSide := func(direct bool) side {
		clk := vclock.New(vclock.Epoch)
		c, err := NewCluster(clk, trace.Discard, 1)
		if err != nil {
			t.Fatal(err)
		}
		link, client, err := c.NodeLink()
		if err != nil {
			t.Fatal(err)
		}
		if direct {
			w := c.NodeWrites(link, client)
			return side{clk, link, nodeAPI{pods: w, mirror: w.Mirror(), node: w, tokens: w}}
		}
		return side{clk, link, nodeAPI{pods: status.ClientsetAdapter{Client: client}, mirror: podmanager.ClientsetMirrorAPI{Client: client},
			node: nodestatus.ClientsetClient{Client: client}, tokens: wireTokens{client}}}
	}
	grace := int64(0)
	steps := []struct {
		name string
		do   func(a nodeAPI, prev []any) (any, error)
	}{
		{"create node", func(a nodeAPI, _ []any) (any, error) {
			return a.node.CreateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
		}},
		{"get node", func(a nodeAPI, _ []any) (any, error) { return a.node.GetNode(ctx, "node-1") }},
		{"patch node status", func(a nodeAPI, prev []any) (any, error) {
			original := prev[1].(*v1.Node)
			node := original.DeepCopy()
			node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}}
			node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(vclock.Epoch.Add(1500 * time.Millisecond))}}
			return a.node.PatchNodeStatus(ctx, original, node)
		}},
		{"create lease", func(a nodeAPI, _ []any) (any, error) {
			renew := metav1.NewMicroTime(vclock.Epoch.Add(1234567))
			holder := "node-1"
			return a.node.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &renew}})
		}},
		{"update lease", func(a nodeAPI, prev []any) (any, error) {
			lease := prev[3].(*coordinationv1.Lease).DeepCopy()
			renew := metav1.NewMicroTime(vclock.Epoch.Add(10 * time.Second))
			lease.Spec.RenewTime = &renew
			return a.node.UpdateLease(ctx, lease)
		}},
		{"update stale lease", func(a nodeAPI, prev []any) (any, error) {
			return a.node.UpdateLease(ctx, prev[3].(*coordinationv1.Lease))
		}},
		{"get lease", func(a nodeAPI, _ []any) (any, error) { return a.node.GetLease(ctx, "kube-node-lease", "node-1") }},
		{"create mirror pod", func(a nodeAPI, _ []any) (any, error) {
			return a.mirror.CreatePod(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "static-node-1",
				Annotations: map[string]string{"kubernetes.io/config.mirror": "h"}},
				Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}}}})
		}},
		{"create mirror pod again", func(a nodeAPI, _ []any) (any, error) {
			return a.mirror.CreatePod(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "static-node-1"},
				Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}}}})
		}},
		{"get pod", func(a nodeAPI, _ []any) (any, error) { return a.pods.GetPod(ctx, "default", "static-node-1") }},
		{"get missing pod", func(a nodeAPI, _ []any) (any, error) { return a.pods.GetPod(ctx, "default", "nope") }},
		{"patch pod status", func(a nodeAPI, _ []any) (any, error) {
			return a.pods.PatchPodStatus(ctx, "default", "static-node-1", []byte(`{"status":{"phase":"Running"}}`))
		}},
		{"patch pod status badly", func(a nodeAPI, _ []any) (any, error) {
			return a.pods.PatchPodStatus(ctx, "default", "static-node-1", []byte(`{"status":{"phase":"Bogus"}}`))
		}},
		{"token of a missing service account", func(a nodeAPI, _ []any) (any, error) {
			return a.tokens.CreateToken(ctx, "default", "nobody", &authenticationv1.TokenRequest{})
		}},
		{"delete pod of another UID", func(a nodeAPI, _ []any) (any, error) {
			return nil, a.pods.DeletePod(ctx, "default", "static-node-1", types.UID("other"))
		}},
		{"delete mirror pod", func(a nodeAPI, _ []any) (any, error) {
			return nil, a.mirror.DeletePod(ctx, "default", "static-node-1", metav1.DeleteOptions{GracePeriodSeconds: &grace})
		}},
		{"delete missing pod", func(a nodeAPI, _ []any) (any, error) {
			return nil, a.pods.DeletePod(ctx, "default", "static-node-1", types.UID("other"))
		}},
	}
	wire, direct := newSide(false), newSide(true)
	for _, down := range []bool{false, true} {
		if down {
			wire.link.CutUntil(vclock.Epoch.Add(24 * time.Hour))
			direct.link.CutUntil(vclock.Epoch.Add(24 * time.Hour))
		}
		var wirePrev, directPrev []any
		for _, step := range steps {
			name := step.name
			if down {
				name += " (link down)"
			}
			wireGot, wireErr := step.do(wire.api, wirePrev)
			directGot, directErr := step.do(direct.api, directPrev)
			wirePrev, directPrev = append(wirePrev, wireGot), append(directPrev, directGot)
			if diff := cmp.Diff(wireGot, directGot); diff != "" {
				t.Errorf("%s: answer (-wire +direct):\n%s", name, diff)
			}
			if down && wireErr == nil {
				t.Errorf("%s: no error with the link down", name)
			}
			if (wireErr == nil) != (directErr == nil) {
				t.Fatalf("%s: error = %v over the wire, %v in process", name, wireErr, directErr)
			}
			if wireErr == nil {
				continue
			}
			if wireErr.Error() != directErr.Error() || apierrors.ReasonForError(wireErr) != apierrors.ReasonForError(directErr) {
				t.Errorf("%s: error = %q (%s) over the wire, %q (%s) in process", name,
					wireErr, apierrors.ReasonForError(wireErr), directErr, apierrors.ReasonForError(directErr))
			}
		}
		wire.clk.Advance(time.Second)
		direct.clk.Advance(time.Second)
	}
}

type readyRuntime struct{}

func (readyRuntime) Errors() error                   { return nil }
func (readyRuntime) UpdateRuntimeUp(context.Context) {}

// TestNodeReadsLeaveTheStoredObjectsAlone runs a node's registration and ten minutes of heartbeats
// (lease renewals, status updates, status writes at the fast update and the report period)
// through NodeWrites, whose GetNode and UpdateLease answer views of the stored node and lease,
// and wants the stored node and lease to stay what the server encoded at their last writes: a
// reader that changed a view would change the stored object without a write.
func TestNodeReadsLeaveTheStoredObjectsAlone(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	c, err := NewCluster(clk, trace.Discard, 1)
	if err != nil {
		t.Fatal(err)
	}
	link, client, err := c.NodeLink()
	if err != nil {
		t.Fatal(err)
	}
	w := c.NodeWrites(link, client)
	s, err := nodestatus.New(nodestatus.Options{NodeName: "node-1", NodeIP: "192.168.0.10", Clock: clk, Tracer: trace.Discard,
		Client: w, RuntimeState: readyRuntime{}})
	if err != nil {
		t.Fatal(err)
	}
	stored := func(resource, namespace string) string {
		t.Helper()
		obj, ok := c.Server().Object(resource, namespace, "node-1")
		if !ok {
			t.Fatalf("no %s stored", resource)
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var views []*v1.Node
	end := vclock.Epoch.Add(10 * time.Minute)
	for clk.Now().Before(end) {
		if err := s.Register(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
		// The node is registered 100ms after the start, and its lease created at the lease
		// controller's first sync after that (about 10s).
		if _, ok := c.Server().Object("nodes", "", "node-1"); ok {
			encoded, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/node-1").DoRaw(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := stored("nodes", ""); got != string(encoded) {
				t.Fatalf("at %s the stored node differs from its encoding:\nstored  %s\nencoded %s", clk.Now(), got, encoded)
			}
			view, err := w.GetNode(ctx, "node-1")
			if err != nil {
				t.Fatal(err)
			}
			views = append(views, view)
		}
		if _, ok := c.Server().Object("leases", "kube-node-lease", "node-1"); ok {
			encoded, err := client.CoreV1().RESTClient().Get().AbsPath("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1").DoRaw(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := stored("leases", "kube-node-lease"); got != string(encoded) {
				t.Fatalf("at %s the stored lease differs from its encoding:\nstored  %s\nencoded %s", clk.Now(), got, encoded)
			}
		}
		next, _ := s.NextWake()
		clk.Set(next)
	}
	writes := map[string]bool{}
	for _, v := range views {
		writes[v.ResourceVersion] = true
	}
	// The test means something only if the status was written several times.
	if len(writes) < 3 {
		t.Errorf("the node was stored at %d versions, want at least 3 (registration, fast update, report)", len(writes))
	}
}

// readingStartup is the status manager's startup tracker that reads every patched pod it is
// handed, as the kubelet's does (its container states), and remembers the pods' versions.
type readingStartup struct {
	versions map[string]bool
	started  int
}

func (r *readingStartup) RecordStatusUpdated(pod *v1.Pod) {
	r.versions[pod.ResourceVersion] = true
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			r.started++
		}
	}
}

func (r *readingStartup) DeletePodStartupState(types.UID) {}

// answeredPods is NodeWrites as the status manager's client, keeping each answer of a status
// write and its encoding the moment it is returned, before the status manager handles it, and
// each pod it read before a write (reads, readsEncoded) the same way.
type answeredPods struct {
	*NodeWrites
	answers, reads        []*v1.Pod
	encoded, readsEncoded [][]byte
}

func (a *answeredPods) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := a.NodeWrites.GetPod(ctx, namespace, name)
	if err == nil {
		b, merr := json.Marshal(pod)
		if merr != nil {
			return nil, merr
		}
		a.reads, a.readsEncoded = append(a.reads, pod), append(a.readsEncoded, b)
	}
	return pod, err
}

func (a *answeredPods) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	pod, err := a.NodeWrites.PatchPodStatus(ctx, namespace, name, patch)
	if err == nil {
		b, merr := json.Marshal(pod)
		if merr != nil {
			return nil, merr
		}
		a.answers, a.encoded = append(a.answers, pod), append(a.encoded, b)
	}
	return pod, err
}

// TestPodStatusWritesLeaveTheStoredPodAlone takes a pod from Pending through Running to
// Succeeded and its deletion with a status manager writing through NodeWrites, whose GetPod and
// PatchPodStatus answer views of the stored pod, read by the status manager (its merge, patch,
// trace, canBeDeleted) and the startup tracker; and wants, once every write was handled, each
// pod read and each answer to encode as it did when it was returned, and the stored pod (while it is stored) to be the
// last answer: a reader that changed a view would change a stored pod without a write.
func TestPodStatusWritesLeaveTheStoredPodAlone(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	c, err := NewCluster(clk, trace.Discard, 1)
	if err != nil {
		t.Fatal(err)
	}
	link, client, err := c.NodeLink()
	if err != nil {
		t.Fatal(err)
	}
	created, err := client.CoreV1().Pods("default").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.PodSpec{NodeName: "node-1", Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	startup := &readingStartup{versions: map[string]bool{}}
	writes := &answeredPods{NodeWrites: c.NodeWrites(link, client)}
	m, err := status.New(status.Options{Client: writes, Clock: clk, Tracer: trace.Discard, Startup: startup})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) metav1.Time { return metav1.NewTime(vclock.Epoch.Add(time.Duration(s) * time.Second)) }
	running := v1.ContainerStatus{Name: "c", Image: "busybox:1.36", Ready: true, Started: ptrTo(true),
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at(2)}}}
	done := v1.ContainerStatus{Name: "c", Image: "busybox:1.36", Started: ptrTo(false),
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: at(2), FinishedAt: at(5)}}}
	statuses := []v1.PodStatus{
		{Phase: v1.PodPending, HostIP: "192.168.0.10"},
		{Phase: v1.PodRunning, HostIP: "192.168.0.10", PodIP: "10.1.0.5", StartTime: ptrTo(at(1)), ContainerStatuses: []v1.ContainerStatus{running},
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: at(3)}}},
		{Phase: v1.PodSucceeded, HostIP: "192.168.0.10", PodIP: "10.1.0.5", StartTime: ptrTo(at(1)), ContainerStatuses: []v1.ContainerStatus{done},
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: at(5)}}},
	}
	for i, s := range statuses {
		last := i == len(statuses)-1
		if last {
			// The pod is being deleted: the terminal write is followed by the status manager's delete.
			if err := client.CoreV1().Pods("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		pod, err := client.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m.SetPodStatus(pod, s)
		if last {
			m.TerminatePod(pod)
		}
		clk.Advance(time.Second)
		if err := m.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if len(writes.answers) != i+1 {
			t.Fatalf("step %d: %d status writes, want %d", i, len(writes.answers), i+1)
		}
		obj, ok := c.Server().Object("pods", "default", "web")
		if last {
			if ok {
				t.Errorf("the terminal pod was not deleted")
			}
			continue
		}
		if !ok {
			t.Fatalf("step %d: no pod stored", i)
		}
		storedPod := obj.(*v1.Pod)
		storedPod.TypeMeta = metav1.TypeMeta{} // an answer has none
		if diff := cmp.Diff(writes.answers[i], storedPod); diff != "" {
			t.Errorf("step %d: the stored pod differs from the write's answer (-answer +stored):\n%s", i, diff)
		}
	}
	// The status manager hands what a write did to its core at its next step.
	clk.Advance(time.Second)
	if err := m.Step(ctx); err != nil {
		t.Fatal(err)
	}
	for i, pod := range writes.answers {
		if now, err := json.Marshal(pod); err != nil || string(now) != string(writes.encoded[i]) {
			t.Errorf("write %d: the answer changed after it was returned (%v):\nthen %s\nnow  %s", i, err, writes.encoded[i], now)
		}
	}
	if len(writes.reads) < len(statuses) {
		t.Errorf("%d pods read before the writes, want at least %d", len(writes.reads), len(statuses))
	}
	for i, pod := range writes.reads {
		if now, err := json.Marshal(pod); err != nil || string(now) != string(writes.readsEncoded[i]) {
			t.Errorf("read %d: the pod read changed after it was returned (%v):\nthen %s\nnow  %s", i, err, writes.readsEncoded[i], now)
		}
	}
	// The test means something only if the views were read at several versions.
	if len(startup.versions) < 2 || startup.started == 0 || startup.versions[created.ResourceVersion] {
		t.Errorf("the startup tracker read %d versions (%d running containers), want at least 2 after the created one", len(startup.versions), startup.started)
	}
}

func ptrTo[T any](v T) *T { return &v }
