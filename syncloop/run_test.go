package syncloop_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/syncloop"
)

func TestRunnerRunsPodsFromUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Inside the bubble the real clock is the bubble's fake one.
		n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clock.RealClock{}, Tracer: trace.Discard})
		if err != nil {
			t.Fatalf("kubelet.New() = %v", err)
		}
		updates := make(chan podconfig.Update)
		_, ctx := ktesting.NewTestContext(t)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		r, err := syncloop.NewRunner(syncloop.RunnerOptions{Loop: n.Loop, Updates: updates, Clock: clock.RealClock{}})
		if err != nil {
			t.Fatalf("NewRunner() error = %v", err)
		}
		go func() { done <- r.Run(ctx) }()

		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: metav1.NamespaceDefault, UID: "uid-web",
				Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: podconfig.FileSource, kubecontainer.ConfigHashAnnotationKey: "uid-web"}},
			Spec: v1.PodSpec{NodeName: "node-1", RestartPolicy: v1.RestartPolicyAlways,
				Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: v1.PullIfNotPresent}}},
		}
		apidefaults.SetPodDefaults(pod) // as a pod source defaults it
		updates <- podconfig.Update{Op: podconfig.ADD, Source: podconfig.FileSource, Pods: []*v1.Pod{pod}}
		// Sleeping in the bubble moves its fake clock; the runner wakes at each NextWake.
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if s, _ := n.Status.GetPodStatus(pod.UID); s.Phase != v1.PodRunning {
			t.Errorf("phase of %s after 3s = %q, want Running", pod.Name, s.Phase)
		}
		if got := n.Loop.SourcesSeen(); len(got) != 1 || got[0] != podconfig.FileSource {
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

// TestRunnerReadsQueuedUpdatesBeforeSyncing: updates that queued while the loop was busy all
// reach the pod workers before they sync again, as in the kubelet, whose sync loop reads them
// while the workers sync on their own goroutines. A pod added and removed before the loop read
// either never has a container started.
func TestRunnerReadsQueuedUpdatesBeforeSyncing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started []string
		tracer := trace.Func(func(ev trace.Event) {
			if ev.Component == trace.Runtime && ev.Event == trace.KindStarted {
				started = append(started, ev.Pod)
			}
		})
		n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clock.RealClock{}, Tracer: tracer})
		if err != nil {
			t.Fatalf("kubelet.New() = %v", err)
		}
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: metav1.NamespaceDefault, UID: "uid-web",
				Annotations: map[string]string{kubecontainer.ConfigSourceAnnotationKey: podconfig.FileSource, kubecontainer.ConfigHashAnnotationKey: "uid-web"}},
			Spec: v1.PodSpec{NodeName: "node-1", RestartPolicy: v1.RestartPolicyAlways,
				Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: v1.PullIfNotPresent}}},
		}
		apidefaults.SetPodDefaults(pod) // as a pod source defaults it
		updates := make(chan podconfig.Update, 2)
		updates <- podconfig.Update{Op: podconfig.ADD, Source: podconfig.FileSource, Pods: []*v1.Pod{pod}}
		updates <- podconfig.Update{Op: podconfig.REMOVE, Source: podconfig.FileSource, Pods: []*v1.Pod{pod}}
		r, err := syncloop.NewRunner(syncloop.RunnerOptions{Loop: n.Loop, Updates: updates, Clock: clock.RealClock{}})
		if err != nil {
			t.Fatalf("NewRunner() error = %v", err)
		}
		_, ctx := ktesting.NewTestContext(t)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
		if len(started) != 0 {
			t.Errorf("containers started for %v, want none: the removal was read before the first sync", started)
		}
		if _, known := n.Workers.State(pod.UID); known {
			t.Errorf("worker of %s still known after its removal", pod.UID)
		}
	})
}

// TestRunnerRunsCalls: a function sent on Calls runs between passes, where the loop's cores may
// be read; the runner keeps going after it.
func TestRunnerRunsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clock.RealClock{}, Tracer: trace.Discard})
		if err != nil {
			t.Fatalf("kubelet.New() = %v", err)
		}
		calls := make(chan func())
		_, ctx := ktesting.NewTestContext(t)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		r, err := syncloop.NewRunner(syncloop.RunnerOptions{Loop: n.Loop, Updates: make(chan podconfig.Update), Clock: clock.RealClock{}, Calls: calls})
		if err != nil {
			t.Fatalf("NewRunner() error = %v", err)
		}
		go func() { done <- r.Run(ctx) }()
		for i := range 2 {
			ran := make(chan []string)
			calls <- func() { ran <- n.Loop.SourcesSeen() }
			if got := <-ran; len(got) != 0 {
				t.Errorf("call %d: SourcesSeen() = %v, want none", i, got)
			}
			time.Sleep(time.Second)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
}

// TestRunnerAnswersAsks: a signal on Asks has Asked run between passes, on the runner's
// goroutine, where the loop's cores may be read; the runner keeps going after it.
func TestRunnerAnswersAsks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clock.RealClock{}, Tracer: trace.Discard})
		if err != nil {
			t.Fatalf("kubelet.New() = %v", err)
		}
		asks := make(chan struct{}, 1)
		answered := 0
		_, ctx := ktesting.NewTestContext(t)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		r, err := syncloop.NewRunner(syncloop.RunnerOptions{Loop: n.Loop, Updates: make(chan podconfig.Update), Clock: clock.RealClock{},
			Asks: asks, Asked: func() { n.Loop.SourcesSeen(); answered++ }})
		if err != nil {
			t.Fatalf("NewRunner() error = %v", err)
		}
		go func() { done <- r.Run(ctx) }()
		for want := 1; want <= 2; want++ {
			asks <- struct{}{}
			synctest.Wait()
			if answered != want {
				t.Errorf("after %d asks, Asked ran %d times", want, answered)
			}
			time.Sleep(time.Second)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
}

// TestNewRunnerWantsAsksWithAsked: one of Asks and Asked without the other is a missing option.
func TestNewRunnerWantsAsksWithAsked(t *testing.T) {
	n, err := kubelet.New(kubelet.Options{NodeName: "node-1", Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("kubelet.New() = %v", err)
	}
	base := syncloop.RunnerOptions{Loop: n.Loop, Updates: make(chan podconfig.Update), Clock: clock.RealClock{}}
	withAsks, withAsked := base, base
	withAsks.Asks = make(chan struct{})
	withAsked.Asked = func() {}
	for name, opts := range map[string]syncloop.RunnerOptions{"Asks alone": withAsks, "Asked alone": withAsked} {
		if _, err := syncloop.NewRunner(opts); !errors.Is(err, minikubelet.ErrMissingOption) {
			t.Errorf("%s: NewRunner() = %v, want ErrMissingOption", name, err)
		}
	}
}
