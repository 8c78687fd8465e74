package fakeapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestStrategicMergeByMapsStoresWhatJSONDid makes the same strategic merge patches on two
// servers, one that merges the stored object converted to maps (strategicMerge, kube-apiserver's
// way) and one that merges its JSON encoding and decodes the result (the way before), and wants
// every patch that the JSON way stored to be stored by the maps, byte for byte, with the same
// warnings: status patches of a pod (the kubelet's, from Pending to Running and terminated, with
// nulls, directives, an unknown field, the spec named), patches of a pod's labels and annotations,
// of a node's status and labels and of an event's count, under each field validation.
func TestStrategicMergeByMapsStoresWhatJSONDid(t *testing.T) {
	defer func() { strategicMergeByMaps = true }()
	ctx := context.Background()
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	newServer := func() *Server {
		s, err := New(Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		d := s.Direct("kubectl/v1")
		if _, err := d.CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox:1.36"}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.CreateEvent(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started", Message: "started", Count: 1,
			FirstTimestamp: metav1.NewTime(start), LastTimestamp: metav1.NewTime(start), Type: corev1.EventTypeNormal}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	type write struct {
		res                    *resource
		ns, name, sub, manager string
		fv                     fieldValidation
		body                   string
	}
	status := func(body string) write {
		return write{podsTarget, "default", "web", "status", "kubelet", validationWarn, body}
	}
	steps := []write{
		status(`{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}]}}`),
		status(`{"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"},{"type":"Initialized"},{"type":"Ready"}],"conditions":[{"type":"Initialized","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},{"type":"Ready","status":"False","reason":"ContainersNotReady","lastTransitionTime":"2026-01-01T00:00:01Z"}],"hostIP":"192.168.0.10","hostIPs":[{"ip":"192.168.0.10"}],"startTime":"2026-01-01T00:00:01Z","containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":false,"restartCount":0,"started":false,"state":{"waiting":{"reason":"ContainerCreating"}}},{"name":"side","image":"busybox:1.36","imageID":"","ready":false,"restartCount":0,"started":false,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`),
		status(`{"status":{"phase":"Running","podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"}],"$setElementOrder/conditions":[{"type":"PodScheduled"},{"type":"Initialized"},{"type":"Ready"}],"conditions":[{"type":"Ready","status":"True","reason":null,"lastTransitionTime":"2026-01-01T00:00:03Z"}],"containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"docker.io/library/nginx@sha256:1","containerID":"containerd://1","ready":true,"restartCount":0,"started":true,"state":{"waiting":null,"running":{"startedAt":"2026-01-01T00:00:02Z"}},"allocatedResources":{"cpu":"100m","memory":"64Mi"},"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}},{"name":"side","image":"busybox:1.36","imageID":"docker.io/library/busybox@sha256:2","containerID":"containerd://2","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:02Z"}}}]}}`),
		status(`{"status":{"containerStatuses":[{"name":"side","ready":false,"restartCount":1,"lastState":{"terminated":{"exitCode":1,"reason":"Error","startedAt":"2026-01-01T00:00:02Z","finishedAt":"2026-01-01T00:00:04Z","containerID":"containerd://2"}},"state":{"running":null,"waiting":{"reason":"CrashLoopBackOff","message":"back-off 10s"}}}]}}`),
		status(`{"status":{"conditions":[{"type":"Ready","$patch":"delete"}],"message":"m","reason":"r","nominatedNodeName":"n"}}`),
		status(`{"status":{"podIP":null,"podIPs":null,"message":null,"bogus":{"a":1}}}`),
		status(`{"status":{"$patch":"replace","phase":"Succeeded","observedGeneration":1}}`),
		status(`{"metadata":{"labels":{"tier":"front"},"annotations":{"a":"b"}},"status":{"qosClass":"BestEffort"}}`),
		status(`{"spec":{"nodeName":"node-2"},"status":{"resize":"Proposed"}}`),
		status(`{"status":{"containerStatuses":[{"name":"app","restartCount":1e3}]}}`),
		status(`{}`),
		{podsTarget, "default", "web", "status", "kubelet", validationIgnore, `{"status":{"phase":"Failed","bogus":1}}`},
		{podsTarget, "default", "web", "status", "kubelet", validationStrict, `{"status":{"phase":"Running"}}`},
		{podsTarget, "default", "web", "", "kubectl", validationWarn, `{"metadata":{"labels":{"tier":"back","app":null},"annotations":{"note":"x"}}}`},
		{podsTarget, "default", "web", "", "kubectl", validationWarn, `{"metadata":{"finalizers":["example.com/keep"],"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"node-1","uid":"u"}]}}`},
		{podsTarget, "default", "web", "", "kubectl", validationWarn, `{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}],"activeDeadlineSeconds":60}}`},
		{nodesTarget, "", "node-1", "status", "kubelet", validationWarn, `{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:10Z","lastTransitionTime":"2026-01-01T00:00:10Z","reason":"KubeletReady","message":"kubelet is posting ready status"}],"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"3800m","memory":"7Gi","pods":"110"},"addresses":[{"type":"InternalIP","address":"192.168.0.10"},{"type":"Hostname","address":"node-1"}],"nodeInfo":{"kubeletVersion":"v1.35.4"}}}`},
		{nodesTarget, "", "node-1", "status", "kubelet", validationWarn, `{"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"type":"Ready","lastHeartbeatTime":"2026-01-01T00:00:20Z"}]}}`},
		{nodesTarget, "", "node-1", "", "kubectl", validationWarn, `{"metadata":{"labels":{"zone":"a"}},"spec":{"unschedulable":true,"taints":[{"key":"k","effect":"NoSchedule"}]}}`},
		{eventsTarget, "default", "web.1", "", "kubelet", validationWarn, `{"count":2,"lastTimestamp":"2026-01-01T00:00:20Z","message":"started again"}`},
	}
	maps, jsonWay := newServer(), newServer()
	stored := 0
	for _, w := range steps {
		var raws, errs [2]string
		var warnings [2][]string
		for i, s := range []*Server{maps, jsonWay} {
			strategicMergeByMaps = i == 0
			tg := target{res: w.res, namespace: w.ns, name: w.name, subresource: w.sub, manager: w.manager}
			out, warns, err := s.patchObject(ctx, tg, types.StrategicMergePatchType, []byte(w.body), w.fv, false)
			if err != nil {
				errs[i] = err.Error()
			} else {
				raws[i] = string(out.raw)
			}
			warnings[i] = warns
		}
		strategicMergeByMaps = true
		if errs[1] != "" {
			t.Errorf("%s: the JSON way failed: %s", w.body, errs[1])
			continue
		}
		stored++
		if errs[0] != "" || raws[0] == "" {
			t.Errorf("%s: the maps failed (%q) or stored nothing", w.body, errs[0])
		}
		if diff := cmp.Diff(warnings[1], warnings[0]); diff != "" {
			t.Errorf("%s: warnings (-JSON +maps):\n%s", w.body, diff)
		}
		if diff := cmp.Diff(raws[1], raws[0]); diff != "" {
			t.Errorf("%s: stored (-JSON +maps):\n%s", w.body, diff)
		}
	}
	if stored != len(steps) {
		t.Errorf("%d of %d patches stored, want all", stored, len(steps))
	}
}

// TestOnlyKnownFields wants merged maps (what the converter reads after a strategic merge) known
// to name only fields where every key at every level is a field's name, and unknown otherwise: a
// directive the merge left in them is no field (the converter reports it as unknown).
func TestOnlyKnownFields(t *testing.T) {
	for _, tc := range []struct {
		patch string
		want  bool
	}{
		{`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`, true},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"any":"x","$patch":"replace"}},"status":{}}`, true},
		{`{"status":{"containerStatuses":[{"name":"c","state":{"running":{"startedAt":"2026-01-01T00:00:02Z"}},"allocatedResources":{"cpu":{"weird":1}}}]}}`, true},
		{`{"status":{"phase":1,"conditions":"x","containerStatuses":{"name":"c"}}}`, true},
		{`{"metadata":{"managedFields":[{"manager":"x","fieldsV1":{"f:anything":{}}}]}}`, true},
		{`{"status":{"bogus":1}}`, false},
		{`{"status":{"$bogus":1}}`, false},
		{`{"status":{"containerStatuses":[{"name":"c"},{"name":"d","bogus":1}]}}`, false},
		{`{"status":{"containerStatuses":[{"name":"c","state":{"running":{"since":"x"}}}]}}`, false},
		{`{"status":{"Phase":"Running"}}`, false},
		{`{"bogus":{}}`, false},
		// Directives left in the merged maps: in a value the merge took whole, or under a
		// $patch it did not act on.
		{`{"status":{"$setElementOrder/conditions":[{"type":"Ready"}]}}`, false},
		{`{"status":{"$retainKeys":["phase"]}}`, false},
		{`{"status":{"$deleteFromPrimitiveList/x":[1]}}`, false},
		{`{"status":{"conditions":[{"type":"Ready","$patch":"delete"}]}}`, false},
		{`{"status":{"containerStatuses":[{"name":"app","state":{"$retainKeys":["running"],"running":{}}}]}}`, false},
		{`{"$patch":"replace"}`, false},
	} {
		var patch map[string]any
		if err := json.Unmarshal([]byte(tc.patch), &patch); err != nil {
			t.Fatal(err)
		}
		if got := onlyKnownFields(reflect.TypeFor[corev1.Pod](), patch); got != tc.want {
			t.Errorf("onlyKnownFields(%s) = %t, want %t", tc.patch, got, tc.want)
		}
	}
}

// statusMergePatches are strategic merge patches of a pod's status, with unknown fields and
// directives where the converter's field validation could tell them apart: the cases of
// TestStrategicMergeWithoutFieldValidation and seeds of FuzzStrategicMergeWithoutFieldValidation.
var statusMergePatches = []string{
	`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`,
	`{"status":{"phase":1}}`,
	`{"status":{"bogus":1,"phase":1}}`,
	`{"status":{"bogus":1}}`,
	`{"status":{"phase":"Running","phase":"Pending"}}`,
	`{"status":{"containerStatuses":[{"name":"app","bogus":{"a":1},"ready":"yes"}]}}`,
	`{"status":{"containerStatuses":[{"name":"app","ready":true,"restartCount":1e3}]}}`,
	`{"status":{"conditions":[{"type":"Ready","$patch":"delete","bogus":1}]}}`,
	`{"metadata":{"labels":{"a":"b"}},"spec":{"bogus":1},"status":{"$retainKeys":["phase"],"phase":"Failed"}}`,
	// The merge deletes a list that $setElementOrder orders from the patch once merged: its
	// unknown fields are found in the merged maps only.
	`{"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"type":"Ready","status":"True","bogus":1}]}}`,
	`{"status":{"$setElementOrder/podIPs":[{"ip":"10.0.0.1"}],"podIPs":[{"ip":"10.0.0.1","bogus":{"a":1}}]}}`,
	// The stored pod has no container statuses: the merge takes the list whole, with the
	// directives in it, which the converter reports as unknown fields.
	`{"status":{"containerStatuses":[{"name":"app","state":{"$retainKeys":["running"],"running":{}}}]}}`,
	`{"status":{"containerStatuses":[{"name":"app","$setElementOrder/volumeMounts":[{"mountPath":"/a"}]}]}}`,
	`{"status":{"containerStatuses":[{"name":"app","$deleteFromPrimitiveList/x":["a"]}]}}`,
	`{"status":{"resize":"x","containerStatuses":[{"name":"app","lastState":{"$retainKeys":["terminated"]}}]}}`,
	// $patch: replace keeps the directives nested in its map.
	`{"status":{"$patch":"replace","phase":"Running","containerStatuses":[{"name":"app","state":{"$retainKeys":["running"]}}]}}`,
}

