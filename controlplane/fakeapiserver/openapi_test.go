package fakeapiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi3"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func httpGet(t *testing.T, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestOpenAPIV2 checks the content negotiation of /openapi/v2 as kube-openapi's handler does it:
// JSON, protobuf under both media types (kubectl asks for the deprecated one), 406 otherwise, and
// a strong ETag that If-None-Match turns into 304.
func TestOpenAPIV2(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	url := f.ts.URL + "/openapi/v2"
	const protoType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	tests := []struct {
		accept, wantType string
		wantCode         int
	}{
		{"", "application/json", 200},
		{"application/json", "application/json", 200},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", protoType, 200},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json", protoType, 200},
		{"application/json;q=0.5, " + protoType, protoType, 200},
		{"text/html", "", http.StatusNotAcceptable},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			resp, body := httpGet(t, url, map[string]string{"Accept": tt.accept})
			if resp.StatusCode != tt.wantCode || resp.Header.Get("Content-Type") != tt.wantType {
				t.Fatalf("GET /openapi/v2 Accept %q = %d %q, want %d %q", tt.accept, resp.StatusCode, resp.Header.Get("Content-Type"), tt.wantCode, tt.wantType)
			}
			if tt.wantCode != 200 {
				return
			}
			var paths int
			if tt.wantType == protoType {
				var doc openapiv2.Document
				if err := proto.Unmarshal(body, &doc); err != nil {
					t.Fatalf("decode protobuf document: %v", err)
				}
				paths = len(doc.GetPaths().GetPath())
			} else {
				var doc struct{ Paths map[string]any }
				if err := json.Unmarshal(body, &doc); err != nil {
					t.Fatalf("decode JSON document: %v", err)
				}
				paths = len(doc.Paths)
			}
			if paths == 0 {
				t.Errorf("the document has no paths")
			}
			etag := resp.Header.Get("Etag")
			again, _ := httpGet(t, url, map[string]string{"Accept": tt.accept, "If-None-Match": etag})
			if etag == "" || again.StatusCode != http.StatusNotModified {
				t.Errorf("GET with If-None-Match %q = %d, want 304", etag, again.StatusCode)
			}
		})
	}
}

// TestOpenAPIV3 reads the v3 documents with client-go's openapi3 root, as kubectl explain does,
// and checks the Pod schema: generated from the k8s.io/api types with their doc comments and the
// extensions server-side apply and kubectl rely on.
func TestOpenAPIV3(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	root := openapi3.NewRoot(f.client.Discovery().OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	want := map[schema.GroupVersion]bool{{Version: "v1"}: true, {Group: "coordination.k8s.io", Version: "v1"}: true, {Group: "storage.k8s.io", Version: "v1"}: true}
	for _, gv := range gvs {
		delete(want, gv)
	}
	if len(want) > 0 {
		t.Errorf("GroupVersions() = %v, missing %v", gvs, want)
	}
	doc, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	pod := doc.Components.Schemas["io.k8s.api.core.v1.Pod"]
	if pod == nil {
		t.Fatal("no io.k8s.api.core.v1.Pod schema")
	}
	gvk, _ := json.Marshal(pod.Extensions["x-kubernetes-group-version-kind"])
	if string(gvk) != `[{"group":"","kind":"Pod","version":"v1"}]` {
		t.Errorf("Pod x-kubernetes-group-version-kind = %s", gvk)
	}
	spec := doc.Components.Schemas["io.k8s.api.core.v1.PodSpec"]
	containers := spec.Properties["containers"]
	if containers.Extensions["x-kubernetes-patch-merge-key"] != "name" || containers.Extensions["x-kubernetes-list-type"] != "map" {
		t.Errorf("PodSpec.containers extensions = %v, want patch merge key name and list type map", containers.Extensions)
	}
	probe := doc.Components.Schemas["io.k8s.api.core.v1.Container"].Properties["livenessProbe"]
	if !strings.Contains(probe.Description, "Periodic probe of container liveness") {
		t.Errorf("Container.livenessProbe description = %q, want the field's doc comment", probe.Description)
	}
	patch := doc.Paths.Paths["/api/v1/namespaces/{namespace}/pods/{name}"].Patch
	if patch.OperationId != "patchCoreV1NamespacedPod" || patch.Extensions["x-kubernetes-action"] != "patch" {
		t.Errorf("pod PATCH operation = %q %v", patch.OperationId, patch.Extensions)
	}
	var hasFieldValidation bool
	for _, p := range patch.Parameters {
		hasFieldValidation = hasFieldValidation || p.Name == "fieldValidation"
	}
	if !hasFieldValidation {
		t.Errorf("pod PATCH has no fieldValidation parameter; kubectl would validate client-side")
	}
	if _, ok := doc.Paths.Paths["/api/v1/namespaces/{namespace}/pods"]; !ok {
		t.Errorf("no pod collection path")
	}
}

// TestOpenAPIV3Negotiation checks the index's hashed links, the redirect of a stale hash and the
// protobuf encoding.
func TestOpenAPIV3Negotiation(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	_, body := httpGet(t, f.ts.URL+"/openapi/v3", nil)
	var index struct {
		Paths map[string]struct{ ServerRelativeURL string }
	}
	if err := json.Unmarshal(body, &index); err != nil {
		t.Fatal(err)
	}
	link := index.Paths["api/v1"].ServerRelativeURL
	if !strings.HasPrefix(link, "/openapi/v3/api/v1?hash=") {
		t.Fatalf("api/v1 link = %q", link)
	}
	resp, pb := httpGet(t, f.ts.URL+link, map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"})
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "public, immutable" {
		t.Fatalf("GET %s = %d, Cache-Control %q", link, resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	var doc openapiv3.Document
	if err := proto.Unmarshal(pb, &doc); err != nil || len(doc.GetPaths().GetPath()) == 0 {
		t.Errorf("protobuf v3 document: %v, %d paths", err, len(doc.GetPaths().GetPath()))
	}
	resp, _ = httpGet(t, f.ts.URL+"/openapi/v3/api/v1?hash=stale", nil)
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != link {
		t.Errorf("GET with a stale hash = %d to %q, want 301 to %q", resp.StatusCode, resp.Header.Get("Location"), link)
	}
	resp, _ = httpGet(t, f.ts.URL+"/openapi/v3/apis/apps/v1", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET of an unserved group version = %d, want 404", resp.StatusCode)
	}
}

func TestKubectlExplain(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	out := k.run(t, "", "explain", "pod.spec.containers.livenessProbe")
	for _, want := range []string{"KIND:       Pod", "VERSION:    v1", "FIELD: livenessProbe <Probe>", "Periodic probe of container liveness.", "httpGet\t<HTTPGetAction>"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain pod.spec.containers.livenessProbe lacks %q:\n%s", want, out)
		}
	}
	out = k.run(t, "", "explain", "nodes.status.conditions")
	if !strings.Contains(out, "FIELD: conditions <[]NodeCondition>") {
		t.Errorf("kubectl explain nodes.status.conditions:\n%s", out)
	}
}

// TestKubectlApplyMixed applies a file with a Pod and a kind the server does not serve: as
// against a real server, the pod is created and the rest is reported.
func TestKubectlApplyMixed(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: mixed
spec:
  containers:
  - name: c
    image: busybox:1.36
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`
	cmd := k.command(context.Background(), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		t.Errorf("kubectl apply of a mixed file succeeded, want an error for the Deployment")
	}
	if !strings.Contains(stdout.String(), "pod/mixed created") {
		t.Errorf("kubectl apply stdout = %q, want pod/mixed created", stdout.String())
	}
	if want := `no matches for kind "Deployment" in version "apps/v1"`; !strings.Contains(stderr.String(), want) {
		t.Errorf("kubectl apply stderr = %q, want %q", stderr.String(), want)
	}
	if _, err := f.client.CoreV1().Pods("default").Get(context.Background(), "mixed", metav1.GetOptions{}); err != nil {
		t.Errorf("the pod was not created: %v", err)
	}
}

// TestKubectlApplyUnknownField: kubectl leaves field validation to a server whose OpenAPI
// document offers fieldValidation, and the server's strict decoding refuses the unknown field
// with kube-apiserver's text, for a create and for a client-side apply patch alike.
func TestKubectlApplyUnknownField(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	bad := `apiVersion: v1
kind: Pod
metadata:
  name: strict
spec:
  bogus: 1
  containers:
  - name: c
    image: busybox:1.36
`
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"create", []string{"apply", "-f", "-"},
			`Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.bogus"`},
		{"server-side", []string{"apply", "--server-side", "-f", "-"},
			`.spec.bogus: field not declared in schema`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := k.command(context.Background(), tt.args...)
			cmd.Stdin = strings.NewReader(bad)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tt.want) {
				t.Errorf("kubectl %s = %v\n%s\nwant %q", strings.Join(tt.args, " "), err, out, tt.want)
			}
		})
	}
	if _, err := f.client.CoreV1().Pods("default").Get(context.Background(), "strict", metav1.GetOptions{}); err == nil {
		t.Errorf("a pod with an unknown field was created")
	}
}

