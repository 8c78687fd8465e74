package fakeapiserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestNodeStatusWritesMetadata checks the node status strategy: a patch of nodes/status changes
// the labels and annotations it carries with the status (the kubelet's CSI node info writes its
// node id annotation so, through nodeutil.PatchNodeStatus), but never the spec.
func TestNodeStatusWritesMetadata(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	nodes := f.client.CoreV1().Nodes()
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"metadata":{"annotations":{"csi.volume.kubernetes.io/nodeid":"{\"d\":\"id\"}"},"labels":{"zone":"z1"}},"spec":{"unschedulable":true},"status":{"capacity":{"cpu":"4"}}}`
	got, err := nodes.Patch(ctx, "node-1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("Patch(nodes/status) = %v", err)
	}
	if got.Annotations["csi.volume.kubernetes.io/nodeid"] != `{"d":"id"}` || got.Labels["zone"] != "z1" {
		t.Errorf("metadata after the status patch = %v %v, want the annotation and label written", got.Annotations, got.Labels)
	}
	if got.Spec.Unschedulable {
		t.Errorf("spec.unschedulable written through nodes/status")
	}
	if cpu := got.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "4" {
		t.Errorf("capacity cpu = %s, want 4", cpu.String())
	}
}

// TestStatusWritesKeepMetadata checks each status subresource against kube-apiserver's status
// strategies: a status patch keeps the labels, annotations and finalizers it sends (the strategy
// takes only the spec from the stored object, rest.BeforeUpdate the identity and creation marks),
// never changes the spec, and changes the owner references of anything but a pod (the pod status
// strategy keeps the stored ones). The manager of the write owns the labels it set, not the spec.
func TestStatusWritesKeepMetadata(t *testing.T) {
	owner := func(name string) string {
		return `[{"apiVersion":"v1","kind":"ConfigMap","name":"` + name + `","uid":"u-` + name + `"}]`
	}
	for _, tc := range []struct {
		resource, namespace, name string
		create                    string
		spec                      string // a spec change the status write sends
		wantOwner                 string // the owner reference's name after the write
	}{
		{"pods", "default", "web",
			`{"metadata":{"name":"web","ownerReferences":` + owner("before") + `},"spec":{"nodeName":"node-1","containers":[{"name":"app","image":"nginx"}]}}`,
			`{"activeDeadlineSeconds":5}`, "before"},
		{"nodes", "", "node-1",
			`{"metadata":{"name":"node-1","ownerReferences":` + owner("before") + `}}`,
			`{"unschedulable":true}`, "after"},
		{"namespaces", "", "team",
			`{"metadata":{"name":"team","ownerReferences":` + owner("before") + `}}`,
			`{"finalizers":["example.com/x"]}`, "after"},
		{"services", "default", "web",
			`{"metadata":{"name":"web","ownerReferences":` + owner("before") + `},"spec":{"ports":[{"port":80}]}}`,
			`{"ports":[{"port":81}]}`, "after"},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			f := newFixture(t, fakeapiserver.Options{})
			ctx := context.Background()
			rc := f.client.CoreV1().RESTClient()
			in := func(r *rest.Request) *rest.Request {
				r = r.Resource(tc.resource)
				if tc.namespace != "" {
					r = r.Namespace(tc.namespace)
				}
				return r
			}
			if err := in(rc.Post()).Body([]byte(tc.create)).Do(ctx).Error(); err != nil {
				t.Fatalf("create %s: %v", tc.resource, err)
			}
			before, err := in(rc.Get()).Name(tc.name).Do(ctx).Raw()
			if err != nil {
				t.Fatal(err)
			}
			patch := `{"metadata":{"labels":{"a":"b"},"annotations":{"n":"m"},"finalizers":["example.com/f"],"ownerReferences":` + owner("after") + `},` +
				`"spec":` + tc.spec + `}`
			returned, err := in(rc.Patch(types.MergePatchType)).Name(tc.name).
				SubResource("status").Param("fieldManager", "writer").Body([]byte(patch)).Do(ctx).Raw()
			if err != nil {
				t.Fatalf("PATCH %s/status: %v", tc.resource, err)
			}
			stored, err := in(rc.Get()).Name(tc.name).Do(ctx).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(returned), string(stored)); diff != "" {
				t.Errorf("stored object differs from the answer (-returned +stored):\n%s", diff)
			}
			var was, got statusMetaObject
			if err := json.Unmarshal(before, &was); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(stored, &got); err != nil {
				t.Fatal(err)
			}
			if got.Labels["a"] != "b" || got.Annotations["n"] != "m" || !cmp.Equal(got.Finalizers, []string{"example.com/f"}) {
				t.Errorf("metadata after the status write: labels %v, annotations %v, finalizers %v; want a=b, n=m, [example.com/f]",
					got.Labels, got.Annotations, got.Finalizers)
			}
			if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Name != tc.wantOwner {
				t.Errorf("owner references = %v, want one named %q", got.OwnerReferences, tc.wantOwner)
			}
			if diff := cmp.Diff(string(was.Spec), string(got.Spec)); diff != "" {
				t.Errorf("spec changed through %s/status (-before +after):\n%s", tc.resource, diff)
			}
			if got.UID != was.UID || got.Name != was.Name || !got.CreationTimestamp.Equal(&was.CreationTimestamp) {
				t.Errorf("identity after the status write = %s %s %v, want %s %s %v", got.Name, got.UID, got.CreationTimestamp, was.Name, was.UID, was.CreationTimestamp)
			}
			var owned string
			for _, e := range got.ManagedFields {
				if e.Manager == "writer" {
					if e.Subresource != "status" {
						t.Errorf("writer's entry is of subresource %q, want status", e.Subresource)
					}
					owned = string(e.FieldsV1.Raw)
				}
			}
			for _, want := range []string{`"f:a":{}`, `"f:n":{}`, `"v:\"example.com/f\"":{}`} {
				if !strings.Contains(owned, want) {
					t.Errorf("writer owns %s, want %s in it", owned, want)
				}
			}
			if strings.Contains(owned, `"f:spec"`) {
				t.Errorf("writer owns %s: spec fields through the status subresource", owned)
			}
			if ownsOwners := strings.Contains(owned, `"f:ownerReferences"`); ownsOwners != (tc.wantOwner == "after") {
				t.Errorf("writer owns %s: owner references owned = %v, want %v", owned, ownsOwners, tc.wantOwner == "after")
			}
		})
	}
}

// statusMetaObject is the part of an object TestStatusWritesKeepMetadata reads.
type statusMetaObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              json.RawMessage `json:"spec"`
}
