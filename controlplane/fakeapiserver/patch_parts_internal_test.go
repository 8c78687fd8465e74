package fakeapiserver

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// partsStoredObjects are stored objects for the differential tests of mergeNamedParts: pods as a
// write through the API leaves them (whole seconds) and as a caller in the process may hand them
// over (nanoseconds, empty but not nil maps and lists, a deletion under way, owners, finalizers,
// managed fields), a pod without metadata to speak of, and a node.
func partsStoredObjects() map[string]runtime.Object {
	q := apiresource.MustParse
	sec := metav1.NewTime(time.Date(2026, time.January, 1, 0, 0, 1, 0, time.UTC))
	nano := metav1.NewTime(time.Date(2026, time.January, 1, 0, 0, 1, 123456789, time.FixedZone("X", 3600)))
	status := corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: "192.168.0.10", HostIPs: []corev1.HostIP{{IP: "192.168.0.10"}},
		PodIP: "10.1.0.5", PodIPs: []corev1.PodIP{{IP: "10.1.0.5"}}, StartTime: &sec, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: sec},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: sec},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: sec},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: sec},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Image: "nginx:1.27", ImageID: "sha256:1", ContainerID: "containerd://1", Ready: true, Started: ptr.To(true),
				State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: sec}},
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
				Resources:          &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}}},
			{Name: "side", Image: "busybox:1.36", RestartCount: 2,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, StartedAt: sec, FinishedAt: sec}}},
		},
	}
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &sec,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:phase":{}}}`)}, Subresource: "status"}}
	spec := corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox:1.36"}}}
	written := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", GenerateName: "web-", UID: "uid-1", ResourceVersion: "7", Generation: 1,
			CreationTimestamp: sec, Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "x"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}},
			ManagedFields:   managed},
		Spec: spec, Status: status}
	inProcess := written.DeepCopy()
	inProcess.CreationTimestamp = nano
	inProcess.DeletionTimestamp = &nano
	inProcess.DeletionGracePeriodSeconds = ptr.To[int64](30)
	inProcess.Labels, inProcess.Annotations = map[string]string{}, map[string]string{}
	inProcess.Finalizers = []string{}
	inProcess.OwnerReferences = []metav1.OwnerReference{}
	//lint:ignore SA1019 a stored object may still carry it, and convertedMeta must copy it as the converter does.
	inProcess.SelfLink = "/api/v1/namespaces/default/pods/web"
	inProcess.Status.StartTime = &nano
	finalizing := written.DeepCopy()
	finalizing.Finalizers = []string{"example.com/a", "example.com/b"}
	finalizing.DeletionTimestamp = &sec
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ManagedFields: managed}, Spec: spec}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "n", ResourceVersion: "3", CreationTimestamp: sec,
		Labels: map[string]string{"kubernetes.io/hostname": "node-1"}, ManagedFields: managed},
		Spec: corev1.NodeSpec{PodCIDR: "10.1.0.0/24"},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: q("4")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: sec, LastTransitionTime: sec}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.10"}}}}
	return map[string]runtime.Object{"written": written, "in-process": inProcess, "finalizing": finalizing, "bare": bare, "node": node}
}

