package fakeapiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObjectMetadataIsValidated creates and updates objects of every kind with metadata
// kube-apiserver refuses (422 Invalid, whatever the kind): an annotation value that takes the
// annotations past 262,144 bytes, an annotation key and a label key that are not qualified names,
// a label value that is not one. Metadata just within the bounds is accepted.
func TestObjectMetadataIsValidated(t *testing.T) {
	kinds := []struct {
		kind, collection, body string
	}{
		{"Pod", "/api/v1/namespaces/default/pods", `"spec":{"containers":[{"name":"c","image":"busybox"}]}`},
		{"Node", "/api/v1/nodes", `"spec":{}`},
		{"Event", "/api/v1/namespaces/default/events", `"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"R","message":"m"`},
		{"Lease", "/apis/coordination.k8s.io/v1/namespaces/default/leases", `"spec":{}`},
		{"Namespace", "/api/v1/namespaces", `"spec":{}`},
		{"CSINode", "/apis/storage.k8s.io/v1/csinodes", `"spec":{"drivers":[]}`},
	}
	limit := 256 * 1024 // apimachinery's TotalAnnotationSizeLimitB
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		labels      map[string]string
		wantField   string // "" when the object is valid
	}{
		{name: "within bounds", annotations: map[string]string{"k": strings.Repeat("v", limit-1)}, labels: map[string]string{"example.com/app": "web"}},
		{name: "annotations too large", annotations: map[string]string{"k": strings.Repeat("v", limit)}, wantField: "metadata.annotations"},
		{name: "a megabyte annotation", annotations: map[string]string{"k": strings.Repeat("v", 1<<20)}, wantField: "metadata.annotations"},
		{name: "annotation key not a qualified name", annotations: map[string]string{"a b/c/d": "v"}, wantField: "metadata.annotations"},
		{name: "label key not a qualified name", labels: map[string]string{"a b/c/d": "v"}, wantField: "metadata.labels"},
		{name: "label value not a label value", labels: map[string]string{"app": "b c"}, wantField: "metadata.labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, testOptions())
			h := srv.Handler()
			for i, k := range kinds {
				name := fmt.Sprintf("obj-%d", i)
				meta, err := json.Marshal(metav1.ObjectMeta{Name: name, Annotations: tc.annotations, Labels: tc.labels})
				if err != nil {
					t.Fatal(err)
				}
				body := fmt.Sprintf(`{"metadata":%s,%s}`, meta, k.body)
				check := func(verb string, code int, got []byte) {
					switch {
					case tc.wantField == "" && code >= 300:
						t.Errorf("%s %s = %d %.300s, want success", verb, k.kind, code, got)
					case tc.wantField != "" && (code != http.StatusUnprocessableEntity || !strings.Contains(string(got), `"field":"`+tc.wantField+`"`)):
						t.Errorf("%s %s = %d %.300s, want 422 with a cause in %s", verb, k.kind, code, got, tc.wantField)
					}
				}
				w := do(h, "POST", k.collection, "application/json", body)
				check("POST", w.Code, w.Body.Bytes())
				// The same metadata through an update of a valid object, as stored.
				plain := fmt.Sprintf(`{"metadata":{"name":"%s-u"},%s}`, name, k.body)
				w = do(h, "POST", k.collection, "application/json", plain)
				if w.Code != http.StatusCreated {
					t.Fatalf("POST %s = %d %s", k.kind, w.Code, w.Body)
				}
				var obj map[string]any
				if err := json.Unmarshal(w.Body.Bytes(), &obj); err != nil {
					t.Fatal(err)
				}
				m := obj["metadata"].(map[string]any)
				m["annotations"], m["labels"] = tc.annotations, tc.labels
				updated, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				w = do(h, "PUT", k.collection+"/"+name+"-u", "application/json", string(updated))
				check("PUT", w.Code, w.Body.Bytes())
			}
		})
	}
}
