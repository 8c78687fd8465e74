package fakeapiserver_test

import (
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentReadersShareQuantities: two readers that encode one stored pod in protobuf at
// once only read it. A Quantity's protobuf encoding calls its String, which caches the string in
// the Quantity when it has none (a divisor left out, a value not spelt canonically): readers
// encoding at once would both write it. Every write measures the object's protobuf size
// (checkStoredSize) on the writer's own object before it is stored, which caches each string an
// encoder reaches through a pointer; this test, under -race, fails if that stops.
func TestConcurrentReadersShareQuantities(t *testing.T) {
	srv := newServer(t, testOptions())
	h := srv.Handler()
	body := `{"metadata":{"name":"p"},"spec":{
	  "containers":[{"name":"c","image":"busybox","env":[
	    {"name":"CPU","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu"}}},
	    {"name":"MEM","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":"1024Ki"}}}]}],
	  "volumes":[{"name":"scratch","emptyDir":{"sizeLimit":"1024Mi"}},
	    {"name":"info","downwardAPI":{"items":[{"path":"cpu","resourceFieldRef":{"containerName":"c","resource":"requests.cpu"}}]}},
	    {"name":"proj","projected":{"sources":[{"downwardAPI":{"items":[{"path":"mem","resourceFieldRef":{"containerName":"c","resource":"requests.memory","divisor":"1048576"}}]}}]}}]}}`
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", body); w.Code != http.StatusCreated {
		t.Fatalf("create pod = %d %s", w.Code, w.Body.String())
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			w := do(h, "GET", "/api/v1/namespaces/default/pods/p", "", "", "Accept", "application/vnd.kubernetes.protobuf")
			if w.Code != http.StatusOK {
				t.Errorf("get pod in protobuf = %d", w.Code)
			}
		})
	}
	wg.Wait()
}
