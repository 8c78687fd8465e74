package fakeapiserver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The stored managed fields are in the order of the times stored: the library sorts by the wall
// clock's times, which the server then replaces with its own, so the server sorts again. Here the
// server's clock is behind the wall clock: the second writer's entry would otherwise stay last
// although its stored time equals the first's and its name sorts first.
func TestManagedFieldsFollowTheStoredTimes(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Direct("zzz/v1").CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "1"}}}); err != nil {
		t.Fatal(err)
	}
	d := s.Direct("aaa/v1")
	tg := d.target(nodesTarget, "", "n", "")
	e, err := d.get(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	n := e.obj.DeepCopyObject().(*corev1.Node)
	n.Labels["b"] = "1"
	if _, err := d.update(ctx, tg, n); err != nil {
		t.Fatal(err)
	}
	if e, err = d.get(ctx, tg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range mustMeta(e.obj).GetManagedFields() {
		got = append(got, m.Manager+" "+m.Time.UTC().Format(time.RFC3339))
	}
	want := []string{"aaa 2026-01-01T00:00:00Z", "zzz 2026-01-01T00:00:00Z"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("managed fields (-want +got):\n%s", diff)
	}
}

// An entry a client sends without a time, and that the write does not touch, stays without one:
// the library stamps only the entries it changes.
func TestManagedFieldsSentWithoutATime(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	s, err := New(Options{Clock: clocktesting.NewFakeClock(at.Add(10 * time.Second)), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	entry := func(manager string, tm *metav1.Time, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}, Time: tm}
	}
	lease := func(mf []metav1.ManagedFieldsEntry, renew time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "n", UID: "u", ResourceVersion: "5",
				Annotations: map[string]string{"note": "x"}, ManagedFields: mf, CreationTimestamp: metav1.Time{Time: at}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("n"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &metav1.MicroTime{Time: renew}},
		}
	}
	stored := metav1.NewTime(at)
	live := lease([]metav1.ManagedFieldsEntry{entry("kubelet", &stored, `{"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`)}, at)
	sent := []metav1.ManagedFieldsEntry{live.ManagedFields[0], entry("other", nil, `{"f:metadata":{"f:annotations":{".":{},"f:note":{}}}}`)}
	for _, shortcuts := range []bool{false, true} {
		fieldmanager.Shortcuts.Set(shortcuts)
		out := s.trackFields(target{res: leasesTarget, namespace: "kube-node-lease", name: "n", manager: "kubelet"}, live.DeepCopy(), nil, lease(sent, at.Add(time.Second)))
		for _, e := range mustMeta(out).GetManagedFields() {
			if e.Manager == "other" && e.Time != nil {
				t.Errorf("shortcuts %v: other's entry, sent without a time and untouched, got time %v", shortcuts, e.Time)
			}
			if e.Manager == "kubelet" && (e.Time == nil || !e.Time.Equal(&metav1.Time{Time: at.Add(10 * time.Second)})) {
				t.Errorf("shortcuts %v: the writer's entry has time %v, want the server's %v", shortcuts, e.Time, at.Add(10*time.Second))
			}
		}
	}
	fieldmanager.Shortcuts.Set(true)
}

// Two different invalid UTF-8 strings marshal to the same JSON (each sequence as the escape of
// U+FFFD); a protobuf body is not checked for UTF-8, so an update may change one into the other.
// The library sees the change and moves the field to the writer; so must the stored result with
// the shortcuts on.
func TestInvalidUTF8ChangeIsAChange(t *testing.T) {
	ctx := context.Background()
	var raws [2]string
	for i, shortcuts := range []bool{false, true} {
		fieldmanager.Shortcuts.Set(shortcuts)
		clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		s, err := New(Options{Clock: clk, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Direct("kubelet/v1").CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "n"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("n"), RenewTime: &metav1.MicroTime{Time: clk.Now()}}}); err != nil {
			t.Fatal(err)
		}
		h := s.Handler()
		put := func(manager string, mutate func(*coordinationv1.Lease)) {
			clk.Step(2 * time.Second)
			var e *entry
			_ = s.store.locked(func() error { e, _ = s.store.get(leasesTarget, "kube-node-lease", "n"); return nil })
			l := e.obj.DeepCopyObject().(*coordinationv1.Lease)
			mutate(l)
			l.TypeMeta = metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
			var buf bytes.Buffer
			if err := protoDecoder.Encode(l, &buf); err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n?fieldManager="+manager, &buf)
			r.Header.Set("Content-Type", protobufMediaType)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Fatalf("PUT as %s: %d %s", manager, w.Code, w.Body)
			}
		}
		put("other", func(l *coordinationv1.Lease) { l.Annotations = map[string]string{"note": "a\xff"} })
		put("kubelet", func(l *coordinationv1.Lease) {
			l.Annotations = map[string]string{"note": "a\xfe"}
			l.Spec.RenewTime = &metav1.MicroTime{Time: clk.Now()}
		})
		_ = s.store.locked(func() error {
			e, _ := s.store.get(leasesTarget, "kube-node-lease", "n")
			raws[i] = string(e.raw)
			return nil
		})
	}
	fieldmanager.Shortcuts.Set(true)
	if diff := cmp.Diff(raws[0], raws[1]); diff != "" {
		t.Errorf("stored lease (-library +shortcuts):\n%s", diff)
	}
}