// storedFleetPod is a server's stored fleetPod and the target of a kubelet's patch of its status.
func storedFleetPod(tb testing.TB) (*entry, target) {
	tb.Helper()
	s, err := New(Options{Clock: clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)), Tracer: trace.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Direct("kubectl/v1").CreatePod(context.Background(), fleetPod()); err != nil {
		tb.Fatal(err)
	}
	var old *entry
	_ = s.store.locked(func() error {
		old, _ = s.store.get(podsTarget, "default", fleetPod().Name)
		return nil
	})
	return old, target{res: podsTarget, namespace: "default", name: fleetPod().Name, subresource: "status", manager: "kubelet"}
}

// mergeAnswer is what one strategic merge answered.
type mergeAnswer struct {
	Obj      runtime.Object
	Warnings []string
	Err      string
}

// mergeSkipping merges p into old under fv with the field validation of patches of known fields
// skipped or not, as skip says, and puts skipKnownFieldValidation back to true, as it runs.
func mergeSkipping(p patchRequest, tg target, old *entry, fv fieldValidation, skip bool) mergeAnswer {
	skipKnownFieldValidation = skip
	defer func() { skipKnownFieldValidation = true }()
	obj, warnings, err := p.strategicMerge(tg, old, fv)
	a := mergeAnswer{Obj: obj, Warnings: warnings}
	if err != nil {
		a.Err = err.Error()
	}
	return a
}

