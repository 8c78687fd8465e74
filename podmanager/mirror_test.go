package podmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

const mirrorTestNode = "test-node-name"

var mirrorPodsResource = v1.SchemeGroupVersion.WithResource("pods").GroupResource()

func mirrorStaticPod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:        "test-pod-name",
		Namespace:   "test-pod-ns",
		UID:         "123456789",
		Annotations: map[string]string{kubecontainer.ConfigHashAnnotationKey: "123456789"},
	}}
}

// mirrorNodeGetter returns a NodeGetter that fails the test when asked for another node.
func mirrorNodeGetter(t *testing.T, node *v1.Node, err error) NodeGetter {
	return NodeGetterFunc(func(_ context.Context, name string) (*v1.Node, error) {
		if name != mirrorTestNode {
			t.Errorf("GetNode(%q), want %q", name, mirrorTestNode)
		}
		return node, err
	})
}

// newMirrorClient returns NewMirrorClient(opts), failing the test on an error.
func newMirrorClient(t *testing.T, opts MirrorClientOptions) *MirrorClient {
	t.Helper()
	mc, err := NewMirrorClient(opts)
	if err != nil {
		t.Fatalf("NewMirrorClient() = %v", err)
	}
	return mc
}

// TestCreateMirrorPod ports the kubelet's TestCreateMirrorPod.
func TestCreateMirrorPod(t *testing.T) {
	tests := []struct {
		name    string
		node    *v1.Node
		nodeErr error
		wantErr error // nil: success
	}{
		{name: "cannot get node", nodeErr: errors.New("cannot get node"), wantErr: errors.New("any")},
		{name: "node missing UID", node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: mirrorTestNode}}, wantErr: ErrNodeUIDUnset},
		{name: "successfully fetched node", node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: mirrorTestNode, UID: "test-node-uid-1234"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			mc := newMirrorClient(t, MirrorClientOptions{Client: client, NodeName: mirrorTestNode, Nodes: mirrorNodeGetter(t, tt.node, tt.nodeErr), Tracer: trace.Discard})
			pod := mirrorStaticPod()
			err := mc.CreateMirrorPod(t.Context(), pod)
			if tt.wantErr != nil {
				if err == nil || !strings.HasPrefix(err.Error(), "failed to get node UID") {
					t.Errorf("CreateMirrorPod() = %v, want an error starting with %q", err, "failed to get node UID")
				}
				if errors.Is(tt.wantErr, ErrNodeUIDUnset) && !errors.Is(err, ErrNodeUIDUnset) {
					t.Errorf("CreateMirrorPod() = %v, want it to wrap ErrNodeUIDUnset", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateMirrorPod() = %v, want nil", err)
			}
			got, err := client.CoreV1().Pods("test-pod-ns").Get(t.Context(), "test-pod-name", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("reading the mirror pod back: %v", err)
			}
			if h := got.Annotations[kubecontainer.ConfigMirrorAnnotationKey]; h != "123456789" {
				t.Errorf("mirror annotation = %q, want %q", h, "123456789")
			}
			controller := true
			wantRefs := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: mirrorTestNode, UID: "test-node-uid-1234", Controller: &controller}}
			if diff := cmp.Diff(wantRefs, got.OwnerReferences); diff != "" {
				t.Errorf("owner references mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(mirrorStaticPod(), pod); diff != "" {
				t.Errorf("CreateMirrorPod changed the static pod (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateMirrorPodNodeFromClient(t *testing.T) {
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: mirrorTestNode, UID: "from-api"}})
	mc := newMirrorClient(t, MirrorClientOptions{Client: client, NodeName: mirrorTestNode, Tracer: trace.Discard})
	if err := mc.CreateMirrorPod(t.Context(), mirrorStaticPod()); err != nil {
		t.Fatalf("CreateMirrorPod() = %v, want nil", err)
	}
	got, err := client.CoreV1().Pods("test-pod-ns").Get(t.Context(), "test-pod-name", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the mirror pod back: %v", err)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != "from-api" {
		t.Errorf("owner references = %v, want one with UID from-api", got.OwnerReferences)
	}
}