// partsEdgePatches are status patches at the edges of mergeNamedParts: directives at every level,
// nulls, unknown fields and values of the wrong type, duplicate keys, metadata changes, keys at
// the top that are no part of the object, and the spec named.
var partsEdgePatches = []string{
	`{}`,
	// The metadata's UID, a kubelet's precondition: the stored pod's (uid-1) or node's (n), another
	// one, none, a null and a number, with other keys of the metadata, and alone.
	`{"metadata":{"uid":"uid-1"},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"n"},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"uid-2"},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":""},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":null},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":1},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"uid-1","labels":{"a":"b"}},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"n","labels":{"a":null}},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"uid-1","$patch":"replace"},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"uid-1","resourceVersion":"7"},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"uid-1"}}`,
	`{"metadata":{"uid":"uid-1"},"status":null}`,
	`{"metadata":{"uid":"uid-1"},"status":{"$patch":"delete"}}`,
	`{"metadata":{},"status":{"phase":"Running"}}`,
	`{"status":{}}`,
	`{"status":null}`,
	`{"metadata":null,"status":{"phase":"Failed"}}`,
	`{"status":{"phase":"Succeeded","podIP":null,"podIPs":null,"message":null}}`,
	`{"status":{"$patch":"replace","phase":"Succeeded"}}`,
	`{"status":{"$patch":"delete"}}`,
	`{"status":{"$retainKeys":["phase"],"phase":"Running"}}`,
	`{"status":{"$retainKeys":["phase"],"podIP":"1.2.3.4"}}`,
	`{"$patch":"replace","status":{"phase":"Running"}}`,
	`{"$patch":"delete"}`,
	`{"$retainKeys":["status"],"status":{"phase":"Running"}}`,
	`{"$setElementOrder/status":[{"a":1}],"status":{}}`,
	`{"$deleteFromPrimitiveList/metadata":["x"]}`,
	`{"status":{"$setElementOrder/conditions":[{"type":"Ready"},{"type":"PodScheduled"}],"conditions":[{"type":"Ready","status":"True","reason":null}]}}`,
	`{"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"type":"Ready","status":"True","bogus":1}]}}`,
	`{"status":{"$setElementOrder/conditions":"x"}}`,
	`{"status":{"$setElementOrder/containerStatuses":[{"name":"app"}],"containerStatuses":[{"name":"app"}]}}`,
	`{"status":{"conditions":[{"type":"Ready","$patch":"delete"}]}}`,
	`{"status":{"conditions":[{"type":"Ready","$patch":"bogus"}]}}`,
	`{"status":{"conditions":[{"$patch":"replace"}]}}`,
	`{"status":{"conditions":[{"status":"True"}]}}`,
	`{"status":{"conditions":[[1]]}}`,
	`{"status":{"$deleteFromPrimitiveList/podIPs":[{"ip":"10.1.0.5"}]}}`,
	`{"status":{"containerStatuses":[{"name":"side","state":{"waiting":null,"running":{"startedAt":"2026-01-01T00:00:09Z"}}}]}}`,
	`{"status":{"containerStatuses":[{"name":"app","allocatedResources":{"cpu":"abc"}}]}}`,
	`{"status":{"containerStatuses":[{"name":"app","restartCount":1e20}]}}`,
	`{"status":{"containerStatuses":[{"name":"app","restartCount":1.5}]}}`,
	`{"status":{"startTime":5}}`,
	`{"status":{"startTime":"2026-01-01T00:00:09.5Z"}}`,
	`{"status":{"phase":1}}`,
	`{"status":[]}`,
	`{"status":"x"}`,
	`{"status":{"bogus":1}}`,
	`{"status":{"bogus":{"$patch":"replace"}}}`,
	`{"status":{"phase":"Running","phase":"Pending"}}`,
	`{"status":{"phase":"Running"},"status":{"qosClass":"Guaranteed"}}`,
	`{"bogus":1,"status":{"phase":"Running"}}`,
	`{"apiVersion":"v2","kind":"Node","status":{"phase":"Running"}}`,
	`{"kind":5}`,
	`{"spec":{"nodeName":"other"},"status":{"phase":"Running"}}`,
	`{"spec":null}`,
	`{"metadata":{"uid":"uid-1"},"status":{"phase":"Running"}}`,
	`{"metadata":{"uid":"other"}}`,
	`{"metadata":{"labels":{"tier":"front","app":null},"annotations":null},"status":{"qosClass":"BestEffort"}}`,
	`{"metadata":{"labels":{"$patch":"replace","only":"this"}}}`,
	`{"metadata":{"$patch":"replace","name":"web"}}`,
	`{"metadata":{"$retainKeys":["name"],"name":"web"}}`,
	`{"metadata":{"finalizers":["example.com/c"],"$deleteFromPrimitiveList/finalizers":["example.com/a"]}}`,
	`{"metadata":{"$setElementOrder/finalizers":["example.com/b","example.com/a"]}}`,
	`{"metadata":{"ownerReferences":[{"uid":"rs","$patch":"delete"}]}}`,
	`{"metadata":{"name":null}}`,
	`{"metadata":{"namespace":"other"}}`,
	`{"metadata":{"resourceVersion":"x"}}`,
	`{"metadata":{"creationTimestamp":null,"deletionTimestamp":"2026-01-01T00:00:05Z"}}`,
	`{"metadata":{"labels":{"a":1}}}`,
	`{"metadata":{"bogus":1}}`,
	`{"metadata":[]}`,
	`{"status":{"capacity":{"cpu":"8"},"conditions":[{"type":"Ready","status":"False"}],"addresses":[{"type":"Hostname","address":"n"}]}}`,
	`[]`,
	`null`,
	`{"status":`,
}

