package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// internWrites writes pod name through the HTTP handler's create, update, patch, status patch
// and status update, as a ReplicaSet's controller, kubectl and a kubelet would; after each write
// it calls after with the entry then stored.
func internWrites(t *testing.T, s *Server, name string, after func(step string, e *entry)) {
	t.Helper()
	h := s.Handler()
	send := func(method, path, contentType, body string) []byte {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 300 {
			t.Fatalf("%s %s = %d %s", method, path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	stored := func(step string) {
		t.Helper()
		var e *entry
		_ = s.store.locked(func() error {
			e, _ = s.store.get(podsTarget, "default", name)
			return nil
		})
		if e == nil {
			t.Fatalf("%s: pod %s not stored", step, name)
		}
		after(step, e)
	}
	pods := "/api/v1/namespaces/default/pods"
	pod := pods + "/" + name
	// No token volume: its name is each pod's own, and so would be the creator's managed fields.
	send("POST", pods+"?fieldManager=kube-controller-manager", "application/json",
		`{"metadata":{"name":"`+name+`","labels":{"app":"web"}},"spec":{"nodeName":"n1","automountServiceAccountToken":false,"containers":[{"name":"c","image":"nginx:1.27"}]}}`)
	stored("create")
	// Updates as clients make them: the object as read, changed.
	put := func(path, manager string, change func(*corev1.Pod)) {
		t.Helper()
		var cur corev1.Pod
		if err := json.Unmarshal(send("GET", pod, "", ""), &cur); err != nil {
			t.Fatal(err)
		}
		change(&cur)
		body, err := json.Marshal(&cur)
		if err != nil {
			t.Fatal(err)
		}
		send("PUT", path+"?fieldManager="+manager, "application/json", string(body))
	}
	put(pod, "kube-controller-manager", func(p *corev1.Pod) { p.Labels["tier"] = "front" })
	stored("update")
	send("PATCH", pod+"?fieldManager=kubectl", "application/strategic-merge-patch+json", `{"metadata":{"annotations":{"note":"x"}}}`)
	stored("patch")
	send("PATCH", pod+"/status?fieldManager=kubelet", "application/strategic-merge-patch+json",
		`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	stored("status patch")
	put(pod+"/status", "kubelet", func(p *corev1.Pod) { p.Status.HostIP = "10.0.0.1" })
	stored("status update")
	// A status write that changes only values: the field sets stay those of the version before.
	send("PATCH", pod+"/status?fieldManager=kubelet", "application/strategic-merge-patch+json", `{"status":{"hostIP":"10.0.0.2"}}`)
	stored("status value patch")
}

func newInternServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStoreInternsPods: pods written alike through create, update, patch and the status
// subresource are stored sharing their managed fields entries' encodings and the strings the
// store interns, not with a copy each. The first pod to carry an encoding keeps its entries'
// own strings (giving it the table's would cost a copy of its entries at every write that makes
// an encoding anew, each status write's); the pods after it share theirs.
func TestStoreInternsPods(t *testing.T) {
	s := newInternServer(t)
	got := map[string]map[string]*corev1.Pod{}
	names := []string{"web-1", "web-2", "web-3"}
	for _, name := range names {
		got[name] = map[string]*corev1.Pod{}
		internWrites(t, s, name, func(step string, e *entry) { got[name][step] = e.obj.(*corev1.Pod) })
	}
	for _, step := range []string{"create", "update", "patch", "status patch", "status update", "status value patch"} {
		first, a, b := got["web-1"][step], got["web-2"][step], got["web-3"][step]
		for i := range first.ManagedFields {
			if i < len(a.ManagedFields) && &first.ManagedFields[i].FieldsV1.Raw[0] != &a.ManagedFields[i].FieldsV1.Raw[0] {
				t.Errorf("%s: entry %d (%s): the first pod keeps a copy of its encoding, want it shared", step, i, first.ManagedFields[i].Manager)
			}
		}
		if len(a.ManagedFields) != len(b.ManagedFields) || len(a.ManagedFields) == 0 {
			t.Fatalf("%s: managed fields entries %d and %d, want as many, and some", step, len(a.ManagedFields), len(b.ManagedFields))
		}
		for i := range a.ManagedFields {
			fa, fb := a.ManagedFields[i], b.ManagedFields[i]
			if !bytes.Equal(fa.FieldsV1.Raw, fb.FieldsV1.Raw) {
				t.Fatalf("%s: entry %d (%s): the two pods' encodings differ: %s and %s", step, i, fa.Manager, fa.FieldsV1.Raw, fb.FieldsV1.Raw)
			}
			if &fa.FieldsV1.Raw[0] != &fb.FieldsV1.Raw[0] {
				t.Errorf("%s: entry %d (%s): a copy of its encoding each, want one shared", step, i, fa.Manager)
			}
			if !sameStringData(fa.Manager, fb.Manager) {
				t.Errorf("%s: entry %d: a copy each of the manager's name %q, want one shared", step, i, fa.Manager)
			}
		}
		for _, f := range []struct{ field, a, b string }{
			{"metadata.namespace", first.Namespace, b.Namespace},
			{"spec.nodeName", first.Spec.NodeName, b.Spec.NodeName},
			{"spec.restartPolicy", string(first.Spec.RestartPolicy), string(b.Spec.RestartPolicy)},
			{"status.phase", string(first.Status.Phase), string(b.Status.Phase)},
		} {
			if !sameStringData(f.a, f.b) {
				t.Errorf("%s: %s: a copy each of %q, want one shared", step, f.field, f.a)
			}
		}
	}
}

// TestStoreInternWritesNoStoredVersion: every version of a pod the store kept (which a watcher,
// or a list, may hold on to) keeps its values and its encoding through the writes that follow:
// interning the new versions writes into none of the old ones.
func TestStoreInternWritesNoStoredVersion(t *testing.T) {
	s := newInternServer(t)
	// A pod of the same shape first, so that the writes below find their encodings interned.
	internWrites(t, s, "web-0", func(string, *entry) {})
	type held struct {
		step string
		e    *entry
		obj  *corev1.Pod
		raw  []byte
		// Where each managed fields entry's encoding lives: an equal value written over it
		// would not show in a comparison of values, but is a write a reader may race with.
		fields []*metav1.FieldsV1
	}
	var versions []held
	internWrites(t, s, "web-1", func(step string, e *entry) {
		pod := e.obj.(*corev1.Pod)
		h := held{step: step, e: e, obj: pod.DeepCopy(), raw: bytes.Clone(e.raw)}
		for _, f := range pod.ManagedFields {
			h.fields = append(h.fields, f.FieldsV1)
		}
		versions = append(versions, h)
	})
	if len(versions) != 6 {
		t.Fatalf("%d versions held, want 6", len(versions))
	}
	for i, v := range versions {
		if i > 0 && v.e == versions[i-1].e {
			t.Fatalf("%s stored no new version", v.step)
		}
		if diff := cmp.Diff(v.obj, v.e.obj.(*corev1.Pod)); diff != "" {
			t.Errorf("the version stored by %s changed after it (-stored +now):\n%s", v.step, diff)
		}
		for j, f := range v.e.obj.(*corev1.Pod).ManagedFields {
			if j < len(v.fields) && f.FieldsV1 != v.fields[j] {
				t.Errorf("the version stored by %s: managed fields entry %d (%s) was written after it", v.step, j, f.Manager)
			}
		}
		if !bytes.Equal(v.raw, v.e.raw) {
			t.Errorf("the encoding of the version stored by %s changed after it", v.step)
		}
	}
}

// sameStringData reports whether a and b are equal and the same bytes in memory.
func sameStringData(a, b string) bool {
	return a == b && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

// TestStatusWriteSharesStoredSpec: a status write's new version shares the stored version's spec
// (its containers, volumes, tolerations) instead of copying it, as kube-apiserver's status
// strategies assign it, and the stored version keeps its values (TestStoreInternWritesNoStoredVersion
// guards every write's).
func TestStatusWriteSharesStoredSpec(t *testing.T) {
	s := newInternServer(t)
	var versions []*corev1.Pod
	internWrites(t, s, "web-1", func(step string, e *entry) { versions = append(versions, e.obj.(*corev1.Pod)) })
	// internWrites' steps: create, update, patch, status patch, status update, status value patch.
	for i, step := range []string{"status patch", "status update", "status value patch"} {
		before, after := versions[2+i], versions[3+i]
		if &after.Spec.Containers[0] != &before.Spec.Containers[0] {
			t.Errorf("%s: the new version's spec is a copy, want the stored version's shared", step)
		}
	}
}

// TestStoreInternsOtherKindsFields: two nodes' leases, created and renewed through the handler as
// their kubelets do, are stored sharing their managed fields' equal encodings; and no stored
// encoding of a pod's or a lease's managed fields keeps the spare room of the buffer it was
// encoded in (an array at most a sixth longer than the encoding, the allocator's rounding).
func TestStoreInternsOtherKindsFields(t *testing.T) {
	s := newInternServer(t)
	h := s.Handler()
	send := func(method, path, body string) {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 300 {
			t.Fatalf("%s %s = %d %s", method, path, w.Code, w.Body)
		}
	}
	leases := "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
	lease := func(node, renew string) string {
		return `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"` + node + `"},"spec":{"holderIdentity":"` + node +
			`","leaseDurationSeconds":40,"renewTime":"` + renew + `"}}`
	}
	for _, node := range []string{"n1", "n2"} {
		send("POST", leases+"?fieldManager=kubelet", lease(node, "2026-11-28T09:00:00.000000Z"))
		send("PUT", leases+"/"+node+"?fieldManager=kubelet", lease(node, "2026-11-28T09:00:10.000000Z"))
	}
	internWrites(t, s, "web-1", func(step string, e *entry) {
		for _, f := range e.obj.(*corev1.Pod).ManagedFields {
			if raw := f.FieldsV1.Raw; cap(raw)-len(raw) > 32 && cap(raw)-len(raw) > len(raw)/6 {
				t.Errorf("%s: the %s entry's encoding of %d bytes is stored in an array of %d", step, f.Manager, len(raw), cap(raw))
			}
		}
	})
	var got []*coordinationv1.Lease
	_ = s.store.locked(func() error {
		for _, node := range []string{"n1", "n2"} {
			e, ok := s.store.get(leasesTarget, "kube-node-lease", node)
			if !ok {
				t.Fatalf("lease %s not stored", node)
			}
			got = append(got, e.obj.(*coordinationv1.Lease))
		}
		return nil
	})
	a, b := got[0].ManagedFields, got[1].ManagedFields
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("managed fields entries %d and %d, want one each", len(a), len(b))
	}
	if &a[0].FieldsV1.Raw[0] != &b[0].FieldsV1.Raw[0] {
		t.Errorf("two leases' equal encodings %s: a copy each, want one shared", a[0].FieldsV1.Raw)
	}
	if raw := a[0].FieldsV1.Raw; cap(raw)-len(raw) > 32 && cap(raw)-len(raw) > len(raw)/6 {
		t.Errorf("the lease's encoding of %d bytes is stored in an array of %d", len(raw), cap(raw))
	}
	if !sameStringData(a[0].Manager, b[0].Manager) {
		t.Errorf("a copy each of the manager's name %q, want one shared", a[0].Manager)
	}
}
