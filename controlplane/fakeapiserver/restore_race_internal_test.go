package fakeapiserver

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// A pod restored from the data directory whose emptyDir sizeLimit ("8Gi") decodes without its
// cached string: the first status write after the restart runs checkStoredSize on next, whose
// spec is now the stored version's (keepStoredSpec), so Quantity.String() caches into the stored
// object while an in-process reader deep-copies it. The race detector sees it only when the
// reader's copy and the write overlap in time, so the restart is tried several times (under
// -race; without it the test checks only that the writes succeed).
func TestRestoredPodStatusWriteBesideReader(t *testing.T) {
	for range 10 {
		restoredStatusWriteBesideReader(t)
	}
}

func restoredStatusWriteBesideReader(t *testing.T) {
	dir := t.TempDir()
	open := func() *Server {
		s, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	const body = `{"metadata":{"name":"p","namespace":"default"},"spec":{"nodeName":"n","containers":[{"name":"c","image":"i"}],
"volumes":[{"name":"v","emptyDir":{"sizeLimit":"8Gi"}}]}}`
	if w := wireDo(s.Handler(), context.Background(), "POST", "/api/v1/namespaces/default/pods", "application/json", body, ""); w.Code != 201 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	_ = s.Close()
	s = open()
	defer s.Close()
	d := s.Direct("kubelet/v1.35.4")
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			if _, err := d.GetPod(ctx, "default", "p"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 5 {
		patch := fmt.Sprintf(`{"status":{"message":"m%d"}}`, i)
		if _, err := d.PatchPodStatus(ctx, "default", "p", types.StrategicMergePatchType, []byte(patch)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
