package fakeapiserver_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestReadableKindsAreServed checks every readable kind against the server's discovery and its
// list path: each is listed by discovery with get and list, and its path answers a list.
func TestReadableKindsAreServed(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	kinds := fakeapiserver.ReadableKinds()
	want := map[string]bool{"Pod": false, "Node": false, "CSINode": false, "ConfigMap": false, "Secret": false, "Service": false, "ServiceAccount": false, "Endpoints": false, "Lease": false, "Event": false, "Namespace": false}
	for _, k := range kinds {
		if _, ok := want[k.Kind]; ok {
			want[k.Kind] = true
		}
		list, err := client.Discovery().ServerResourcesForGroupVersion(k.GroupVersion.String())
		if err != nil {
			t.Fatalf("discovery of %s: %v", k.GroupVersion, err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == k.Resource && r.Kind == k.Kind && r.Namespaced == k.Namespaced {
				found = true
			}
		}
		if !found {
			t.Errorf("%s (%s %s) is not in discovery", k.Kind, k.GroupVersion, k.Resource)
		}
		if _, err := client.Discovery().RESTClient().Get().AbsPath(k.Path("default", "")).DoRaw(context.Background()); err != nil {
			t.Errorf("GET %s: %v", k.Path("default", ""), err)
		}
	}
	for kind, seen := range want {
		if !seen {
			t.Errorf("%s is not a readable kind", kind)
		}
	}
	lease := fakeapiserver.ReadableKind{Kind: "Lease", GroupVersion: schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}, Resource: "leases", Namespaced: true}
	node := fakeapiserver.ReadableKind{Kind: "Node", GroupVersion: schema.GroupVersion{Version: "v1"}, Resource: "nodes"}
	for _, tc := range []struct{ got, want string }{
		{lease.Path("kube-node-lease", "node-1"), "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1"},
		{lease.Path("", ""), "/apis/coordination.k8s.io/v1/leases"},
		{node.Path("", "node-1"), "/api/v1/nodes/node-1"},
	} {
		if tc.got != tc.want {
			t.Errorf("Path = %q, want %q", tc.got, tc.want)
		}
	}
}
