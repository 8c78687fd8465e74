package staticpod

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
)

// sharedQuantitiesManifest has every quantity a pod's encoders reach through a pointer, in forms
// that leave a parsed Quantity without its cached string: a divisor left out (zero) and values
// not spelt canonically ("1024Ki" is "1Mi", "1024Mi" is "1Gi"). Canonical values such as "64Mi"
// parse without it too.
const sharedQuantitiesManifest = `
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: default}
spec:
  containers:
  - name: c
    image: busybox
    resources: {limits: {cpu: 1000m, memory: 1024Mi}}
    env:
    - {name: CPU, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
    - {name: MEM, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1024Ki}}}
  volumes:
  - {name: scratch, emptyDir: {sizeLimit: 1024Mi}}
  - name: info
    downwardAPI: {items: [{path: cpu, resourceFieldRef: {containerName: c, resource: requests.cpu}}]}
  - name: proj
    projected: {sources: [{downwardAPI: {items: [{path: mem, resourceFieldRef: {containerName: c, resource: requests.memory, divisor: 1024Ki}}]}}]}
`

// TestDecodedPodEncodesWithoutWrites: a decoded pod is shared read-only from PodConfig on (the
// pod manager, the kubelet server's handlers, the mirror pod, which shares its spec). A
// Quantity's String, which its protobuf encoding calls, caches the canonical string in the
// Quantity when it has none, a write: the mirror pod's create, in protobuf, would write into the
// static pod while a handler encodes it. The decoder leaves every such quantity with its string
// cached, so that encoding the pod changes nothing in it.
func TestDecodedPodEncodesWithoutWrites(t *testing.T) {
	pod, _, err := DecodePod([]byte(sharedQuantitiesManifest), Options{NodeName: "node1", Source: "f", IsFile: true})
	if err != nil {
		t.Fatal(err)
	}
	before := pod.DeepCopy()
	if _, err := pod.Marshal(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, pod) {
		t.Errorf("encoding the decoded pod in protobuf wrote into it")
	}
}

// TestDecodedPodSharedByEncoders is the race itself: one goroutine encodes the pod in protobuf (a
// mirror pod's create) while another encodes it in JSON (the kubelet server's /pods). The race
// detector fails it at the racing write; without -race two concurrent accesses cannot be seen,
// but the write the race needs can, because it stays: a Quantity's String caches its string in
// the Quantity. So the test wants the shared pod unchanged after both encoders ran, and each
// encoding equal to what a private copy encodes alone (a torn read would differ).
func TestDecodedPodSharedByEncoders(t *testing.T) {
	pod, _, err := DecodePod([]byte(sharedQuantitiesManifest), Options{NodeName: "node1", Source: "f", IsFile: true})
	if err != nil {
		t.Fatal(err)
	}
	before := pod.DeepCopy()
	alone := pod.DeepCopy()
	wantProto, err := alone.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(alone)
	if err != nil {
		t.Fatal(err)
	}
	mirror := *pod // the mirror pod shares the static pod's spec
	var gotProto, gotJSON []byte
	var wg sync.WaitGroup
	wg.Go(func() {
		var err error
		if gotProto, err = mirror.Marshal(); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		var err error
		if gotJSON, err = json.Marshal(pod); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if !reflect.DeepEqual(before, pod) {
		t.Errorf("the encoders wrote into the shared pod")
	}
	if !bytes.Equal(gotProto, wantProto) {
		t.Errorf("the mirror pod's protobuf encoding differs from a private copy's")
	}
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("the pod's JSON encoding differs from a private copy's")
	}
}
