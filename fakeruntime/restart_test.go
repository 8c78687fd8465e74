package fakeruntime

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestRestartPolicies(t *testing.T) {
	s := time.Second
	crashGaps := []time.Duration{0, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s}
	tests := []struct {
		name         string
		policy       v1.RestartPolicy
		code         string
		wantGaps     []time.Duration // between each exit and the next start
		wantStopped  bool            // the sandbox was stopped: the pod is done
		wantRestarts int             // restart count of the newest instance at the end
	}{
		{name: "Always exit 1", policy: v1.RestartPolicyAlways, code: "1", wantGaps: crashGaps, wantRestarts: 8},
		{name: "Always exit 0", policy: v1.RestartPolicyAlways, code: "0", wantGaps: crashGaps, wantRestarts: 8},
		{name: "OnFailure exit 1", policy: v1.RestartPolicyOnFailure, code: "1", wantGaps: crashGaps, wantRestarts: 8},
		{name: "OnFailure exit 0", policy: v1.RestartPolicyOnFailure, code: "0", wantStopped: true},
		{name: "Never exit 1", policy: v1.RestartPolicyNever, code: "1", wantStopped: true},
		{name: "Never exit 0", policy: v1.RestartPolicyNever, code: "0", wantStopped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{})
			pod := podtest.New("crash", podtest.RestartPolicy(tt.policy), withExit("app", "5s", tt.code))
			// 5s runs with gaps of 0..300s: the ninth start is at 5*9 + 910s = 955s.
			e.drive(pod, at(1000*time.Second))
			got := gaps(e.times("exited", "app"), e.times("started", "app"))
			if diff := cmp.Diff(tt.wantGaps, got); diff != "" {
				t.Errorf("gaps between exit and restart mismatch (-want +got):\n%s", diff)
			}
			st := e.status(pod)
			if stopped := st.Sandboxes[0].State == kubecontainer.SandboxNotReady; stopped != tt.wantStopped {
				t.Errorf("sandbox stopped = %v, want %v", stopped, tt.wantStopped)
			}
			if got := st.FindContainerStatusByName("app").RestartCount; got != tt.wantRestarts {
				t.Errorf("RestartCount = %d, want %d", got, tt.wantRestarts)
			}
		})
	}
}

func TestCrashLoopBackoffError(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("crash", withExit("app", "5s", "1"))
	e.drive(pod, at(10*time.Second)) // ran 0-5s, restarted at once, exited again at 10s
	_, err := e.sync(pod)
	want := "back-off 10s restarting failed container=app pod=crash_default(uid-crash): CrashLoopBackOff"
	if err == nil || err.Error() != want {
		t.Fatalf("SyncPod() error = %v, want %q", err, want)
	}
	exp, ok := kubecontainer.MinBackoffExpiration(err)
	if !ok || !exp.Equal(at(20*time.Second)) {
		t.Errorf("MinBackoffExpiration() = %v, %v, want %v, true", exp, ok, at(20*time.Second))
	}
}

// TestBackoffKeyFollowsImageAndResources checks v1.35's GetBackoffKey: a crash-looping container
// whose image or resources change gets a fresh back-off entry and restarts at once.
func TestBackoffKeyFollowsImageAndResources(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *v1.Container)
		want   bool // held back
	}{
		{name: "unchanged", change: func(*v1.Container) {}, want: true},
		{name: "new image", change: func(c *v1.Container) { c.Image = "busybox:1.37" }},
		{name: "new resources", change: func(c *v1.Container) {
			c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
		}},
		{name: "new environment keeps the key", change: func(c *v1.Container) { c.Env = []v1.EnvVar{{Name: "A", Value: "b"}} }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{})
			pod := podtest.New("crash", withExit("app", "5s", "1"))
			e.drive(pod, at(10*time.Second)) // ran 0-5s, restarted at once, exited again at 10s
			changed := pod.DeepCopy()
			tt.change(&changed.Spec.Containers[0])
			_, err := e.sync(changed)
			if held := errors.Is(err, kubecontainer.ErrCrashLoopBackOff); held != tt.want {
				t.Errorf("SyncPod() error = %v, held back = %v, want %v", err, held, tt.want)
			}
		})
	}
}

func TestBackoffJoinedForSeveralContainers(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("two", withExit("a", "5s", "1"), withExit("b", "7s", "1"))
	pod.Spec.Containers = []v1.Container{{Name: "a", Image: "busybox:1.36"}, {Name: "b", Image: "busybox:1.36"}}
	// a: 0-5, restart 5-10; b: 0-7, restart 7-14.
	e.drive(pod, at(15*time.Second))
	_, err := e.sync(pod)
	exp, ok := kubecontainer.MinBackoffExpiration(err)
	if !ok || !exp.Equal(at(20*time.Second)) {
		t.Errorf("MinBackoffExpiration() = %v, %v, want %v (a's expiry), true", exp, ok, at(20*time.Second))
	}
	if u, ok := err.(interface{ Unwrap() []error }); !ok || len(u.Unwrap()) != 2 {
		t.Errorf("SyncPod() error = %v, want two joined back-off errors", err)
	}
}

func TestBackoffResetsAfterQuietPeriod(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("slow", withExit("app", "700s", "1"))
	// Each run lasts 700s, longer than twice the maximum back-off, so every exit finds an expired
	// entry and the container restarts at once.
	e.drive(pod, at(3000*time.Second))
	got := gaps(e.times("exited", "app"), e.times("started", "app"))
	want := []time.Duration{0, 0, 0, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gaps mismatch (-want +got):\n%s", diff)
	}
}

func TestDeletedPodIsNotRestarted(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("gone", withExit("app", "5s", "1"))
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	e.clk.Set(at(6 * time.Second))
	e.rt.Advance()
	deleted := pod.DeepCopy()
	deleted.DeletionTimestamp = &metaNow
	if _, err := e.sync(deleted); err != nil {
		t.Fatalf("SyncPod(deleted) = %v", err)
	}
	if got := len(e.times("started", "app")); got != 1 {
		t.Errorf("starts of app = %d, want 1", got)
	}
	if st := e.status(pod); st.Sandboxes[0].State != kubecontainer.SandboxNotReady {
		t.Errorf("sandbox state = %s, want notready: a deleted pod with nothing running is killed", st.Sandboxes[0].State)
	}
}