// FuzzStrategicMergeWithoutFieldValidation wants the same answer to any strategic merge patch of
// a pod's status, under each field validation, with the field validation skipped for patches of
// known fields and without.
func FuzzStrategicMergeWithoutFieldValidation(f *testing.F) {
	for _, seed := range statusMergePatches {
		f.Add(seed, uint8(0))
	}
	for _, seed := range []string{
		`{"metadata":{"labels":{"a":"b"},"Labels":{}},"status":{"$retainKeys":["phase"],"phase":"Failed","$x":1}}`,
		`{"status":{"$setElementOrder/containerStatuses":[{"name":"side"}],"containerStatuses":[{"name":"side","state":{"running":{"startedAt":"x"}}}]}}`,
	} {
		f.Add(seed, uint8(0))
	}
	old, tg := storedFleetPod(f)
	f.Fuzz(func(t *testing.T, body string, validation uint8) {
		fv := fieldValidation(validation % 3)
		p := patchRequest{typ: types.StrategicMergePatchType, data: []byte(body)}
		var answers [2]mergeAnswer
		for i, skip := range []bool{true, false} {
			func() {
				// The merge panics on some patches (a $setElementOrder of a list without a
				// merge key, whose elements it compares as values), with or without the
				// validation: the handler answers 500, as it does for any panic.
				defer func() {
					if r := recover(); r != nil {
						answers[i] = mergeAnswer{Err: fmt.Sprint("panic: ", r)}
					}
				}()
				answers[i] = mergeSkipping(p, tg, old, fv, skip)
			}()
		}
		if diff := cmp.Diff(answers[1], answers[0]); diff != "" {
			t.Errorf("%s (validation %d): (-validated +skipped):\n%s", body, fv, diff)
		}
	})
}

// TestStrategicMergeWithoutFieldValidation makes strategic merge patches of a pod's status with
// and without the converter's field validation skipped for patches of known fields, under each
// field validation, and wants the same answers: the same objects, warnings and errors.
func TestStrategicMergeWithoutFieldValidation(t *testing.T) {
	old, tg := storedFleetPod(t)
	for _, body := range statusMergePatches {
		p, err := newPatchRequest(types.StrategicMergePatchType, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, fv := range []fieldValidation{validationWarn, validationIgnore, validationStrict} {
			skipped := mergeSkipping(p, tg, old, fv, true)
			validated := mergeSkipping(p, tg, old, fv, false)
			if diff := cmp.Diff(validated, skipped); diff != "" {
				t.Errorf("%s (validation %d): (-validated +skipped):\n%s", body, fv, diff)
			}
		}
	}
}