// TestKubectlClientSideValidation: kubectl validates a List itself, against the /openapi/v2
// document it downloads as protobuf, since the server cannot validate a List's items for it.
func TestKubectlClientSideValidation(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: listed}
  spec:
    bogus: 1
    containers: [{name: c, image: busybox:1.36}]
`
	cmd := k.command(context.Background(), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(list)
	out, err := cmd.CombinedOutput()
	want := `error validating data: ValidationError(Pod.spec): unknown field "bogus" in io.k8s.api.core.v1.PodSpec`
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("kubectl apply of a List with an unknown field = %v\n%s\nwant %q", err, out, want)
	}
	good := strings.Replace(list, "    bogus: 1\n", "", 1)
	if out := k.run(t, good, "apply", "-f", "-"); !strings.Contains(out, "pod/listed created") {
		t.Errorf("kubectl apply of a valid List = %q", out)
	}
}

// FuzzOpenAPIAccept sends arbitrary Accept headers to the OpenAPI documents: the answer is a
// document in a type the header allows, or 406.
func FuzzOpenAPIAccept(f *testing.F) {
	for _, a := range []string{"", "*/*", "application/json;q=0.1, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
		"application/*;q=0", ";;,", "application/json;q=abc", "text/plain, */*;q=0.5"} {
		f.Add("/openapi/v2", a)
		f.Add("/openapi/v3/api/v1", a)
	}
	h := newServer(f, testOptions()).Handler()
	f.Fuzz(func(t *testing.T, path, accept string) {
		if path != "/openapi/v2" {
			path = "/openapi/v3/api/v1"
		}
		w := do(h, "GET", path, "", "", "Accept", accept)
		switch ct := w.Header().Get("Content-Type"); {
		case w.Code == http.StatusNotAcceptable:
		case w.Code != http.StatusOK || w.Body.Len() == 0:
			t.Fatalf("GET %s Accept %q = %d with %d bytes", path, accept, w.Code, w.Body.Len())
		case ct == "application/json" && !json.Valid(w.Body.Bytes()):
			t.Fatalf("GET %s Accept %q = invalid JSON", path, accept)
		case ct != "application/json" && !strings.HasSuffix(ct, "+protobuf"):
			t.Fatalf("GET %s Accept %q = Content-Type %q", path, accept, ct)
		}
	})
}
