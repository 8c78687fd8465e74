package fakeapiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestManagedFieldsBounded writes objects whose managed fields kube-apiserver resets: invalid
// ones in a request are replaced by the stored ones, and an object that only its managed fields
// make too large for etcd (1.5 MiB) is stored without them, as kube-apiserver retries it. An
// object too large without them is refused with etcd's error.
func TestManagedFieldsBounded(t *testing.T) {
	h := newServer(t, testOptions()).Handler()
	create := func(name string, argBytes int) corev1.Pod {
		t.Helper()
		pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Args: []string{strings.Repeat("x", argBytes)}}}}}
		body, _ := json.Marshal(pod)
		w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", string(body))
		if w.Code != http.StatusCreated {
			t.Fatalf("create %s = %d %.300s", name, w.Code, w.Body)
		}
		var got corev1.Pod
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	put := func(pod corev1.Pod) (int, corev1.Pod, string) {
		t.Helper()
		body, _ := json.Marshal(pod)
		w := do(h, "PUT", "/api/v1/namespaces/default/pods/"+pod.Name, "application/json", string(body))
		var got corev1.Pod
		_ = json.Unmarshal(w.Body.Bytes(), &got)
		return w.Code, got, w.Body.String()
	}
	manyFields := func(n, fieldsEach int) []metav1.ManagedFieldsEntry {
		var out []metav1.ManagedFieldsEntry
		for i := range n {
			var b strings.Builder
			b.WriteString(`{"f:metadata":{"f:labels":{`)
			for j := range fieldsEach {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"f:label-%d-%d":{}`, i, j)
			}
			b.WriteString(`}}}`)
			out = append(out, metav1.ManagedFieldsEntry{Manager: fmt.Sprintf("applier-%d", i), Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(b.String())}})
		}
		return out
	}

	t.Run("invalid entries are reset", func(t *testing.T) {
		pod := create("invalid", 10)
		stored := pod.ManagedFields
		pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Bogus", APIVersion: "v1", FieldsType: "FieldsV1"}}
		pod.Labels = map[string]string{"a": "b"}
		code, got, body := put(pod)
		if code != http.StatusOK {
			t.Fatalf("PUT = %d %.300s", code, body)
		}
		for _, e := range got.ManagedFields {
			if e.Operation == "Bogus" {
				t.Errorf("managed fields = %+v, want the invalid entry reset to the stored ones %+v", got.ManagedFields, stored)
			}
		}
	})
	t.Run("too large with them, stored without", func(t *testing.T) {
		pod := create("big", 1200<<10)
		pod.ManagedFields = manyFields(80, 400) // about 640 KiB: too much beside 1.2 MiB
		code, got, body := put(pod)
		if code != http.StatusOK {
			t.Fatalf("PUT = %d %.300s, want 200 without the managed fields", code, body)
		}
		if len(got.ManagedFields) != 0 {
			t.Errorf("stored %d managed fields entries, want none: they made the object too large", len(got.ManagedFields))
		}
	})
	t.Run("too large without them", func(t *testing.T) {
		big := strings.Repeat("y", 1600<<10)
		w := do(h, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", "application/json",
			`{"metadata":{"name":"huge"},"spec":{"holderIdentity":"`+big+`"}}`)
		if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "etcdserver: request is too large") {
			t.Errorf("POST of a 1.6 MiB lease = %d %.300s, want 500 etcdserver: request is too large", w.Code, w.Body)
		}
		if w := do(h, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", "application/json", `{"metadata":{"name":"l"}}`); w.Code != http.StatusCreated {
			t.Fatalf("create lease = %d %s", w.Code, w.Body)
		}
		w = do(h, "PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/l", "application/json",
			`{"metadata":{"name":"l"},"spec":{"holderIdentity":"`+big+`"}}`)
		if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "etcdserver: request is too large") {
			t.Errorf("PUT of a 1.6 MiB lease = %d %.300s, want 500 etcdserver: request is too large", w.Code, w.Body)
		}
	})
}
