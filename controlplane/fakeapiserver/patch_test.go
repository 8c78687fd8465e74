package fakeapiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// nestedCopyPatch is the attack of issue 15: n copy operations, each of which copies the
// annotations into themselves, so that the object doubles at every step. 30 of them are 2.2 KB
// and would grow a pod past 100 GB.
func nestedCopyPatch(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/k%02d"}`, i)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

func manyOpsPatch(n int) string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = `{"op":"test","path":"/metadata/name","value":"p"}`
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// TestJSONPatchLimits checks the bounds kube-apiserver puts on a JSON patch, with its status
// codes and messages.
func TestJSONPatchLimits(t *testing.T) {
	srv := newServer(t, testOptions())
	h := srv.Handler()
	pod := strings.Replace(podJSON, `"name":"p"`, `"name":"p","annotations":{"a":"`+strings.Repeat("x", 100)+`"}`, 1)
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", pod); w.Code != http.StatusCreated {
		t.Fatalf("create p = %d %s", w.Code, w.Body.String())
	}
	rv := srv.ResourceVersion()
	const invalid = "the server rejected our request due to an error in our request"
	tests := []struct {
		name, body string
		want       metav1.Status
	}{
		{"nestedCopy", nestedCopyPatch(30), metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid, Message: invalid}},
		{"tooManyOperations", manyOpsPatch(fakeapiserver.MaxJSONPatchOperations + 1), metav1.Status{
			Code: 413, Reason: metav1.StatusReasonRequestEntityTooLarge,
			Message: "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
		}},
		{"missingPath", `[{"op":"remove","path":"/metadata/labels/none"}]`, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid, Message: invalid}},
		{"failedTest", `[{"op":"test","path":"/metadata/name","value":"q"}]`, metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid, Message: invalid}},
		{"bodyTooLarge", `[{"op":"add","path":"/metadata/labels/x","value":"` + strings.Repeat("x", fakeapiserver.DefaultMaxBodyBytes) + `"}]`, metav1.Status{
			Code: 413, Reason: metav1.StatusReasonRequestEntityTooLarge, Message: "Request entity too large: limit is 3145728",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, "PATCH", "/api/v1/namespaces/default/pods/p", "application/json-patch+json", tc.body)
			st := decodeStatus(t, w)
			got := metav1.Status{Code: int32(w.Code), Reason: st.Reason, Message: st.Message}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PATCH %s (-want +got):\n%s", tc.name, diff)
			}
		})
	}
	if got := srv.ResourceVersion(); got != rv {
		t.Errorf("ResourceVersion() after refused patches = %d, want %d (nothing written)", got, rv)
	}
	// At the bound, a patch is applied.
	w := do(h, "PATCH", "/api/v1/namespaces/default/pods/p", "application/json-patch+json", manyOpsPatch(fakeapiserver.MaxJSONPatchOperations))
	if w.Code != http.StatusOK {
		t.Errorf("PATCH of %d operations = %d %s, want 200", fakeapiserver.MaxJSONPatchOperations, w.Code, w.Body.String())
	}
}

// TestConcurrentPatchesKeepEveryChange sends patches of one pod from many goroutines at once. Each
// is applied outside the store lock and committed only to the version it was applied to, so none
// may undo another.
func TestConcurrentPatchesKeepEveryChange(t *testing.T) {
	srv := newServer(t, testOptions())
	h := srv.Handler()
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); w.Code != http.StatusCreated {
		t.Fatalf("create p = %d %s", w.Code, w.Body.String())
	}
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"metadata":{"annotations":{"k%02d":"v"}}}`, i)
			if w := do(h, "PATCH", "/api/v1/namespaces/default/pods/p", "application/merge-patch+json", body); w.Code != http.StatusOK {
				t.Errorf("PATCH k%02d = %d %s", i, w.Code, w.Body.String())
			}
		})
	}
	wg.Wait()
	var pod corev1.Pod
	if err := json.Unmarshal(do(h, "GET", "/api/v1/namespaces/default/pods/p", "", "").Body.Bytes(), &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Annotations) != n {
		t.Errorf("annotations after %d concurrent patches = %v, want all %d", n, pod.Annotations, n)
	}
}