func TestCreateMirrorPodAlreadyExists(t *testing.T) {
	existing := func(hash string) *v1.Pod {
		p := mirrorStaticPod()
		p.Annotations[kubecontainer.ConfigMirrorAnnotationKey] = hash
		return p
	}
	tests := []struct {
		name     string
		returned *v1.Pod // the object the API returns with AlreadyExists; nil: the fake's own behaviour
		wantErr  bool
	}{
		{name: "same hash", returned: existing("123456789")},
		{name: "other hash", returned: existing("old"), wantErr: true},
		{name: "empty object as the real client returns", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(existing("123456789"))
			if tt.returned != nil {
				client.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, tt.returned, apierrors.NewAlreadyExists(mirrorPodsResource, "test-pod-name")
				})
			}
			var events []trace.Event
			mc := newMirrorClient(t, MirrorClientOptions{Client: client, NodeName: mirrorTestNode, Tracer: trace.Func(func(e trace.Event) { events = append(events, e) }),
				Nodes: mirrorNodeGetter(t, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: mirrorTestNode, UID: "n"}}, nil)})
			err := mc.CreateMirrorPod(t.Context(), mirrorStaticPod())
			if (err != nil) != tt.wantErr {
				t.Fatalf("CreateMirrorPod() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("CreateMirrorPod() = %v, want AlreadyExists", err)
			}
			if len(events) != 1 || events[0].Reason != "AlreadyExists" {
				t.Errorf("trace = %+v, want one create event with reason AlreadyExists", events)
			}
		})
	}
}

