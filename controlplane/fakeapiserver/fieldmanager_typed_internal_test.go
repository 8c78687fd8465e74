package fakeapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// shapeWrites makes the random writes of TestTypedCutsMatchTheLibrary: status writes of a pod
// and a node whose field sets change from write to write (fields set, nulled and left out; lists
// emptied, nulled, grown and shrunk; list-map elements added and removed; a container's state
// moving between waiting, running and terminated), by the kubelet and by other managers, merge
// and strategic merge patches and applies of the status, and now and then a write of the main
// resource (labels; the spec's tolerations; a managed fields reset, `managedFields: [{}]`; a
// status the main resource resets).
type shapeWrites struct{ statusWrites }

// maybe sets m[k] to v, to null or leaves it out.
func (g shapeWrites) maybe(m map[string]any, k string, v any) {
	switch g.rng.Intn(5) {
	case 0:
		m[k] = nil
	case 1:
	default:
		m[k] = v
	}
}

func (g shapeWrites) next(step int) statusWrite {
	w := statusWrite{manager: g.pick("kubelet", "kubelet", "kubelet", "kubelet", "kubelet", "controller", "applier")}
	pt := g.pick(string(types.StrategicMergePatchType), string(types.StrategicMergePatchType), string(types.MergePatchType))
	if w.manager == "applier" {
		pt = string(types.ApplyPatchType)
	}
	w.pt = types.PatchType(pt)
	status := map[string]any{}
	doc := map[string]any{"status": status}
	if g.rng.Intn(3) == 0 {
		w.res, w.name = nodesTarget, "node-1"
		kinds := []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}
		status["conditions"] = g.conditions(kinds[:1+g.rng.Intn(len(kinds))], true)
		g.maybe(status, "addresses", []map[string]any{{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "node-1"}}[:1+g.rng.Intn(2)])
		g.maybe(status, "capacity", map[string]any{"cpu": "2", "pods": g.pick("110", "100")})
		g.maybe(status, "images", []map[string]any{{"names": []string{"nginx:1.27"}, "sizeBytes": 1000}})
		g.maybe(status, "nodeInfo", map[string]any{"kubeletVersion": "v1.35.4", "machineID": g.pick("", "m1")})
	} else {
		w.res, w.ns, w.name = podsTarget, "default", "web"
		status["phase"] = g.pick("Pending", "Running", "Running", "Succeeded")
		kinds := []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}
		status["conditions"] = g.conditions(kinds[g.rng.Intn(3):], false)
		ip := "10.1.0." + g.pick("5", "6")
		g.maybe(status, "podIP", ip)
		switch g.rng.Intn(5) {
		case 0:
			status["podIPs"] = nil
		case 1:
			status["podIPs"] = []map[string]any{}
		case 2:
			status["podIPs"] = []map[string]any{{"ip": ip}, {"ip": "fd00::5"}}
		default:
			status["podIPs"] = []map[string]any{{"ip": ip}}
		}
		g.maybe(status, "hostIP", "192.168.0.1")
		g.maybe(status, "startTime", "2026-01-01T00:00:0"+g.pick("0", "1")+"Z")
		g.maybe(status, "message", "m")
		g.maybe(status, "qosClass", "BestEffort")
		var statuses []map[string]any
		for _, name := range []string{"app", "side"}[:1+g.rng.Intn(2)] {
			cs := map[string]any{"name": name, "image": "nginx:1.27", "imageID": "", "ready": g.rng.Intn(2) == 0, "restartCount": g.rng.Intn(2)}
			g.maybe(cs, "started", true)
			g.maybe(cs, "containerID", "containerd://"+name)
			state := map[string]any{}
			switch g.rng.Intn(4) {
			case 0:
				state["waiting"] = map[string]any{"reason": "ContainerCreating"}
				if pt != string(types.MergePatchType) {
					state["running"] = nil
				}
			case 1:
				state["terminated"] = map[string]any{"exitCode": g.rng.Intn(2), "reason": "Completed", "startedAt": "2026-01-01T00:00:01Z", "finishedAt": "2026-01-01T00:00:02Z"}
			case 2:
				state = nil
			default:
				state["running"] = map[string]any{"startedAt": "2026-01-01T00:00:01Z"}
				state["waiting"] = nil
			}
			cs["state"] = state
			statuses = append(statuses, cs)
		}
		switch g.rng.Intn(6) {
		case 0:
			status["containerStatuses"] = nil
		case 1:
		default:
			status["containerStatuses"] = statuses
		}
	}
	if w.pt == types.ApplyPatchType {
		doc = map[string]any{"apiVersion": "v1", "kind": w.res.kind, "metadata": map[string]any{"name": w.name, "namespace": w.ns},
			"status": map[string]any{"conditions": status["conditions"]}}
	}
	w.sub = "status"
	if g.rng.Intn(10) == 0 && w.pt != types.ApplyPatchType {
		// A write of the main resource, which the status writes' cuts do not see but whose
		// managed fields they carry.
		w.sub, w.manager = "", g.pick("kubectl", "controller")
		meta := map[string]any{"labels": map[string]any{"tier": g.pick("a", "b")}}
		switch g.rng.Intn(3) {
		case 0:
			meta["managedFields"] = []map[string]any{{}}
		case 1:
			if w.res == podsTarget {
				doc["spec"] = map[string]any{"activeDeadlineSeconds": 100 + g.rng.Intn(2)}
			}
		}
		doc["metadata"] = meta
	}
	w.body, _ = json.Marshal(doc)
	w.desc = fmt.Sprintf("step %d: %s %s/%s %s %s", step, w.manager, w.res.name, w.sub, w.pt, w.body)
	return w
}