// pinnedStatusPatches reads the bodies and field validations of the pinned answers of
// TestStrategicMergePatchAnswers (patch_answers_test.go), so that every one is also taken both
// ways here.
func pinnedStatusPatches(t *testing.T) map[string]fieldValidation {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "patch_answers_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fieldValidation{}
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if ok && fn.Name.Name != "TestStrategicMergePatchAnswers" {
			return false
		}
		lit, ok := n.(*ast.CompositeLit)
		if !ok || len(lit.Elts) < 4 {
			return true
		}
		var s [3]string
		for i := range s {
			b, ok := lit.Elts[i].(*ast.BasicLit)
			if !ok || b.Kind != token.STRING {
				return true
			}
			if s[i], err = strconv.Unquote(b.Value); err != nil {
				t.Fatal(err)
			}
		}
		fv := validationWarn
		switch {
		case strings.Contains(s[1], "Ignore"):
			fv = validationIgnore
		case strings.Contains(s[1], "Strict"):
			fv = validationStrict
		}
		out[s[2]] = fv
		return true
	})
	if len(out) < 40 {
		t.Fatalf("read %d pinned patches, want the table's", len(out))
	}
	return out
}

// randomStatusPatch builds a status patch from parts a kubelet's, a controller's or a broken
// client's patch may hold, as text, so that it may repeat a key.
func randomStatusPatch(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	// some joins up to n members, whose keys repeat only now and then.
	some := func(n int, gen func() string) string {
		var parts []string
		keys := map[string]bool{}
		for range r.Intn(n + 1) {
			part := gen()
			key, _, _ := strings.Cut(part, ":")
			if keys[key] && r.Intn(10) != 0 {
				continue
			}
			keys[key] = true
			parts = append(parts, part)
		}
		return strings.Join(parts, ",")
	}
	cond := func() string {
		return fmt.Sprintf(`{"type":%s,"status":%s%s}`, pick(`"Ready"`, `"ContainersReady"`, `"PodScheduled"`, `"New"`),
			pick(`"True"`, `"False"`, `null`), pick(``, `,"reason":null`, `,"$patch":"delete"`, `,"lastTransitionTime":"2026-01-01T00:00:0`+strconv.Itoa(r.Intn(10))+`Z"`))
	}
	ctr := func() string {
		return fmt.Sprintf(`{"name":%s,"ready":%s,"restartCount":%s%s}`, pick(`"app"`, `"side"`, `"new"`), pick(`true`, `false`),
			pick(`0`, `3`, `null`), pick(``, `,"state":{"running":null,"waiting":{"reason":"X"}}`, `,"allocatedResources":{"cpu":"2"}`))
	}
	// Most members are what a client that knows the type sends; one in eight is odd.
	odd := func() bool { return r.Intn(8) == 0 }
	statusMember := func() string {
		if odd() {
			return pick(`"phase":2`, `"startTime":"bad"`, `"bogus":1`, `"$patch":"replace"`, `"$retainKeys":["phase"]`, `"conditions":[{"type":"Ready","status":"True","bogus":1}]`)
		}
		return pick(
			`"phase":`+pick(`"Running"`, `"Failed"`, `null`),
			`"conditions":[`+some(3, cond)+`]`,
			`"$setElementOrder/conditions":[`+some(4, func() string { return `{"type":` + pick(`"Ready"`, `"PodScheduled"`, `"Initialized"`) + `}` })+`]`,
			`"containerStatuses":[`+some(2, ctr)+`]`,
			`"podIPs":`+pick(`null`, `[{"ip":"10.1.0.6"}]`, `[{"ip":"10.1.0.5","$patch":"delete"}]`),
			`"hostIP":`+pick(`"192.168.0.11"`, `null`),
			`"startTime":`+pick(`"2026-01-01T00:00:08Z"`, `null`),
			`"message":"m"`,
		)
	}
	metaMember := func() string {
		if odd() {
			return pick(`"uid":"other"`, `"labels":{"a":1}`, `"$patch":"replace"`, `"bogus":true`)
		}
		return pick(`"uid":"uid-1"`, `"labels":{"a":`+pick(`"b"`, `null`)+`}`, `"annotations":null`,
			`"finalizers":["example.com/z"]`, `"resourceVersion":"7"`)
	}
	top := func() string {
		if odd() {
			return pick(`"status":`+pick(`null`, `[]`, `3`), `"spec":{"nodeName":"x"}`, `"kind":"Pod"`, `"bogus":{}`, `"$patch":"replace"`)
		}
		return pick(
			`"status":{`+some(4, statusMember)+`}`,
			`"status":{`+some(4, statusMember)+`}`,
			`"metadata":{`+some(3, metaMember)+`}`,
		)
	}
	return `{` + some(3, top) + `}`
}