func TestDeleteMirrorPod(t *testing.T) {
	uid := types.UID("mirror-uid")
	tests := []struct {
		name        string
		fullName    string
		uid         *types.UID
		apiErr      error // returned by a reactor; nil: the fake's own behaviour
		noPod       bool
		wantDeleted bool
		wantErr     error
		wantReason  string
	}{
		{name: "no precondition", fullName: "test-pod-name_test-pod-ns", wantDeleted: true},
		{name: "uid precondition", fullName: "test-pod-name_test-pod-ns", uid: &uid, wantDeleted: true},
		{name: "not found", fullName: "test-pod-name_test-pod-ns", noPod: true, wantReason: "NotFound"},
		{name: "precondition conflict", fullName: "test-pod-name_test-pod-ns", uid: &uid,
			apiErr: apierrors.NewConflict(mirrorPodsResource, "test-pod-name", errors.New("uid mismatch")), wantReason: "Conflict"},
		{name: "other api error", fullName: "test-pod-name_test-pod-ns", apiErr: apierrors.NewInternalError(errors.New("boom")), wantReason: "InternalError"},
		{name: "bad full name", fullName: "test-pod-name", wantErr: kubecontainer.ErrBadFullName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			if !tt.noPod {
				client = fake.NewClientset(mirrorStaticPod())
			}
			if tt.apiErr != nil {
				client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tt.apiErr })
			}
			var events []trace.Event
			mc := newMirrorClient(t, MirrorClientOptions{Client: client, NodeName: mirrorTestNode, Tracer: trace.Func(func(e trace.Event) { events = append(events, e) })})
			deleted, err := mc.DeleteMirrorPod(t.Context(), tt.fullName, tt.uid)
			if deleted != tt.wantDeleted || !errors.Is(err, tt.wantErr) {
				t.Fatalf("DeleteMirrorPod(%q) = %v, %v, want %v, %v", tt.fullName, deleted, err, tt.wantDeleted, tt.wantErr)
			}
			if tt.wantErr != nil {
				if n := len(client.Actions()); n != 0 {
					t.Errorf("DeleteMirrorPod(%q) made %d API calls, want 0", tt.fullName, n)
				}
				return
			}
			actions := client.Actions()
			if len(actions) != 1 {
				t.Fatalf("DeleteMirrorPod(%q) made %d API calls, want 1", tt.fullName, len(actions))
			}
			del := actions[0].(k8stesting.DeleteAction)
			grace := int64(0)
			want := metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: tt.uid}}
			if diff := cmp.Diff(want, del.GetDeleteOptions()); diff != "" {
				t.Errorf("delete options mismatch (-want +got):\n%s", diff)
			}
			if del.GetName() != "test-pod-name" || del.GetNamespace() != "test-pod-ns" {
				t.Errorf("deleted %s/%s, want test-pod-ns/test-pod-name", del.GetNamespace(), del.GetName())
			}
			wantEvent := trace.Event{Component: trace.Mirror, Event: "delete", Pod: "test-pod-ns/test-pod-name", Reason: tt.wantReason, Func: "DeleteMirrorPod"}
			if tt.uid != nil {
				wantEvent.UID = string(*tt.uid)
			}
			if len(events) == 1 {
				events[0].Message = ""
			}
			if diff := cmp.Diff([]trace.Event{wantEvent}, events); diff != "" {
				t.Errorf("trace mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMirrorClientStandalone(t *testing.T) {
	var events []trace.Event
	mc := newMirrorClient(t, MirrorClientOptions{NodeName: mirrorTestNode, Tracer: trace.Func(func(e trace.Event) { events = append(events, e) })})
	if err := mc.CreateMirrorPod(t.Context(), mirrorStaticPod()); err != nil {
		t.Errorf("CreateMirrorPod() = %v, want nil", err)
	}
	for _, name := range []string{"test-pod-name_test-pod-ns", "not-a-full-name"} {
		if deleted, err := mc.DeleteMirrorPod(t.Context(), name, nil); deleted || err != nil {
			t.Errorf("DeleteMirrorPod(%q) = %v, %v, want false, nil", name, deleted, err)
		}
	}
	if len(events) != 0 {
		t.Errorf("standalone trace = %+v, want none", events)
	}
}

func TestCreateMirrorPodTrace(t *testing.T) {
	var events []trace.Event
	mc := newMirrorClient(t, MirrorClientOptions{Client: fake.NewClientset(), NodeName: mirrorTestNode,
		Nodes:  mirrorNodeGetter(t, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: mirrorTestNode, UID: "n"}}, nil),
		Tracer: trace.Func(func(e trace.Event) { events = append(events, e) })})
	if err := mc.CreateMirrorPod(t.Context(), mirrorStaticPod()); err != nil {
		t.Fatalf("CreateMirrorPod() = %v, want nil", err)
	}
	want := []trace.Event{{Component: trace.Mirror, Event: "create", Pod: "test-pod-ns/test-pod-name", UID: "123456789", Func: "CreateMirrorPod"}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

func ExampleMirrorClient() {
	ctx := context.Background()
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-uid"}})
	mc, err := NewMirrorClient(MirrorClientOptions{Client: client, NodeName: "node-a", Tracer: trace.Discard})
	if err != nil {
		fmt.Println(err)
		return
	}
	static := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-node-a", UID: "abc",
		Annotations: map[string]string{kubecontainer.ConfigHashAnnotationKey: "abc"}}}
	fmt.Println(mc.CreateMirrorPod(ctx, static))
	mirror, _ := client.CoreV1().Pods("kube-system").Get(ctx, "etcd-node-a", metav1.GetOptions{})
	fmt.Println(mirror.Annotations[kubecontainer.ConfigMirrorAnnotationKey], mirror.OwnerReferences[0].Kind, mirror.OwnerReferences[0].Name)
	fmt.Println(mc.DeleteMirrorPod(ctx, kubecontainer.GetPodFullName(static), &mirror.UID))
	fmt.Println(mc.DeleteMirrorPod(ctx, kubecontainer.GetPodFullName(static), nil))
	// Output:
	// <nil>
	// abc Node node-a
	// true <nil>
	// false <nil>
}

func TestNewMirrorClientRequiredOptions(t *testing.T) {
	tests := []struct {
		name        string
		opts        MirrorClientOptions
		wantMissing string // "": no error
	}{
		{name: "standalone", opts: MirrorClientOptions{Tracer: trace.Discard}},
		{name: "no tracer", opts: MirrorClientOptions{NodeName: mirrorTestNode}, wantMissing: "Tracer"},
		{name: "client without node name", opts: MirrorClientOptions{Client: fake.NewClientset(), Tracer: trace.Discard}, wantMissing: "NodeName"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMirrorClient(tt.opts)
			if tt.wantMissing == "" {
				if err != nil {
					t.Errorf("NewMirrorClient() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, minikubelet.ErrMissingOption) || !strings.Contains(err.Error(), tt.wantMissing) {
				t.Errorf("NewMirrorClient() = %v, want an error wrapping minikubelet.ErrMissingOption naming %s", err, tt.wantMissing)
			}
		})
	}
}