// TestTypedCutsMatchTheLibrary makes random sequences of writes that change the field sets of a
// pod's and a node's status (shapeWrites) on two servers, one with the field manager's shortcuts
// (keptTyped among them) and one on the library's path over whole objects, and wants every
// stored object, managed fields included, and every error to be the same after every write.
func TestTypedCutsMatchTheLibrary(t *testing.T) {
	// The writes statusFieldsUpdate would serve are kept values' to serve here.
	fieldmanager.WrittenCutShortcut.Set(false)
	defer func() { fieldmanager.Shortcuts.Set(true); fieldmanager.WrittenCutShortcut.Set(true) }()
	ctx := context.Background()
	seeds, steps := differentialSeeds(40), int64(40)
	served := int64(0)
	for seed := int64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewSource(seed))
		gen := shapeWrites{statusWrites{rng: rng}}
		servers := newServerPair(ctx, t, []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox:1.36"}}...)
		for step := range int(steps) {
			w := gen.next(step)
			tick := time.Duration(500+rng.Intn(2)*700) * time.Millisecond
			before := fieldmanager.TypedReuses.Load()
			servers.write(ctx, t, w, w.sub, tick, fmt.Sprintf("seed %d %s", seed, w.desc))
			served += fieldmanager.TypedReuses.Load() - before
		}
	}
	t.Logf("a kept typed value served %d of %d writes", served, seeds*steps)
	// The comparison means something only if kept values served many of the writes.
	if !raceEnabled && served < seeds*steps/4 {
		t.Errorf("a kept typed value served %d writes, want at least %d", served, seeds*steps/4)
	}
}

// TestTypedCutServesPendingToRunning wants the kubelet's status writes of a pod that change its
// field sets (Pending, then Running) to be served the previous write's typed value, and a write
// after another writer changed the object's managed fields to a set that names
// metadata.managedFields, or after the stored status changed under the kept value, not to be.
func TestTypedCutServesPendingToRunning(t *testing.T) {
	fieldmanager.WrittenCutShortcut.Set(false)
	defer fieldmanager.WrittenCutShortcut.Set(true)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}); err != nil {
		t.Fatal(err)
	}
	pending := `{"status":{"phase":"Pending","conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z"}],"containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`
	running := `{"status":{"phase":"Running","podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"}],"startTime":"2026-01-01T00:00:00Z","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}],"containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":true,"restartCount":0,"state":{"waiting":null,"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}}`
	gone := `{"status":{"podIP":null,"podIPs":null}}`
	// Pending with the start time removed: the container statuses are an atomic list, so that
	// without a field removed the write would change only values (statusScalarUpdate's).
	pendingAgain := strings.Replace(pending, `"phase"`, `"startTime":null,"phase"`, 1)
	for _, tc := range []struct {
		name    string
		manager string
		sub     string
		body    string
		served  bool
	}{
		{"the first status (nothing kept)", "kubelet", "status", pending, false},
		{"Running", "kubelet", "status", running, true},
		{"the IPs removed", "kubelet", "status", gone, true},
		{"a label by another manager (the main resource)", "kubectl", "", `{"metadata":{"labels":{"a":"b"}}}`, false},
		{"Pending again, after a write of the main resource", "kubelet", "status", pendingAgain, true},
		{"a status through the main resource (reset: changes nothing)", "kubectl", "", `{"status":{"phase":"Failed"}}`, false},
		{"Running again", "kubelet", "status", running, true},
	} {
		before := fieldmanager.TypedReuses.Load()
		d := s.Direct(tc.manager + "/v1")
		if _, err := d.patch(ctx, d.target(podsTarget, "default", "web", tc.sub), types.StrategicMergePatchType, []byte(tc.body)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := fieldmanager.TypedReuses.Load()-before == 1; got != tc.served {
			t.Errorf("%s: served a kept typed value = %v, want %v", tc.name, got, tc.served)
		}
		clk.Step(10 * time.Second)
	}

	// A kept cut whose status differs from the stored one is not served.
	var e *entry
	_ = s.store.locked(func() error { e, _ = s.store.get(podsTarget, "default", "web"); return nil })
	live := e.obj.(*corev1.Pod)
	tg := s.Direct("kubelet/v1").target(podsTarget, "default", "web", "status")
	probe := fieldProbe(t)
	liveCut, _, ok := probe.StatusOnly(tg.write(), live, live.DeepCopy())
	if !ok {
		t.Fatal("StatusOnly() refused a write that changes nothing")
	}
	if kept, _ := probe.KeptTyped(tg.write(), liveCut); !kept {
		t.Fatal("nothing kept after a status write")
	}
	if _, serves := probe.KeptTyped(tg.write(), liveCut); !serves {
		t.Error("KeptTyped() serves = false for the stored status")
	}
	changed := liveCut.DeepCopyObject().(*corev1.Pod)
	changed.Status.Message = "changed"
	if _, serves := probe.KeptTyped(tg.write(), changed); serves {
		t.Error("KeptTyped() serves = true for a status other than the kept one")
	}
	owned := liveCut.DeepCopyObject().(*corev1.Pod)
	owned.ManagedFields = append(owned.ManagedFields, metav1.ManagedFieldsEntry{Manager: "odd", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:managedFields":{}}}`)}})
	if _, serves := probe.KeptTyped(tg.write(), owned); serves {
		t.Error("KeptTyped() serves = true with an entry that owns metadata.managedFields")
	}
}
