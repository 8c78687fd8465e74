package syncloop

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podconfig"
)

func TestRunnerRunsPodsFromUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, envOptions{standalone: true, clock: clock.RealClock{}})
		updates := make(chan podconfig.Update)
		_, ctx := ktesting.NewTestContext(t)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- NewRunner(e.loop, updates, clock.RealClock{}).Run(ctx) }()

		pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
		pod.Annotations[kubecontainer.ConfigSourceAnnotationKey] = podconfig.FileSource
		updates <- podconfig.Update{Op: podconfig.ADD, Source: podconfig.FileSource, Pods: []*v1.Pod{pod}}
		// Sleeping in the bubble moves its fake clock; the runner wakes at each NextWake.
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if got := e.phase(pod.UID); got != v1.PodRunning {
			t.Errorf("phase of %s after 3s = %q, want Running", pod.Name, got)
		}
		if got := e.loop.SourcesSeen(); len(got) != 1 || got[0] != podconfig.FileSource {
			t.Errorf("SourcesSeen() = %v, want [file]", got)
		}

		close(updates) // a closed channel is no longer read; the runner keeps going
		time.Sleep(time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
}