// TestMergeNamedPartsAsTheWholeObject applies status patches (the edge cases above, every pinned
// answer's, and random ones) to stored pods and a node both ways, converting only the parts the
// patch names (mergeNamedParts) and the whole object, under each field validation, and wants the
// same of each: the error's message and status, the warnings, and the patched object, compared
// with reflect.DeepEqual (nil and empty lists apart, times to the nanosecond and zone), which is
// stricter than its encoding. It also wants the parts' way taken for at least a fifth of
// the patches (about 45% are: many random ones name a part the parts' way leaves to the whole
// object's), and for each of a kubelet's patch shapes.
func TestMergeNamedPartsAsTheWholeObject(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	defer func() { mergeNamedPartsOnly = true }()
	patches := map[string][]fieldValidation{}
	all := []fieldValidation{validationIgnore, validationWarn, validationStrict}
	for _, p := range partsEdgePatches {
		patches[p] = all
	}
	for p, fv := range pinnedStatusPatches(t) {
		patches[p] = append(patches[p], fv)
	}
	r := rand.New(rand.NewSource(22))
	for range 1000 {
		patches[randomStatusPatch(r)] = all
	}
	taken, tried := 0, 0
	for name, stored := range partsStoredObjects() {
		tg := target{res: podsTarget, namespace: "default", name: "web", subresource: "status", manager: "kubelet"}
		if name == "node" {
			tg = target{res: nodesTarget, name: "node-1", subresource: "status", manager: "kubelet"}
		}
		for body, fvs := range patches {
			for _, fv := range fvs {
				if diff := patchBothWays(tg, stored, body, fv); diff != "" {
					t.Errorf("%s, %s, validation %d: %s", name, body, fv, diff)
				}
				p := patchRequest{typ: "application/strategic-merge-patch+json", data: []byte(body)}
				tried++
				if pm, strict, err := p.decodeMap(fv); err == nil && len(strict) == 0 && p.keepsManagedFields(tg, newEntry(stored, nil)) {
					func() {
						defer func() { _ = recover() }()
						if _, ok, _ := mergeNamedParts(tg, stored, p.keepsSpec(tg), pm, fv); ok {
							taken++
						}
					}()
				}
			}
		}
	}
	t.Logf("%d patches, %d of them merged by their parts", tried, taken)
	if taken < tried/5 {
		t.Errorf("%d of %d patches merged by their parts, want at least a fifth", taken, tried)
	}
	// A kubelet's status patches, which this is for, are merged by their parts.
	pod := partsStoredObjects()["written"]
	tg := target{res: podsTarget, namespace: "default", name: "web", subresource: "status", manager: "kubelet"}
	for _, body := range []string{
		`{"metadata":{"uid":"uid-1"},"status":{"phase":"Running"}}`,
		`{"status":{"$setElementOrder/conditions":[{"type":"Ready"},{"type":"PodScheduled"}],"conditions":[{"type":"Ready","status":"True","reason":null}]}}`,
		`{"status":{"containerStatuses":[{"name":"side","state":{"waiting":null,"running":{"startedAt":"2026-01-01T00:00:09Z"}}}]}}`,
	} {
		p := patchRequest{typ: "application/strategic-merge-patch+json", data: []byte(body)}
		pm, _, err := p.decodeMap(validationWarn)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := mergeNamedParts(tg, pod, p.keepsSpec(tg), pm, validationWarn); !ok {
			t.Errorf("%s: merged the whole object, want its parts", body)
		}
	}
}

