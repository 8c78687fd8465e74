package fakeapiserver

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
)

// TestWrittenCutsMatchTheLibrary makes random sequences of status writes of a pod and a node
// on two servers, one with the field manager's shortcuts (statusFieldsUpdate among them) and
// one on the library's path over whole objects, and wants every stored object, managed fields
// included, and every error to be the same after every write: the writes of shapeWrites (field
// sets that change: fields set, nulled and left out, lists emptied and nulled, list-map
// elements added, removed, reordered and duplicated, container states moving, several
// managers, applies, writes of the main resource, managed fields resets) and of statusWrites
// (mostly values, with conditions added, removed and reordered and duplicate addresses). Under
// the race detector it runs a tenth of the sequences (differentialSeeds) and leaves the count of
// served writes to the plain suite.
func TestWrittenCutsMatchTheLibrary(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(true)
	ctx := context.Background()
	seeds, steps := differentialSeeds(40), int64(40)
	for _, gen := range []struct {
		name string
		next func(rng *rand.Rand) func(step int) statusWrite
		// min is the fewest writes statusFieldsUpdate must serve for the comparison to mean
		// something.
		min int64
	}{
		{"field sets", func(rng *rand.Rand) func(int) statusWrite { return shapeWrites{statusWrites{rng: rng}}.next }, seeds * steps / 4},
		{"values", func(rng *rand.Rand) func(int) statusWrite {
			g := statusWrites{rng: rng}
			return func(step int) statusWrite { w := g.next(step); w.sub = "status"; return w }
		}, seeds * steps / 20},
	} {
		t.Run(gen.name, func(t *testing.T) {
			served := int64(0)
			for seed := int64(1); seed <= seeds; seed++ {
				rng := rand.New(rand.NewSource(seed))
				next := gen.next(rng)
				servers := newServerPair(ctx, t, []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox:1.36"}}...)
				for step := range int(steps) {
					w := next(step)
					tick := time.Duration(500+rng.Intn(2)*700) * time.Millisecond
					before := fieldmanager.FieldsUpdates.Load()
					servers.write(ctx, t, w, w.sub, tick, fmt.Sprintf("seed %d %s", seed, w.desc))
					served += fieldmanager.FieldsUpdates.Load() - before
				}
			}
			t.Logf("statusFieldsUpdate served %d of %d writes", served, seeds*steps)
			if !raceEnabled && served < gen.min {
				t.Errorf("statusFieldsUpdate served %d writes, want at least %d", served, gen.min)
			}
		})
	}
}

// TestWrittenCutTable makes one sequence of writes on two servers (the library's path and the
// shortcuts) and wants the stored objects the same after each, and each write served by
// statusFieldsUpdate or not as the table says: the kubelet's writes that change field sets are
// served; those its guards refuse (a null against a value, duplicate keys, an eleventh Update
// entry) are not: the last two would store other bytes if they were, the first is refused to
// be safe.
func TestWrittenCutTable(t *testing.T) {
	ctx := context.Background()
	servers := newServerPair(ctx, t, []corev1.Container{{Name: "app", Image: "nginx:1.27"}}...)
	pod := func(manager, body string) statusWrite {
		return statusWrite{res: podsTarget, ns: "default", name: "web", manager: manager, sub: "status", pt: types.StrategicMergePatchType, body: []byte(body)}
	}
	pending := `{"status":{"phase":"Pending","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"Ready","status":"False","reason":"ContainersNotReady","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z"}],` +
		`"containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`
	running := `{"status":{"phase":"Running","podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"}],"hostIP":"192.168.0.1","hostIPs":[{"ip":"192.168.0.1"}],"startTime":"2026-01-01T00:00:00Z",` +
		`"conditions":[{"type":"Ready","status":"True","reason":null,"lastTransitionTime":"2026-01-01T00:00:01Z"}],` +
		`"containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"docker.io/library/nginx@sha256:0","containerID":"containerd://0","ready":true,"started":true,"restartCount":0,"state":{"waiting":null,"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}}`
	steps := []struct {
		name   string
		write  statusWrite
		served bool
	}{
		{"the first status: conditions with null probe times appear", pod("kubelet", pending), true},
		{"Running: IPs, start time, a running state appear, the waiting state goes", pod("kubelet", running), true},
		{"the same again (nothing changes)", pod("kubelet", running), false},
		{"a condition added before the others (the list reordered)", pod("kubelet",
			`{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z"}],"$setElementOrder/conditions":[{"type":"PodScheduled"},{"type":"Initialized"},{"type":"Ready"}]}}`), true},
		{"the IPs removed", pod("kubelet", `{"status":{"podIP":null,"podIPs":null}}`), true},
		{"another manager takes the message and a condition", pod("controller",
			`{"status":{"message":"m","conditions":[{"type":"Ready","status":"False","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:02Z"}]}}`), true},
		{"an apply shares the conditions", statusWrite{res: podsTarget, ns: "default", name: "web", manager: "applier", sub: "status", pt: types.ApplyPatchType,
			body: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default"},"status":{"conditions":[{"type":"Ready","status":"False","lastTransitionTime":"2026-01-01T00:00:02Z"}]}}`)}, false},
		{"the kubelet takes them back and adds the IPs", pod("kubelet",
			`{"status":{"podIP":"10.1.0.6","podIPs":[{"ip":"10.1.0.6"}],"conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`), true},
		{"a null against a value: a probe time set", pod("kubelet",
			`{"status":{"message":null,"conditions":[{"type":"Ready","lastProbeTime":"2026-01-01T00:00:04Z"}]}}`), false},
		{"duplicate keys: a condition twice (a merge patch replaces the list)", statusWrite{res: podsTarget, ns: "default", name: "web", manager: "kubelet", sub: "status", pt: types.MergePatchType,
			body: []byte(`{"status":{"message":"n","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:05Z"},{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:05Z"}]}}`)}, false},
		{"a status through the main resource (the reset drops it)", statusWrite{res: podsTarget, ns: "default", name: "web", manager: "kubectl", pt: types.MergePatchType,
			body: []byte(`{"status":{"phase":"Failed"}}`)}, false},
		{"one condition again, after the duplicates", pod("kubelet",
			`{"status":{"message":null,"conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:06Z"}],"$setElementOrder/conditions":[{"type":"Ready"}]}}`), false},
		{"a status field added beside the duplicates (equal on both sides: no change there)", pod("kubelet", `{"status":{"nominatedNodeName":"node-1"}}`), true},
		{"the duplicates replaced by one condition (a merge patch)", statusWrite{res: podsTarget, ns: "default", name: "web", manager: "kubelet", sub: "status", pt: types.MergePatchType,
			body: []byte(`{"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:06Z"}]}}`)}, false},
	}
	// Managers enough that one more Update entry passes the library's bound (the kubectl,
	// kubelet and controller entries and eight more make eleven): it then merges the oldest
	// entries, which statusFieldsUpdate leaves to the library.
	for i := range 9 {
		steps = append(steps, struct {
			name   string
			write  statusWrite
			served bool
		}{fmt.Sprintf("manager m%d adds a condition", i), pod(fmt.Sprintf("m%d", i),
			fmt.Sprintf(`{"status":{"conditions":[{"type":"c%d","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:07Z"}]}}`, i)), i < 8})
	}
	for _, st := range steps {
		before := fieldmanager.FieldsUpdates.Load()
		servers.write(ctx, t, st.write, st.write.sub, time.Second, st.name)
		if got := fieldmanager.FieldsUpdates.Load()-before == 1; got != st.served {
			t.Errorf("%s: served by statusFieldsUpdate = %v, want %v", st.name, got, st.served)
		}
	}
}
