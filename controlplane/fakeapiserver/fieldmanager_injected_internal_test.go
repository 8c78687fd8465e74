package fakeapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
)

// injectedWrites are shapeWrites with, one write in eight, a main-resource merge patch that
// sets metadata.managedFields to random entries (Apply and Update, status and main resource, the
// same manager on both, missing, tied and random times, sets naming status fields that later
// writes change or remove), and random extra status fields of pods and nodes: what the kubelet
// never sends, but what statusFieldsUpdate's entries must still come out of as the library's.
type injectedWrites struct{ shapeWrites }

var podPaths = []string{
	`"f:podIP":{}`, `"f:message":{}`, `"f:phase":{}`, `"f:startTime":{}`, `"f:hostIP":{}`, `"f:hostIPs":{}`, `"f:containerStatuses":{}`,
	`"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}}`,
	`"f:conditions":{"k:{\"type\":\"Initialized\"}":{".":{},"f:lastTransitionTime":{}}}`,
	`"f:podIPs":{".":{},"k:{\"ip\":\"10.1.0.5\"}":{".":{},"f:ip":{}}}`,
	`"f:resourceClaimStatuses":{".":{},"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:resourceClaimName":{}}}`,
	`"f:nominatedNodeName":{}`, `"f:qosClass":{}`,
}
var nodePaths = []string{
	`"f:capacity":{"f:cpu":{},"f:pods":{}}`, `"f:images":{}`, `"f:addresses":{".":{},"k:{\"type\":\"InternalIP\"}":{".":{},"f:address":{},"f:type":{}}}`,
	`"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}}`, `"f:nodeInfo":{"f:machineID":{}}`,
	`"f:daemonEndpoints":{"f:kubeletEndpoint":{"f:Port":{}}}`, `"f:volumesInUse":{}`,
}

// fieldsOf is a FieldsV1 document of a random subset of paths, under status.
func (g injectedWrites) fieldsOf(paths []string) map[string]any {
	status := map[string]any{}
	for _, p := range paths {
		if g.rng.Intn(3) != 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte("{"+p+"}"), &m); err != nil {
			panic(err)
		}
		deepMerge(status, m)
	}
	if len(status) == 0 {
		var m map[string]any
		_ = json.Unmarshal([]byte("{"+paths[0]+"}"), &m)
		deepMerge(status, m)
	}
	return map[string]any{"f:status": status}
}

// deepMerge merges src's maps into dst's, recursively; other values of src replace dst's.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				deepMerge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// inject is a merge patch's body that sets metadata.managedFields to one to four random
// entries of the given status paths.
func (g injectedWrites) inject(paths []string) map[string]any {
	var entries []map[string]any
	managers := []string{"kubelet", "controller", "applier", "m1", "m2"}
	used := map[string]bool{}
	for n := 1 + g.rng.Intn(4); n > 0; n-- {
		e := map[string]any{"manager": managers[g.rng.Intn(len(managers))], "apiVersion": "v1", "fieldsType": "FieldsV1"}
		e["operation"] = g.pick("Update", "Update", "Apply")
		e["subresource"] = g.pick("status", "status", "")
		key := fmt.Sprint(e["manager"], e["operation"], e["subresource"])
		if used[key] {
			continue
		}
		used[key] = true
		switch g.rng.Intn(4) {
		case 0:
		case 1:
			e["time"] = "2026-01-01T00:00:00Z"
		default:
			e["time"] = fmt.Sprintf("2026-01-01T00:%02d:%02dZ", g.rng.Intn(2), g.rng.Intn(60))
		}
		e["fieldsV1"] = g.fieldsOf(paths)
		entries = append(entries, e)
	}
	// keep the kubectl main entry with a label so the pod keeps fields
	return map[string]any{"metadata": map[string]any{"managedFields": entries, "labels": map[string]any{"x": g.pick("1", "2")}}}
}

