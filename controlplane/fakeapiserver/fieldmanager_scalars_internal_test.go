package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestScalarUpdatesMatchTheLibrary makes random sequences of writes of a lease, a node and a pod
// on two servers, one whose updates may take scalarUpdate and one that runs the library's field
// manager on every write, and wants every stored object, managed fields and their times and
// order included, to be the same byte for byte after every write. The writes come from several
// managers (so that fields change owners), change scalars, labels and annotations (new keys
// too), lists (container images, taints), clear the resource version or the managed fields the
// client sends, change a field the resource resets (a node's status through the main resource),
// and mix in status patches.
func TestScalarUpdatesMatchTheLibrary(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(true)
	ctx := context.Background()
	managers := []string{"kubelet", "kubelet", "kubelet", "controller", "kubectl"}
	taken := int64(0)
	seeds := differentialSeeds(40)
	for seed := int64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewSource(seed))
		type server struct {
			s   *Server
			clk *clocktesting.FakeClock
		}
		var servers [2]server // [0] the library's path, [1] with scalarUpdate
		for i := range servers {
			clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
			s, err := New(Options{Clock: clk, Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			servers[i] = server{s, clk}
		}
		keys := []struct {
			res      *resource
			ns, name string
		}{{leasesTarget, "kube-node-lease", "node-1"}, {nodesTarget, "", "node-1"}, {podsTarget, "default", "web"}}
		create := func(s *Server) error {
			d := s.Direct("kubelet/v1")
			if _, err := d.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40),
					RenewTime: &metav1.MicroTime{Time: s.now().Time}}}); err != nil {
				return err
			}
			if _, err := d.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}}); err != nil {
				return err
			}
			_, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}})
			return err
		}
		for i := range servers {
			if err := create(servers[i].s); err != nil {
				t.Fatal(err)
			}
		}
		for step := 0; step < 30; step++ {
			k := keys[rng.Intn(len(keys))]
			manager := managers[rng.Intn(len(managers))]
			change := rng.Intn(10)
			value := fmt.Sprint(rng.Intn(3))
			dropRV, dropManaged := rng.Intn(6) == 0, rng.Intn(3) == 0
			micros := time.Duration(rng.Intn(1000)) * time.Microsecond
			tick := time.Duration(500+rng.Intn(2)*700) * time.Millisecond
			name := fmt.Sprintf("seed %d step %d: %s %s change %d value %s dropRV %v dropManaged %v", seed, step, manager, k.res.name, change, value, dropRV, dropManaged)
			write := func(s *Server) error {
				d := s.Direct(manager + "/v1")
				tg := d.target(k.res, k.ns, k.name, "")
				if change == 9 {
					// A server-side apply of the fields' current values: the applier shares
					// them with their owners.
					e, err := d.get(ctx, tg)
					if err != nil {
						return err
					}
					cur, err := json.Marshal(e.obj)
					if err != nil {
						return err
					}
					var whole map[string]any
					if err := json.Unmarshal(cur, &whole); err != nil {
						return err
					}
					body, err := json.Marshal(map[string]any{"apiVersion": tg.res.gvk().GroupVersion().String(), "kind": tg.res.gvk().Kind,
						"metadata": map[string]any{"name": k.name, "namespace": k.ns, "labels": whole["metadata"].(map[string]any)["labels"]},
						"spec":     whole["spec"]})
					if err != nil {
						return err
					}
					r := httptest.NewRequest(http.MethodPatch, "/?fieldManager=applier", bytes.NewReader(body))
					r.Header.Set("Content-Type", string(types.ApplyPatchType))
					w := httptest.NewRecorder()
					if err := s.apply(w, r, tg); err != nil {
						return err
					}
					if w.Code >= 300 {
						return fmt.Errorf("apply: %d %s", w.Code, w.Body)
					}
					return nil
				}
				if change == 8 && k.res != leasesTarget {
					tg.subresource = "status"
					body := `{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:0` + value + `Z"}]}}`
					if k.res == podsTarget {
						body = `{"status":{"phase":"Running","podIP":"10.0.0.` + value + `"}}`
					}
					_, err := d.patch(ctx, tg, types.StrategicMergePatchType, []byte(body))
					return err
				}
				e, err := d.get(ctx, tg)
				if err != nil {
					return err
				}
				obj := e.obj.DeepCopyObject()
				m := mustMeta(obj)
				switch change {
				case 0, 1:
					m.SetLabels(with(m.GetLabels(), "tier", value))
				case 2:
					m.SetAnnotations(with(m.GetAnnotations(), "note-"+value, value))
				case 3:
					m.SetAnnotations(with(m.GetAnnotations(), "note", value))
				}
				switch o := obj.(type) {
				case *coordinationv1.Lease:
					switch change {
					case 4, 5, 6:
						o.Spec.RenewTime = &metav1.MicroTime{Time: s.now().Add(micros)}
					case 7:
						o.Spec.HolderIdentity = ptr.To("node-" + value)
					case 8:
						o.Spec.LeaseDurationSeconds = ptr.To[int32](int32(40 + len(value)))
					}
				case *corev1.Node:
					switch change {
					case 4:
						o.Spec.Unschedulable = value != "0"
					case 5:
						o.Spec.Taints = []corev1.Taint{{Key: "t", Value: value, Effect: corev1.TaintEffectNoSchedule}}
					case 6:
						o.Spec.ProviderID = "fake://" + value
					case 7:
						o.Status.Phase = corev1.NodePhase("P" + value)
					}
				case *corev1.Pod:
					switch change {
					case 4:
						o.Spec.ActiveDeadlineSeconds = ptr.To[int64](int64(60 + len(value)))
					case 5:
						o.Spec.Containers[0].Image = "nginx:1." + value
					case 6:
						o.Spec.Priority = nil
					case 7:
						o.Spec.TerminationGracePeriodSeconds = ptr.To[int64](int64(30 + len(value)))
					}
				}
				if dropRV {
					m.SetResourceVersion("")
				}
				if dropManaged {
					m.SetManagedFields(nil)
				}
				_, err = d.update(ctx, tg, obj)
				return err
			}
			var errs [2]error
			before := fieldmanager.ScalarUpdates.Load()
			for i, srv := range servers {
				fieldmanager.Shortcuts.Set(i == 1)
				errs[i] = write(srv.s)
				srv.clk.Step(tick)
			}
			fieldmanager.Shortcuts.Set(true)
			taken += fieldmanager.ScalarUpdates.Load() - before
			if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
				t.Errorf("%s: error = %v on the library's path, %v with scalarUpdate", name, errs[0], errs[1])
			}
			for _, key := range keys {
				var raw [2]string
				for i, srv := range servers {
					raw[i] = storedRaw(srv.s, key.res, key.ns, key.name)
				}
				if diff := cmp.Diff(raw[0], raw[1]); diff != "" {
					t.Fatalf("%s: stored %s (-library +scalarUpdate):\n%s", name, key.res.name, diff)
				}
			}
		}
	}
	t.Logf("scalarUpdate served %d of %d writes", taken, seeds*30)
	// The comparison means something only if scalarUpdate served many of the writes.
	if !raceEnabled && taken < 50 {
		t.Errorf("scalarUpdate served %d writes, want at least 50", taken)
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// TestScalarUpdateServesLeaseRenewal wants a node lease's renewal by its holder, as the kubelet
// writes it every ten seconds, to take scalarUpdate, its writer's entry to move to the server's
// time, and a renewal by another manager, a change of a list and a new label not to.
func TestScalarUpdateServesLeaseRenewal(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	d := s.Direct("kubelet/v1.35.4")
	lease, err := d.CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &metav1.MicroTime{Time: clk.Now()}}})
	if err != nil {
		t.Fatal(err)
	}
	stored := func() *entry {
		var e *entry
		_ = s.store.locked(func() error { e, _ = s.store.get(leasesTarget, "kube-node-lease", "node-1"); return nil })
		return e
	}
	live := func() runtime.Object { return stored().obj }
	for i := 0; i < 3; i++ {
		clk.Step(10 * time.Second)
		lease.Spec.RenewTime = &metav1.MicroTime{Time: clk.Now()}
		before := fieldmanager.ScalarUpdates.Load()
		if lease, err = d.UpdateLease(ctx, lease); err != nil {
			t.Fatal(err)
		}
		if got := fieldmanager.ScalarUpdates.Load() - before; got != 1 {
			t.Fatalf("renewal %d: scalarUpdate served %d writes, want 1", i, got)
		}
		mf := lease.ManagedFields
		if len(mf) != 1 || mf[0].Manager != "kubelet" || !mf[0].Time.Equal(&metav1.Time{Time: clk.Now().Truncate(time.Second)}) {
			t.Fatalf("renewal %d: managed fields = %+v, want kubelet's entry at %v", i, mf, clk.Now())
		}
	}
	refused := []struct {
		name    string
		manager string
		change  func(*coordinationv1.Lease)
	}{
		{"another manager", "controller", func(l *coordinationv1.Lease) { l.Spec.RenewTime = &metav1.MicroTime{Time: clk.Now().Add(time.Second)} }},
		{"a new label", "kubelet", func(l *coordinationv1.Lease) { l.Labels = map[string]string{"a": "b"} }},
		{"a list", "kubelet", func(l *coordinationv1.Lease) {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "u"}}
		}},
		{"nothing", "kubelet", func(*coordinationv1.Lease) {}},
	}
	for _, tc := range refused {
		// Without the stored encoding and with it (the one the store hands trackFields).
		for _, raw := range [][]byte{nil, stored().raw} {
			obj := live().DeepCopyObject().(*coordinationv1.Lease)
			tc.change(obj)
			if fieldProbe(t).ScalarUpdate(target{res: leasesTarget, namespace: "kube-node-lease", name: "node-1", manager: tc.manager}.write(), live(), raw, obj) {
				t.Errorf("%s, stored encoding %v: ScalarUpdate() = true, want false", tc.name, raw != nil)
			}
		}
	}
}

