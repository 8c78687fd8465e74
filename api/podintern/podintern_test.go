package podintern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// templatePodJSON is a pod as a ReplicaSet's controller makes it and the kubelet's status writes
// leave it, encoded as the API server sends it: what is the pod's own (its name, UID, IP, the
// token volume's name) comes from the arguments.
func templatePodJSON(name, uid, ip string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%[1]q,"generateName":"pause-5d8f7c6b9d-",
"namespace":"default","uid":%[2]q,"resourceVersion":"42","labels":{"app":"pause","pod-template-hash":"5d8f7c6b9d"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"pause-5d8f7c6b9d","uid":"6f1c2b8e","controller":true}],
"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-28T09:00:00Z",
"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{}}}},
{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-28T09:00:01Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:status":{"f:podIP":{},"f:podIPs":{"k:{\"ip\":\"%[3]s\"}":{}}}},"subresource":"status"}]},
"spec":{"volumes":[{"name":"kube-api-access-%[1]s","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}]}}],
"containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10.1","resources":{},
"volumeMounts":[{"name":"kube-api-access-%[1]s","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],
"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],
"restartPolicy":"Always","dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default",
"nodeName":"sim-00","schedulerName":"default-scheduler",
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-28T09:00:01Z"}],
"hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"podIP":%[3]q,"qosClass":"BestEffort",
"containerStatuses":[{"name":"pause","state":{"running":{"startedAt":"2026-11-28T09:00:01Z"}},"ready":true,"restartCount":0,
"image":"registry.k8s.io/pause:3.10.1","imageID":"registry.k8s.io/pause@sha256:ee6521f2","containerID":"containerd://%[2]s","started":true}]}}`,
		name, uid, ip)
}

func decodeTemplatePod(t *testing.T, name, uid, ip string) *v1.Pod {
	t.Helper()
	pod := &v1.Pod{}
	if err := json.Unmarshal(templatePodJSON(name, uid, ip), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// decodeTemplatePodProtobuf decodes the template pod from its protobuf encoding, as the kubelet's
// client does with kube-apiserver's answers: every string and byte slice its own copy.
func decodeTemplatePodProtobuf(t *testing.T, name, uid, ip string) *v1.Pod {
	t.Helper()
	data, err := decodeTemplatePod(t, name, uid, ip).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{}
	if err := pod.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return pod
}

// sameString reports whether a and b are the same bytes in memory, not just equal.
func sameString(a, b string) bool {
	return a == b && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

// TestInternerSharesWhatPodsRepeat: two pods of one template, decoded apart, share the strings and
// the managed fields' encoding they have in common once interned, and are equal to what was
// decoded: interning changes where values live, never a value.
// Pods decoded from protobuf, the kubelet's wire, are interned the same way.
func TestInternerSharesWhatPodsRepeat(t *testing.T) {
	for name, decode := range map[string]func(t *testing.T, name, uid, ip string) *v1.Pod{
		"JSON": decodeTemplatePod, "protobuf": decodeTemplatePodProtobuf,
	} {
		t.Run(name, func(t *testing.T) { testInternerSharesWhatPodsRepeat(t, decode) })
	}
}

func testInternerSharesWhatPodsRepeat(t *testing.T, decodeTemplatePod func(t *testing.T, name, uid, ip string) *v1.Pod) {
	a, b := decodeTemplatePod(t, "pause-1", "uid-1", "10.1.0.1"), decodeTemplatePod(t, "pause-2", "uid-2", "10.1.0.2")
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	in := New()
	in.Pod(a)
	in.Pod(b)
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Errorf("interning changed the first pod (-decoded +interned):\n%s", diff)
	}
	if diff := cmp.Diff(wantB, b); diff != "" {
		t.Errorf("interning changed the second pod (-decoded +interned):\n%s", diff)
	}
	shared := []struct {
		field string
		a, b  string
	}{
		{"metadata.namespace", a.Namespace, b.Namespace},
		{"metadata.generateName", a.GenerateName, b.GenerateName},
		{"metadata.labels[pod-template-hash]", a.Labels["pod-template-hash"], b.Labels["pod-template-hash"]},
		{"metadata.ownerReferences[0].name", a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		{"metadata.ownerReferences[0].uid", string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID)},
		{"metadata.managedFields[1].manager", a.ManagedFields[1].Manager, b.ManagedFields[1].Manager},
		{"spec.nodeName", a.Spec.NodeName, b.Spec.NodeName},
		{"spec.containers[0].image", a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		{"spec.containers[0].volumeMounts[0].mountPath", a.Spec.Containers[0].VolumeMounts[0].MountPath, b.Spec.Containers[0].VolumeMounts[0].MountPath},
		{"spec.volumes[0].projected.sources[1].configMap.name", a.Spec.Volumes[0].Projected.Sources[1].ConfigMap.Name, b.Spec.Volumes[0].Projected.Sources[1].ConfigMap.Name},
		{"spec.tolerations[0].key", a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key},
		{"status.conditions[0].type", string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)},
		{"status.hostIP", a.Status.HostIP, b.Status.HostIP},
		{"status.containerStatuses[0].imageID", a.Status.ContainerStatuses[0].ImageID, b.Status.ContainerStatuses[0].ImageID},
	}
	for _, s := range shared {
		if !sameString(s.a, s.b) {
			t.Errorf("%s: the two pods keep a copy each of %q, want one shared", s.field, s.a)
		}
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if k == k2 && !sameString(k, k2) {
				t.Errorf("label key %q: a copy each, want one shared", k)
			}
		}
	}
	if ra, rb := a.ManagedFields[0].FieldsV1.Raw, b.ManagedFields[0].FieldsV1.Raw; &ra[0] != &rb[0] {
		t.Errorf("the controller manager's managed fields: a copy each of %s, want one shared", ra)
	}
	if ra, rb := a.ManagedFields[1].FieldsV1.Raw, b.ManagedFields[1].FieldsV1.Raw; &ra[0] == &rb[0] {
		t.Errorf("the kubelet's managed fields of two pods with different IPs share one encoding: %s", ra)
	}
	// A second version of a pod shares its own values with the first: the token volume's name.
	a2 := decodeTemplatePod(t, "pause-1", "uid-1", "10.1.0.1")
	in.Pod(a2)
	if !sameString(a.Spec.Volumes[0].Name, a2.Spec.Volumes[0].Name) {
		t.Errorf("two versions of a pod keep a copy each of its volume name %q", a.Spec.Volumes[0].Name)
	}
}

// TestInternerBounded: values that no pod repeats do not make the table grow beyond two
// generations, and a value in use in every generation keeps its one copy.
func TestInternerBounded(t *testing.T) {
	in := New()
	kept := in.str(string([]byte("registry.k8s.io/pause:3.10.1")))
	for i := range 5 * internGeneration {
		in.str(fmt.Sprintf("pod-%d", i))
		if i%(internGeneration/2) == 0 {
			if got := in.str(string([]byte("registry.k8s.io/pause:3.10.1"))); !sameString(got, kept) {
				t.Fatalf("after %d values a value used in every generation was copied again", i)
			}
		}
		if n := len(in.cur) + len(in.prev); n > 2*internGeneration {
			t.Fatalf("after %d values the table holds %d, want at most %d", i+1, n, 2*internGeneration)
		}
	}
	for i := range 5 * internRawGeneration {
		in.raw(fmt.Appendf(nil, `{"f:status":{"f:podIP":{"k:{\"ip\":\"10.1.%d\"}":{}}}}`, i))
		if n := len(in.curRaw) + len(in.prevRaw); n > 2*internRawGeneration {
			t.Fatalf("after %d encodings the table holds %d, want at most %d", i+1, n, 2*internRawGeneration)
		}
	}
}

// TestInternerCapsValueSize: the table keeps no string or encoding above its size cap, so that
// a large value one pod carries (an annotation, a managed fields entry of a large template) is
// not held for a generation after the pod is gone; values at the cap are still shared.
func TestInternerCapsValueSize(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		share bool
	}{
		{"a string at the cap", internMaxString, true},
		{"a string above the cap", internMaxString + 1, false},
		{"a megabyte string", 1 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := New()
			value := strings.Repeat("x", tt.n)
			a := in.str(strings.Clone(value))
			b := in.str(strings.Clone(value))
			if a != value || b != value {
				t.Fatal("interning changed the value")
			}
			if got := sameString(a, b); got != tt.share {
				t.Errorf("two equal strings of %d bytes share one copy: %v, want %v", tt.n, got, tt.share)
			}
			if _, kept := in.cur[value]; kept != tt.share {
				t.Errorf("the table keeps the string of %d bytes: %v, want %v", tt.n, kept, tt.share)
			}
		})
	}
	raws := []struct {
		name  string
		n     int
		share bool
	}{
		{"an encoding at the cap", internMaxRaw, true},
		{"an encoding above the cap", internMaxRaw + 1, false},
	}
	for _, tt := range raws {
		t.Run(tt.name, func(t *testing.T) {
			in := New()
			value := bytes.Repeat([]byte("x"), tt.n)
			a := in.raw(bytes.Clone(value))
			b := in.raw(bytes.Clone(value))
			if !bytes.Equal(a, value) || !bytes.Equal(b, value) {
				t.Fatal("interning changed the encoding")
			}
			if got := &a[0] == &b[0]; got != tt.share {
				t.Errorf("two equal encodings of %d bytes share one copy: %v, want %v", tt.n, got, tt.share)
			}
			if kept := len(in.curRaw) > 0; kept != tt.share {
				t.Errorf("the table keeps the encoding of %d bytes: %v, want %v", tt.n, kept, tt.share)
			}
		})
	}
	// Through a pod: an annotation above the cap stays each pod's own, the labels are shared.
	big := strings.Repeat("y", internMaxString+1)
	a, b := decodeTemplatePod(t, "pause-1", "uid-1", "10.1.0.1"), decodeTemplatePod(t, "pause-2", "uid-2", "10.1.0.2")
	a.Annotations = map[string]string{"config": strings.Clone(big)}
	b.Annotations = map[string]string{"config": strings.Clone(big)}
	in := New()
	in.Pod(a)
	in.Pod(b)
	if sameString(a.Annotations["config"], b.Annotations["config"]) {
		t.Error("an annotation above the cap is shared by two pods, want a copy each")
	}
	if a.Annotations["config"] != big || b.Annotations["config"] != big {
		t.Error("interning changed an annotation above the cap")
	}
	if !sameString(a.Labels["app"], b.Labels["app"]) {
		t.Error("the pods' labels are not shared")
	}
}

// FuzzInterner: whatever pod a watch decodes, interning it (Pod, and StoredPod) panics on no
// missing field and changes no value.
func FuzzInterner(f *testing.F) {
	f.Add(templatePodJSON("pause-1", "uid-1", "10.1.0.1"))
	f.Add([]byte(`{"spec":{"volumes":[{"projected":{"sources":[{}]}},{"configMap":{}},{"secret":{}}],"initContainers":[{"env":[{}],"ports":[{}]}]}}`))
	f.Add([]byte(`{"status":{"initContainerStatuses":[{"state":{"waiting":{}},"lastState":{"terminated":{}}}],"ephemeralContainerStatuses":[{"state":{"terminated":{}}}]}}`))
	f.Add([]byte(`{"metadata":{"managedFields":[{"fieldsV1":{}},{}],"annotations":{"a":""},"finalizers":["x"]}}`))
	in := New()
	f.Fuzz(func(t *testing.T, data []byte) {
		pod := &v1.Pod{}
		if json.Unmarshal(data, pod) != nil {
			return
		}
		want := pod.DeepCopy()
		stored := pod.DeepCopy()
		in.Pod(pod)
		if diff := cmp.Diff(want, pod); diff != "" {
			t.Errorf("interning changed the pod (-decoded +interned):\n%s", diff)
		}
		in.StoredPod(stored)
		if diff := cmp.Diff(want, stored); diff != "" {
			t.Errorf("interning a stored pod changed it (-decoded +interned):\n%s", diff)
		}
	})
}

// benchPodJSON is the i-th of a stream of distinct pods of one template: each its own name, UID,
// token volume and IP, so that its kubelet entry's encoding is its own too.
func benchPodJSON(i int) []byte {
	return templatePodJSON(fmt.Sprintf("pause-%d", i), fmt.Sprintf("uid-%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
}

// benchChunk is how many pods BenchmarkInternPod decodes, untimed, before it interns them. The
// api source's runner interns a pod right after its decode, while its memory is in the CPU's
// caches: a few pods at a time keep them there (16 pods, about 100 KB; 4,096 at a time measured
// twice the time, for cache misses the runner does not have), and the stop and start of the timer
// around each chunk stay out of the time.
const benchChunk = 16

// BenchmarkInternPod measures what interning adds to a watch event's decode: Table.Pod on a
// stream of distinct pods, decoded beforehand and untimed, as a node's watch delivers them (the
// template's values hit, each pod's own token volume name and kubelet entry miss, and the tables'
// generations turn over as they would). BenchmarkDecodePod measures the decode of the same pods;
// the share is the ratio of the two.
func BenchmarkInternPod(b *testing.B) {
	in := New()
	pods := make([]*v1.Pod, 0, benchChunk)
	b.ReportAllocs()
	for i := 0; i < b.N; {
		b.StopTimer()
		pods = pods[:0]
		for j := i; j < b.N && j < i+benchChunk; j++ {
			pod := &v1.Pod{}
			if err := json.Unmarshal(benchPodJSON(j), pod); err != nil {
				b.Fatal(err)
			}
			pods = append(pods, pod)
		}
		b.StartTimer()
		for _, pod := range pods {
			in.Pod(pod)
		}
		i += len(pods)
	}
}

// BenchmarkDecodePod measures the JSON decode of the pods BenchmarkInternPod interns, the cost
// interning's is compared with.
func BenchmarkDecodePod(b *testing.B) {
	data := make([][]byte, benchChunk)
	for i := range data {
		data[i] = benchPodJSON(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		pod := &v1.Pod{}
		if err := json.Unmarshal(data[i%len(data)], pod); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStoredPodWritesNothingShared: an API server's new version of a pod may share its spec, its
// maps and its managed fields with the stored version; StoredPod shares the new version's
// managed fields' encodings with an equal pod's, and leaves everything the two versions share as
// it was, down to the managed fields entries of the stored version.
func TestStoredPodWritesNothingShared(t *testing.T) {
	in := New()
	other := decodeTemplatePod(t, "pause-0", "uid-0", "10.1.0.1") // the same kubelet entry: same IP
	in.StoredPod(other)
	stored := decodeTemplatePod(t, "pause-1", "uid-1", "10.1.0.1")
	want := stored.DeepCopy()
	storedEntries := stored.ManagedFields
	storedRaw := &stored.ManagedFields[0].FieldsV1.Raw[0]
	next := stored.DeepCopy()
	next.Spec = stored.Spec
	next.ObjectMeta = stored.ObjectMeta // maps and managed fields shared with the stored version
	next.Status.Phase = v1.PodPhase(string([]byte("Running")))
	in.StoredPod(next)
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("the stored version changed (-before +after):\n%s", diff)
	}
	if &storedEntries[0] != &stored.ManagedFields[0] || &stored.ManagedFields[0].FieldsV1.Raw[0] != storedRaw {
		t.Error("the stored version's managed fields were replaced")
	}
	if diff := cmp.Diff(want, next); diff != "" {
		t.Errorf("the new version's values changed (-want +got):\n%s", diff)
	}
	for i := range next.ManagedFields {
		if got, shared := &next.ManagedFields[i].FieldsV1.Raw[0], &other.ManagedFields[i].FieldsV1.Raw[0]; got != shared {
			t.Errorf("managed fields entry %d (%s): a copy of its own, want the equal pod's", i, next.ManagedFields[i].Manager)
		}
	}
	if !sameString(string(next.Status.Phase), string(other.Status.Phase)) {
		t.Error("status.phase: a copy of its own, want the equal pod's")
	}
	// A version whose encodings are all the table's already keeps its slice.
	again := next.DeepCopy()
	again.ManagedFields = next.ManagedFields
	in.StoredPod(again)
	if &again.ManagedFields[0] != &next.ManagedFields[0] {
		t.Error("managed fields already interned were copied again")
	}
}

// BenchmarkDecodePodProtobuf is BenchmarkDecodePod from the pods' protobuf encodings, the
// kubelet's wire: the decode the interning's cost compares with there.
func BenchmarkDecodePodProtobuf(b *testing.B) {
	data := make([][]byte, benchChunk)
	for i := range data {
		pod := &v1.Pod{}
		if err := json.Unmarshal(benchPodJSON(i), pod); err != nil {
			b.Fatal(err)
		}
		raw, err := pod.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		data[i] = raw
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		pod := &v1.Pod{}
		if err := pod.Unmarshal(data[i%len(data)]); err != nil {
			b.Fatal(err)
		}
	}
}

// kubeletEventJSON is an event as a kubelet writes it and the API server stores it: what is the
// pod's own (the event's name, the pod's name and UID) comes from the arguments.
func kubeletEventJSON(name, pod, uid string) []byte {
	return fmt.Appendf(nil, `{"metadata":{"name":%[1]q,"namespace":"default","resourceVersion":"7",
"managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-28T09:00:01Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:count":{},"f:firstTimestamp":{},"f:involvedObject":{},"f:lastTimestamp":{},"f:message":{},"f:reason":{},
"f:reportingComponent":{},"f:reportingInstance":{},"f:source":{"f:component":{},"f:host":{}},"f:type":{}}}]},
"involvedObject":{"kind":"Pod","namespace":"default","name":%[2]q,"uid":%[3]q,"apiVersion":"v1","resourceVersion":"5",
"fieldPath":"spec.containers{pause}"},"reason":"Started","message":"Started container pause",
"source":{"component":"kubelet","host":"sim-00"},"firstTimestamp":"2026-11-28T09:00:01Z","lastTimestamp":"2026-11-28T09:00:01Z",
"count":1,"type":"Normal","eventTime":null,"reportingComponent":"kubelet","reportingInstance":"sim-00"}`, name, pod, uid)
}

func decodeKubeletEvent(t *testing.T, name, pod, uid string) *v1.Event {
	t.Helper()
	ev := &v1.Event{}
	if err := json.Unmarshal(kubeletEventJSON(name, pod, uid), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestStoredEventSharesWhatEventsRepeat: two events of one kind about two pods, decoded apart,
// share the strings and the managed fields' encoding they have in common once interned, keep
// the values they were decoded with, and what is one event's or one pod's own stays its own. A
// later version that shares the stored one's managed fields gets its own slice; the stored
// version is not written.
func TestStoredEventSharesWhatEventsRepeat(t *testing.T) {
	in := New()
	a, b := decodeKubeletEvent(t, "pause-0.1", "pause-0", "uid-0"), decodeKubeletEvent(t, "pause-1.1", "pause-1", "uid-1")
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	in.StoredEvent(a)
	in.StoredEvent(b)
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Errorf("first event's values changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantB, b); diff != "" {
		t.Errorf("second event's values changed (-want +got):\n%s", diff)
	}
	for name, pair := range map[string][2]string{
		"namespace":                {a.Namespace, b.Namespace},
		"involvedObject.kind":      {a.InvolvedObject.Kind, b.InvolvedObject.Kind},
		"involvedObject.namespace": {a.InvolvedObject.Namespace, b.InvolvedObject.Namespace},
		"involvedObject.fieldPath": {a.InvolvedObject.FieldPath, b.InvolvedObject.FieldPath},
		"reason":                   {a.Reason, b.Reason},
		"message":                  {a.Message, b.Message},
		"type":                     {a.Type, b.Type},
		"source.component":         {a.Source.Component, b.Source.Component},
		"source.host":              {a.Source.Host, b.Source.Host},
		"reportingController":      {a.ReportingController, b.ReportingController},
		"reportingInstance":        {a.ReportingInstance, b.ReportingInstance},
	} {
		if !sameString(pair[0], pair[1]) {
			t.Errorf("%s %q: a copy of its own in each event, want one shared", name, pair[0])
		}
	}
	if &a.ManagedFields[0].FieldsV1.Raw[0] != &b.ManagedFields[0].FieldsV1.Raw[0] {
		t.Error("the managed fields' encoding: a copy of its own in each event, want one shared")
	}
	// Another event about the first pod: the pod's name and UID stay as decoded.
	again := decodeKubeletEvent(t, "pause-0.2", "pause-0", "uid-0")
	in.StoredEvent(again)
	if sameString(again.InvolvedObject.Name, a.InvolvedObject.Name) || sameString(string(again.InvolvedObject.UID), string(a.InvolvedObject.UID)) {
		t.Error("the involved object's name or UID, one pod's own, was interned")
	}

	// A patch of the count: the new version shares the stored one's managed fields slice.
	stored := decodeKubeletEvent(t, "pause-2.1", "pause-2", "uid-2")
	storedEntries, storedRaw := stored.ManagedFields, &stored.ManagedFields[0].FieldsV1.Raw[0]
	wantStored := stored.DeepCopy()
	next := *stored
	next.Count = 2
	in.StoredEvent(&next)
	if diff := cmp.Diff(wantStored, stored); diff != "" {
		t.Errorf("the stored version changed (-before +after):\n%s", diff)
	}
	if &storedEntries[0] != &stored.ManagedFields[0] || &stored.ManagedFields[0].FieldsV1.Raw[0] != storedRaw {
		t.Error("the stored version's managed fields were replaced")
	}
	if &next.ManagedFields[0].FieldsV1.Raw[0] != &a.ManagedFields[0].FieldsV1.Raw[0] {
		t.Error("the new version's managed fields: a copy of its own, want the table's")
	}
}

// TestStoredEventsShareEqualManagedFields: events stored one after another whose managed fields
// are equal, times included, share one list; an event whose time (or field set) differs keeps
// its own, which the next equal ones share. Every event keeps the values it was decoded with,
// and a list once stored is not written.
func TestStoredEventsShareEqualManagedFields(t *testing.T) {
	in := New()
	decodeAt := func(name, at string) *v1.Event {
		raw := bytes.ReplaceAll(kubeletEventJSON(name, name, "uid-"+name), []byte(`"time":"2026-11-28T09:00:01Z"`), []byte(`"time":"`+at+`"`))
		ev := &v1.Event{}
		if err := json.Unmarshal(raw, ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	same := func(a, b *v1.Event) bool { return &a.ManagedFields[0] == &b.ManagedFields[0] }
	var events, wants []*v1.Event
	store := func(name, at string) *v1.Event {
		ev := decodeAt(name, at)
		wants = append(wants, ev.DeepCopy())
		in.StoredEvent(ev)
		events = append(events, ev)
		return ev
	}
	a := store("a", "2026-11-28T09:00:01Z")
	b := store("b", "2026-11-28T09:00:01Z")
	c := store("c", "2026-11-28T09:00:02Z")
	d := store("d", "2026-11-28T09:00:02Z")
	if !same(a, b) {
		t.Error("two events with equal managed fields: a list of their own each, want one shared")
	}
	if same(b, c) || c.ManagedFields[0].Time.Equal(b.ManagedFields[0].Time) {
		t.Error("an event of another second shares the list of the one before")
	}
	if !same(c, d) {
		t.Error("the events of the next second: a list of their own each, want one shared")
	}
	// A field set of another shape keeps its own list.
	other := decodeAt("e", "2026-11-28T09:00:02Z")
	other.ManagedFields[0].FieldsV1 = &metav1.FieldsV1{Raw: []byte(`{"f:count":{}}`)}
	wants, events = append(wants, other.DeepCopy()), append(events, other)
	in.StoredEvent(other)
	if same(other, d) {
		t.Error("an event with another field set shares the list of the one before")
	}
	for i, ev := range events {
		if diff := cmp.Diff(wants[i], ev); diff != "" {
			t.Errorf("event %s's values changed (-want +got):\n%s", ev.Name, diff)
		}
	}
	// No event sees another's list: equal lists hold equal values.
	if diff := cmp.Diff(wants[0].ManagedFields, b.ManagedFields); diff != "" {
		t.Errorf("the shared list (-first event's +second's):\n%s", diff)
	}
}

// TestInternerFitsEncodings: an encoding the table keeps, or hands back as the caller's own
// (above the size cap), sits in an array of about its length, whatever the encoder left in the
// array it came in: a stored object keeps its managed fields' arrays for as long as it lives.
// The values stay as they were, an encoding that already fits is kept as it came, and equal
// encodings after the first share its fitted copy.
func TestInternerFitsEncodings(t *testing.T) {
	withSpare := func(n, spare int) []byte {
		b := make([]byte, n, n+spare)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		return b
	}
	tests := []struct {
		name    string
		n       int
		spare   int
		wantOwn bool // the value handed back is the caller's array
	}{
		{"an encoder's doubled buffer", 659, 1152 - 659, false},
		{"an array of its length", 659, 0, true},
		{"a few spare bytes", 659, 32, true},
		{"an encoding above the cap with spare room", internMaxRaw + 1, internMaxRaw, false},
		{"an encoding above the cap that fits", internMaxRaw + 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := New()
			b := withSpare(tt.n, tt.spare)
			want := bytes.Clone(b)
			got := in.raw(b)
			if !bytes.Equal(got, want) || !bytes.Equal(b, want) {
				t.Fatal("interning changed the encoding")
			}
			if own := &got[0] == &b[0]; own != tt.wantOwn {
				t.Errorf("handed back the caller's array: %v, want %v", own, tt.wantOwn)
			}
			// A copy is rounded up to the allocator's size class: at most a sixth more.
			if spare := cap(got) - len(got); spare > 32 && spare > len(got)/6 {
				t.Errorf("the encoding of %d bytes kept %d spare bytes", len(got), spare)
			}
			if tt.n > internMaxRaw {
				return
			}
			again := in.raw(withSpare(tt.n, tt.spare))
			if &again[0] != &got[0] {
				t.Error("an equal encoding after the first: a copy of its own, want the table's")
			}
		})
	}
}

// TestStoredFieldsShareEncodings: the managed fields of two objects of another kind (two nodes'
// leases, renewed by their kubelets) share their equal encodings once stored, keep their values,
// and the lists they came in are not written.
func TestStoredFieldsShareEncodings(t *testing.T) {
	lease := func(manager string) []metav1.ManagedFieldsEntry {
		at := metav1.NewTime(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
		raw := make([]byte, 0, 256)
		raw = append(raw, `{"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`...)
		return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1",
			Time: &at, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}}
	}
	in := New()
	a, b := lease("kubelet"), lease("kubelet")
	wantA, wantB := a[0].DeepCopy(), b[0].DeepCopy()
	rawA, rawB := a[0].FieldsV1.Raw, b[0].FieldsV1.Raw
	gotA, gotB := in.StoredFields(a), in.StoredFields(b)
	if &gotA[0].FieldsV1.Raw[0] != &gotB[0].FieldsV1.Raw[0] {
		t.Error("two leases' equal encodings: a copy each, want one shared")
	}
	if diff := cmp.Diff([]metav1.ManagedFieldsEntry{*wantA}, gotA); diff != "" {
		t.Errorf("the first lease's managed fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metav1.ManagedFieldsEntry{*wantB}, gotB); diff != "" {
		t.Errorf("the second lease's managed fields (-want +got):\n%s", diff)
	}
	if &a[0].FieldsV1.Raw[0] != &rawA[0] || &b[0].FieldsV1.Raw[0] != &rawB[0] {
		t.Error("StoredFields wrote into the list it was given")
	}
}
