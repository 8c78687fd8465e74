package fakeapiserver_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// verbRequests are the request that amounts to each verb, on a resource's collection or object.
var verbRequests = map[string]struct {
	method string
	object bool
	query  string
}{
	"create": {"POST", false, ""}, "deletecollection": {"DELETE", false, ""}, "list": {"GET", false, ""},
	"watch": {"GET", false, "?watch=1"}, "get": {"GET", true, ""}, "update": {"PUT", true, ""},
	"patch": {"PATCH", true, ""}, "delete": {"DELETE", true, ""},
}

// TestVerbsOneFact checks that discovery, the OpenAPI documents and the router agree on the verbs
// of every resource: each verb discovery does not list is answered 405, and each OpenAPI document
// describes exactly the listed verbs of its resources.
func TestVerbsOneFact(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{ResourceMetrics: fakeUsage{}})
	_, lists, err := f.client.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	h := f.srv.Handler()
	compared := 0
	for _, list := range lists {
		prefix := "/apis/" + list.GroupVersion
		if list.GroupVersion == "v1" {
			prefix = "/api/v1"
		}
		actions := openAPIActions(t, f, strings.TrimPrefix(prefix, "/"))
		for _, res := range list.APIResources {
			if strings.Contains(res.Name, "/") {
				continue
			}
			collection := prefix + "/" + res.Name
			if res.Namespaced {
				collection = prefix + "/namespaces/default/" + res.Name
			}
			for verb, req := range verbRequests {
				if slices.Contains(res.Verbs, verb) {
					continue
				}
				path := collection + req.query
				if req.object {
					path = collection + "/x"
				}
				if w := do(h, req.method, path, "application/json", "{}"); w.Code != http.StatusMethodNotAllowed {
					t.Errorf("%s %s (%s is not among %s's verbs %v) = %d, want 405", req.method, path, verb, res.Name, res.Verbs, w.Code)
				}
			}
			if actions == nil {
				continue // a group version the documents leave out (metrics.k8s.io)
			}
			got, ok := actions[res.Kind]
			if !ok {
				if res.Kind != "CustomResourceDefinition" {
					t.Errorf("the OpenAPI document of %s does not describe %s", list.GroupVersion, res.Kind)
				}
				continue
			}
			var want []string
			for _, v := range res.Verbs {
				if v != "watch" {
					want = append(want, v)
				}
			}
			sort.Strings(want)
			compared++
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("OpenAPI verbs of %s %s (-discovery +openapi):\n%s", list.GroupVersion, res.Kind, diff)
			}
		}
	}
	if compared < 15 {
		t.Errorf("compared the OpenAPI verbs of %d resources, want every resource the documents describe", compared)
	}
}

// openAPIActions returns, for each kind of the group version's OpenAPI v3 document, the verbs of
// the operations on its resource (not its subresources), or nil when there is no document.
func openAPIActions(t *testing.T, f *fixture, key string) map[string][]string {
	t.Helper()
	w := do(f.srv.Handler(), "GET", "/openapi/v3/"+key, "", "")
	if w.Code == http.StatusNotFound {
		return nil
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("decode OpenAPI document %s: %v", key, err)
	}
	verbOf := map[string]string{"post": "create", "put": "update"}
	seen := map[string]map[string]bool{}
	for path, ops := range doc.Paths {
		if strings.HasSuffix(path, "/status") || strings.HasSuffix(path, "/binding") {
			continue
		}
		for _, raw := range ops {
			var op struct {
				Action string                  `json:"x-kubernetes-action"`
				GVK    metav1.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
			}
			if json.Unmarshal(raw, &op) != nil || op.Action == "" {
				continue // the path's parameters
			}
			verb := op.Action
			if v, ok := verbOf[verb]; ok {
				verb = v
			}
			if seen[op.GVK.Kind] == nil {
				seen[op.GVK.Kind] = map[string]bool{}
			}
			seen[op.GVK.Kind][verb] = true
		}
	}
	out := map[string][]string{}
	for kind, verbs := range seen {
		for v := range verbs {
			out[kind] = append(out[kind], v)
		}
		sort.Strings(out[kind])
	}
	return out
}

// TestServedResources checks the start-up log's list of what is served: every resource, by group
// version, and the metrics API only with a source.
func TestServedResources(t *testing.T) {
	want := "core/v1 events, nodes, pods, namespaces, configmaps, secrets, serviceaccounts, services, endpoints; " +
		"coordination.k8s.io/v1 leases; storage.k8s.io/v1 csinodes; events.k8s.io/v1 events; " +
		"discovery.k8s.io/v1 endpointslices; resource.k8s.io/v1 resourceslices; apiextensions.k8s.io/v1 customresourcedefinitions; " +
		"authorization.k8s.io/v1 selfsubjectaccessreviews, selfsubjectrulesreviews, subjectaccessreviews; " +
		"authentication.k8s.io/v1 selfsubjectreviews, tokenreviews; discovery, /version, OpenAPI, /metrics"
	if got := newServer(t, testOptions()).ServedResources(); got != want {
		t.Errorf("ServedResources() =\n%s\nwant\n%s", got, want)
	}
	opts := testOptions()
	opts.ResourceMetrics = fakeUsage{}
	if got := newServer(t, opts).ServedResources(); !strings.Contains(got, "; metrics.k8s.io/v1beta1 nodes, pods;") {
		t.Errorf("ServedResources() with a metrics source = %s, want metrics.k8s.io listed", got)
	}
}