// patchBothWays applies the strategic merge patch body to a copy of stored as strategicMerge does,
// by the patch's parts (mergeNamedParts) and by the whole object, and says how the two answers
// differ (the error's type and message, a panic's value, the warnings, the patched object
// compared with reflect.DeepEqual), or "" if they do not. It fails if either changed stored.
func patchBothWays(tg target, stored runtime.Object, body string, fv fieldValidation) string {
	defer func() { mergeNamedPartsOnly = true }()
	p := patchRequest{typ: "application/strategic-merge-patch+json", data: []byte(body)}
	var objs [2]runtime.Object
	var warnings [2][]string
	var errs [2]string
	for i, parts := range []bool{true, false} {
		mergeNamedPartsOnly = parts
		old := newEntry(stored.DeepCopyObject(), nil)
		// The merge panics on a $setElementOrder of a list without a merge key, as
		// kube-apiserver's does; the handler answers any panic 500.
		func() {
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Sprintf("panic: %v", v)
				}
			}()
			obj, w, err := p.strategicMerge(tg, old, fv)
			objs[i], warnings[i] = obj, w
			if err != nil {
				errs[i] = fmt.Sprintf("%T %v", err, err)
			}
		}()
		if !reflect.DeepEqual(old.obj, stored) {
			return "the stored object changed"
		}
	}
	if errs[0] != errs[1] {
		return fmt.Sprintf("error %q, the whole object's %q", errs[0], errs[1])
	}
	if diff := cmp.Diff(warnings[1], warnings[0]); diff != "" {
		return "warnings (-whole +parts):\n" + diff
	}
	if !reflect.DeepEqual(objs[0], objs[1]) {
		return "patched (-whole +parts):\n" + cmp.Diff(objs[1], objs[0])
	}
	return ""
}

// FuzzMergeNamedParts wants any strategic merge patch of a pod's status (the edge cases of
// TestMergeNamedPartsAsTheWholeObject to start from) to give the same answer merged by its parts
// as merged whole, under each field validation and for each stored object of those tests.
func FuzzMergeNamedParts(f *testing.F) {
	for _, body := range partsEdgePatches {
		f.Add(body, uint8(0), uint8(0))
	}
	objs := partsStoredObjects()
	names := []string{"written", "in-process", "finalizing", "bare", "node"}
	f.Fuzz(func(t *testing.T, body string, which, validation uint8) {
		name := names[int(which)%len(names)]
		fv := []fieldValidation{validationIgnore, validationWarn, validationStrict}[int(validation)%3]
		tg := target{res: podsTarget, namespace: "default", name: "web", subresource: "status", manager: "kubelet"}
		if name == "node" {
			tg = target{res: nodesTarget, name: "node-1", subresource: "status", manager: "kubelet"}
		}
		if diff := patchBothWays(tg, objs[name], body, fv); diff != "" {
			t.Errorf("%s, %s, validation %d: %s", name, body, fv, diff)
		}
	})
}