// TestScalarUpdateReadsTheStoredEncoding wants scalarUpdate to give the same answer, served or
// not and the same managed fields, whether it reads the live object's stored encoding or encodes
// the live object itself: for writes it serves (a renewal, one that sends the managed fields
// back, a change of an annotation's value the writer owns) and writes it refuses (another
// manager's, a new label, a list, nothing changed, a change of a field another manager owns),
// on a lease whose managed fields hold an entry of a manager whose name is not valid UTF-8
// (encoded as the escape of U+FFFD, which the comparison refuses in the objects' JSON but not in
// the managed fields it leaves out) and on one without; and a write that makes an annotation
// that is not valid UTF-8 valid, which encoding the live object refuses.
func TestScalarUpdateReadsTheStoredEncoding(t *testing.T) {
	at := time.Date(2026, time.January, 1, 0, 0, 10, 0, time.UTC)
	stamp := metav1.NewTime(at.Add(-10 * time.Second))
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1",
			Time: &stamp, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	kubelet := entry("kubelet", `{"f:metadata":{"f:annotations":{".":{},"f:note":{}}},"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`)
	other := func(name string) metav1.ManagedFieldsEntry {
		return entry(name, `{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`)
	}
	lease := func(entries ...metav1.ManagedFieldsEntry) *coordinationv1.Lease {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1", UID: "u", ResourceVersion: "7",
				Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}, ManagedFields: entries},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40),
				RenewTime: &metav1.MicroTime{Time: at.Add(-10 * time.Second)}},
		}
		l.GetObjectKind().SetGroupVersionKind(leasesTarget.gvk())
		return l
	}
	writes := []struct {
		name    string
		manager string
		serves  bool
		change  func(*coordinationv1.Lease)
	}{
		{"a renewal", "kubelet", true, func(l *coordinationv1.Lease) { l.ManagedFields = nil; l.Spec.RenewTime = &metav1.MicroTime{Time: at} }},
		{"a renewal that sends the managed fields back", "kubelet", true, func(l *coordinationv1.Lease) { l.Spec.RenewTime = &metav1.MicroTime{Time: at} }},
		{"an annotation's value", "kubelet", true, func(l *coordinationv1.Lease) { l.ManagedFields = nil; l.Annotations = map[string]string{"note": "y"} }},
		{"another manager's renewal", "controller", false, func(l *coordinationv1.Lease) { l.ManagedFields = nil; l.Spec.RenewTime = &metav1.MicroTime{Time: at} }},
		{"a new label", "kubelet", false, func(l *coordinationv1.Lease) { l.ManagedFields = nil; l.Labels = with(l.Labels, "b", "c") }},
		{"a label another manager owns", "kubelet", false, func(l *coordinationv1.Lease) { l.ManagedFields = nil; l.Labels = with(l.Labels, "team", "b") }},
		{"a list", "kubelet", false, func(l *coordinationv1.Lease) {
			l.ManagedFields = nil
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "u"}}
		}},
		{"nothing", "kubelet", false, func(l *coordinationv1.Lease) { l.ManagedFields = nil }},
	}
	invalid := func(l *coordinationv1.Lease) { l.ManagedFields = nil; l.Annotations = map[string]string{"note": "x"} }
	writes = append(writes, struct {
		name    string
		manager string
		serves  bool
		change  func(*coordinationv1.Lease)
	}{"an annotation made valid UTF-8", "kubelet", false, invalid})
	for _, owners := range [][]metav1.ManagedFieldsEntry{{kubelet}, {kubelet, other("team")}, {kubelet, other("team\xff")}} {
		live := lease(owners...)
		raw, err := json.Marshal(live)
		if err != nil {
			t.Fatal(err)
		}
		if invalid := strings.Contains(owners[len(owners)-1].Manager, "\xff"); invalid != compactjson.HasReplacementEscape(raw) {
			t.Fatalf("the stored encoding has the escape of U+FFFD: %v, want %v", !invalid, invalid)
		}
		for _, w := range writes {
			name := fmt.Sprintf("%s, %d managers (last %q)", w.name, len(owners), owners[len(owners)-1].Manager)
			tg := target{res: leasesTarget, namespace: "kube-node-lease", name: "node-1", manager: w.manager}
			var served [2]bool
			var out [2][]metav1.ManagedFieldsEntry
			live, raw := live, raw
			if w.name == "an annotation made valid UTF-8" {
				live = live.DeepCopy()
				live.Annotations = map[string]string{"note": "x\xff"}
				if raw, err = json.Marshal(live); err != nil {
					t.Fatal(err)
				}
			}
			for i, r := range [][]byte{nil, raw} {
				obj := live.DeepCopy()
				w.change(obj)
				served[i] = fieldProbe(t).ScalarUpdate(tg.write(), live, r, obj)
				out[i] = obj.ManagedFields
			}
			if served[0] != w.serves {
				t.Errorf("%s: ScalarUpdate() encoding the live object = %v, want %v", name, served[0], w.serves)
			}
			if served[1] != served[0] {
				t.Errorf("%s: ScalarUpdate() = %v with the stored encoding, %v encoding the live object", name, served[1], served[0])
			}
			if diff := cmp.Diff(out[0], out[1]); diff != "" {
				t.Errorf("%s: managed fields (-encoding the live object +the stored encoding):\n%s", name, diff)
			}
		}
	}
}

// storedRaw is the stored encoding of the object, "" when none is stored.
func storedRaw(s *Server, res *resource, ns, name string) string {
	var raw string
	_ = s.store.locked(func() error {
		if e, ok := s.store.get(res, ns, name); ok {
			raw = string(e.raw)
		}
		return nil
	})
	return raw
}
