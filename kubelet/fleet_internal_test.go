package kubelet

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/sources"
)

// TestPodWatchReturnsItsRunnersError wants a fleet's pod watch whose runner cannot start to
// return that error, with its node informer and object watches stopped: the fleet's group
// ends on it. Shutting the informer down before cancelling its context waited forever.
func TestPodWatchReturnsItsRunnersError(t *testing.T) {
	w, err := NewPodWatch(PodWatchOptions{Client: fake.NewClientset(), Clock: clock.RealClock{}, Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.add("node-1", sources.SharedAPINode{}) // no core nor output: the shared runner refuses it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Run() = nil, want the shared runner's error")
		}
	case <-time.After(30 * time.Second):
		cancel()
		<-done
		t.Error("Run did not return its runner's error within 30s")
	}
}