// next is the step'th write: one in eight an injection of managed fields, the others a
// shapeWrites write with random extra status fields.
func (g injectedWrites) next(step int) statusWrite {
	if g.rng.Intn(8) == 0 {
		w := statusWrite{manager: "kubectl", pt: types.MergePatchType}
		if g.rng.Intn(3) == 0 {
			w.res, w.name = nodesTarget, "node-1"
			w.body, _ = json.Marshal(g.inject(nodePaths))
		} else {
			w.res, w.ns, w.name = podsTarget, "default", "web"
			w.body, _ = json.Marshal(g.inject(podPaths))
		}
		w.desc = fmt.Sprintf("step %d: inject %s %s", step, w.res.name, w.body)
		return w
	}
	w := g.shapeWrites.next(step)
	if w.sub != "status" || w.pt == types.ApplyPatchType {
		return w
	}
	w.manager = g.pick("kubelet", "kubelet", "controller", "m1", "m2", "applier")
	var doc map[string]any
	_ = json.Unmarshal(w.body, &doc)
	status, _ := doc["status"].(map[string]any)
	if status == nil {
		return w
	}
	if w.res == podsTarget {
		switch g.rng.Intn(4) {
		case 0:
			status["resourceClaimStatuses"] = []map[string]any{{"name": "a", "resourceClaimName": g.pick("c1", "c2")}}
		case 1:
			status["resourceClaimStatuses"] = []map[string]any{{"name": "a"}, {"name": "b", "resourceClaimName": "c"}}
		case 2:
			status["resourceClaimStatuses"] = nil
		}
		g.maybe(status, "nominatedNodeName", g.pick("n1", "n2"))
		g.maybe(status, "hostIPs", []map[string]any{{"ip": "192.168.0.1"}})
		g.maybe(status, "observedGeneration", 1+g.rng.Intn(2))
		g.maybe(status, "allocatedResources", map[string]any{"cpu": g.pick("1", "2"), g.pick("memory", "pods"): "1"})
		switch g.rng.Intn(4) {
		case 0:
			status["resources"] = map[string]any{"requests": map[string]any{"cpu": "1"}, "claims": []map[string]any{{"name": "a", "request": g.pick("r", "s")}}}
		case 1:
			status["resources"] = map[string]any{"claims": []map[string]any{{"name": "b"}, {"name": "a"}}, "limits": map[string]any{}}
		case 2:
			status["resources"] = nil
		}
		g.maybe(status, "extendedResourceClaimStatus", map[string]any{"resourceClaimName": "x", "requestMappings": []map[string]any{{"containerName": "app", "resourceName": "r", "requestName": g.pick("a", "b")}}})
		g.maybe(status, "initContainerStatuses", []map[string]any{{"name": "init", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0, "state": map[string]any{"terminated": map[string]any{"exitCode": 0}}}})
		if g.rng.Intn(4) == 0 {
			status["podIPs"] = []map[string]any{{"ip": "10.1.0.5"}, {"ip": "10.1.0.5"}}
		}
	} else {
		g.maybe(status, "daemonEndpoints", map[string]any{"kubeletEndpoint": map[string]any{"Port": 10250 + g.rng.Intn(2)}})
		g.maybe(status, "volumesInUse", []string{"v1"})
		g.maybe(status, "allocatable", map[string]any{"cpu": "2", g.pick("pods", "memory"): "1"})
		if g.rng.Intn(3) == 0 {
			status["addresses"] = []map[string]any{{"type": "InternalIP", "address": "10.0.0.1"}, {"type": g.pick("Hostname", "InternalIP", "ExternalIP"), "address": "x"}}
		}
		g.maybe(status, "config", map[string]any{"active": map[string]any{}})
		g.maybe(status, "features", map[string]any{"supplementalGroupsPolicy": g.rng.Intn(2) == 0})
		g.maybe(status, "runtimeHandlers", []map[string]any{{"name": "runc", "features": map[string]any{"recursiveReadOnlyMounts": true}}})
		g.maybe(status, "volumesAttached", []map[string]any{{"name": "v", "devicePath": g.pick("/a", "/b")}})
		g.maybe(status, "declaredFeatures", []string{g.pick("A", "B")})
	}
	w.body, _ = json.Marshal(doc)
	w.desc = fmt.Sprintf("step %d: %s %s/%s %s %s", step, w.manager, w.res.name, w.sub, w.pt, w.body)
	return w
}

// TestWrittenCutWithInjectedManagedFields compares, after every write, the objects stored by the
// library's path and by the shortcuts, over sequences of injectedWrites.
func TestWrittenCutWithInjectedManagedFields(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(true)
	ctx := context.Background()
	seeds, steps := differentialSeeds(50), 40
	served := int64(0)
	for seed := int64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewSource(seed))
		g := injectedWrites{shapeWrites{statusWrites{rng: rng}}}
		servers := newServerPair(ctx, t, []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox:1.36"}}...)
		for step := 0; step < steps; step++ {
			w := g.next(step)
			tick := time.Duration(rng.Intn(3)*700) * time.Millisecond
			before := fieldmanager.FieldsUpdates.Load()
			servers.write(ctx, t, w, w.sub, tick, fmt.Sprintf("seed %d %s", seed, w.desc))
			served += fieldmanager.FieldsUpdates.Load() - before
			if t.Failed() {
				return
			}
		}
	}
	// The sequences must reach statusFieldsUpdate, or the comparison proves nothing about it.
	if min := seeds * 5; !raceEnabled && served < min {
		t.Errorf("statusFieldsUpdate served %d writes, want at least %d", served, min)
	}
}
