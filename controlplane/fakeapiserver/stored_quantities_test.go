package fakeapiserver_test

import (
	"net/http"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestStoredPodEncodesWithoutWrites: a stored object is shared by every reader (lists, watches,
// the in-process watch that hands it to a kubelet), so encoding it must only read it. A
// Quantity's protobuf encoding calls its String, which caches the string in the Quantity when
// it has none (a divisor left out, a value not spelt canonically). Every write measures the
// object's protobuf size (checkStoredSize) on the writer's own object before it is stored,
// which caches each such string; this test fails if that stops.
func TestStoredPodEncodesWithoutWrites(t *testing.T) {
	srv := newServer(t, testOptions())
	h := srv.Handler()
	body := `{"metadata":{"name":"p"},"spec":{
	  "containers":[{"name":"c","image":"busybox","env":[
	    {"name":"CPU","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu"}}},
	    {"name":"MEM","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":"1024Ki"}}}]}],
	  "volumes":[{"name":"scratch","emptyDir":{"sizeLimit":"1024Mi"}},
	    {"name":"info","downwardAPI":{"items":[{"path":"cpu","resourceFieldRef":{"containerName":"c","resource":"requests.cpu"}}]}}]}}`
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", body); w.Code != http.StatusCreated {
		t.Fatalf("create pod = %d %s", w.Code, w.Body.String())
	}
	// Object hands out a deep copy, which keeps what the stored object caches.
	before, ok := srv.Object("pods", "default", "p")
	if !ok {
		t.Fatal("pod p not stored")
	}
	if w := do(h, "GET", "/api/v1/namespaces/default/pods/p", "", "", "Accept", "application/vnd.kubernetes.protobuf"); w.Code != http.StatusOK {
		t.Fatalf("get pod in protobuf = %d", w.Code)
	}
	if after, _ := srv.Object("pods", "default", "p"); !reflect.DeepEqual(before.(*v1.Pod), after.(*v1.Pod)) {
		t.Errorf("encoding the stored pod in protobuf wrote into it")
	}
}