// TestConvertedMetaAsTheConverter wants convertedMeta to give, for metadata with every field set
// and with random values (empty and nil maps and lists, times with nanoseconds in other zones,
// nil and set pointers), what the unstructured converter's round trip gives for it without its
// managed fields, and to give a copy that shares nothing with it.
func TestConvertedMetaAsTheConverter(t *testing.T) {
	// A field added to ObjectMeta must be added to convertedMeta and to this test.
	if n := reflect.TypeFor[metav1.ObjectMeta]().NumField(); n != 15 {
		t.Fatalf("metav1.ObjectMeta has %d fields, convertedMeta knows 15", n)
	}
	r := rand.New(rand.NewSource(7))
	strs := func() map[string]string {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		}
		return map[string]string{"a": "b", "c": ""}
	}
	when := func() metav1.Time {
		switch r.Intn(3) {
		case 0:
			return metav1.Time{}
		case 1:
			return metav1.NewTime(time.Date(2026, time.March, 3, 4, 5, 6, 0, time.UTC))
		}
		return metav1.NewTime(time.Date(1999, time.December, 31, 23, 59, 59, 999999999, time.FixedZone("Y", -7*3600)))
	}
	compared := 0
	for range 300 {
		//lint:ignore SA1019 every field of ObjectMeta, the deprecated one too, goes through convertedMeta.
		m := metav1.ObjectMeta{Name: "n", GenerateName: "g-", Namespace: "ns", SelfLink: "/s", UID: "u", ResourceVersion: "9",
			Generation: r.Int63n(3), CreationTimestamp: when(), Labels: strs(), Annotations: strs(),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}
		if r.Intn(2) == 0 {
			d := when()
			if !d.IsZero() {
				m.DeletionTimestamp = &d
			}
			m.DeletionGracePeriodSeconds = ptr.To(r.Int63n(40))
		}
		switch r.Intn(3) {
		case 1:
			m.Finalizers, m.OwnerReferences = []string{}, []metav1.OwnerReference{}
		case 2:
			m.Finalizers = []string{"x", "y"}
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "o", UID: "ou", Controller: ptr.To(r.Intn(2) == 0)}}
		}
		cut := m
		cut.ManagedFields = nil
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cut)
		if err != nil {
			t.Fatal(err)
		}
		var want metav1.ObjectMeta
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := convertedMeta(&m)
		if !ok {
			t.Fatalf("convertedMeta(%+v) refused", m)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("convertedMeta(%+v):\n%s", m, cmp.Diff(want, got))
		}
		if len(got.Labels) > 0 {
			got.Labels["a"] = "changed"
			if m.Labels["a"] != "b" {
				t.Fatal("convertedMeta shares the labels")
			}
		}
		if len(got.OwnerReferences) > 0 {
			*got.OwnerReferences[0].Controller = !*got.OwnerReferences[0].Controller
			if *got.OwnerReferences[0].Controller == *m.OwnerReferences[0].Controller {
				t.Fatal("convertedMeta shares the owner references")
			}
		}
		compared++
	}
	if compared == 0 {
		t.Fatal("nothing compared")
	}
	zero := metav1.Time{}
	if _, ok := convertedMeta(&metav1.ObjectMeta{DeletionTimestamp: &zero}); ok {
		t.Error("convertedMeta took a deletion timestamp of zero, whose round trip it does not reproduce")
	}
}
