package fakeruntime

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestStartFailuresBeforeAContainerExists checks the start failures that leave no container: the
// error names the container and carries the kubelet's Waiting reason and message.
func TestStartFailuresBeforeAContainerExists(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		want    error
		wantMsg string
	}{
		{name: "invalid image name", pod: podtest.New("p", func(p *v1.Pod) { p.Spec.Containers[0].Image = "Busybox:1.36" }),
			want:    kubecontainer.ErrInvalidImageName,
			wantMsg: `Failed to apply default image tag "Busybox:1.36": couldn't parse image name "Busybox:1.36": invalid reference format: repository name (library/Busybox) must be lowercase`},
		{name: "never pull", pod: podtest.New("p", func(p *v1.Pod) { p.Spec.Containers[0].ImagePullPolicy = v1.PullNever }),
			want: kubecontainer.ErrImageNeverPull, wantMsg: `Container image "busybox:1.36" is not present with pull policy of Never`},
		{name: "runAsNonRoot, image runs as root", pod: podtest.New("p", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
		}), want: kubecontainer.ErrCreateContainerConfig,
			wantMsg: `container has runAsNonRoot and image will run as root (pod: "p_default(uid-p)", container: app)`},
		{name: "runAsNonRoot with runAsUser 0", pod: podtest.New("p", func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)}
		}), want: kubecontainer.ErrCreateContainerConfig,
			wantMsg: `container's runAsUser breaks non-root policy (pod: "p_default(uid-p)", container: app)`},
		// A malformed scripting annotation fails the configuration before anything is created,
		// whichever it is, so that no container is left behind at each retry.
		{name: "malformed start-error annotation", pod: podtest.New("p", func(p *v1.Pod) {
			p.Annotations = map[string]string{"minikubelet.io/start-error.app": "often"}
		}), want: kubecontainer.ErrCreateContainerConfig,
			wantMsg: `minikubelet.io/start-error.app="often": want a number of starts or "always": ` + ErrBadAnnotation.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Latencies{})
			_, err := e.sync(tc.pod)
			var se *kubecontainer.StartError
			if !errors.Is(err, tc.want) || !errors.As(err, &se) || se.Container != "app" || se.Message != tc.wantMsg {
				t.Fatalf("SyncPod() = %v, want a StartError of app, %v, %q", err, tc.want, tc.wantMsg)
			}
			if c := e.status(tc.pod).FindContainerStatusByName("app"); c != nil {
				t.Errorf("app = %+v, want no container", c)
			}
		})
	}
	// A runAsUser other than 0 passes.
	e := newEnv(t, Latencies{})
	ok := podtest.New("ok", func(p *v1.Pod) {
		p.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)}
	})
	if _, err := e.sync(ok); err != nil {
		t.Errorf("SyncPod(runAsUser 1000) = %v", err)
	}
}

// TestStartContainerFails checks a failed StartContainer: containerd's StartError, exit code 128,
// on a container that exists, and RunContainerError for the kubelet; the next start is a restart.
func TestStartContainerFails(t *testing.T) {
	e := newEnv(t, Latencies{ContainerStart: time.Second})
	pod := podtest.New("p", func(p *v1.Pod) { p.Spec.Containers[0].Command = []string{"serve"} })
	if err := e.rt.FailRuntimeCall(CallStartContainer, 1); err != nil {
		t.Fatal(err)
	}
	_, err := e.sync(pod)
	if !errors.Is(err, kubecontainer.ErrRunContainer) {
		t.Fatalf("SyncPod() = %v, want ErrRunContainer", err)
	}
	e.clk.Set(at(time.Second))
	e.rt.Advance()
	c := e.status(pod).FindContainerStatusByName("app")
	want := startErrorMessage(&pod.Spec.Containers[0])
	if c == nil || c.State != kubecontainer.ContainerStateExited || c.ExitCode != 128 || c.Reason != "StartError" || c.Message != want ||
		!c.StartedAt.Equal(time.Unix(0, 0)) || !c.FinishedAt.Equal(at(time.Second)) {
		t.Fatalf("app = %+v, want exited 128 StartError %q", c, want)
	}
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("second SyncPod() = %v", err)
	}
	e.clk.Set(at(2 * time.Second))
	e.rt.Advance()
	if c := e.status(pod).FindContainerStatusByName("app"); c.State != kubecontainer.ContainerStateRunning || c.RestartCount != 1 {
		t.Errorf("app = %+v, want running, restartCount 1", c)
	}
}

// TestExitReasonAnnotations checks the run-mode annotations: oom-after ends each run with an OOM
// kill, start-error fails the first starts.
func TestExitReasonAnnotations(t *testing.T) {
	e := newEnv(t, Latencies{})
	oom := podtest.New("oom", podtest.Annotation(AnnotationOOMAfter+"app", "5s"))
	if _, err := e.sync(oom); err != nil {
		t.Fatal(err)
	}
	e.clk.Set(at(5 * time.Second))
	e.rt.Advance()
	if c := e.status(oom).FindContainerStatusByName("app"); c.State != kubecontainer.ContainerStateExited || c.ExitCode != 137 || c.Reason != "OOMKilled" {
		t.Errorf("app = %+v, want exited 137 OOMKilled", c)
	}

	starts := podtest.New("starts", podtest.Annotation(AnnotationStartError+"app", "2"))
	for i, want := range []error{kubecontainer.ErrRunContainer, kubecontainer.ErrRunContainer, nil} {
		if _, err := e.rt.SyncPod(starts, e.status(starts), nil); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("start %d: SyncPod() = %v, want %v", i, err, want)
		}
		e.rt.Advance()
	}

	for _, bad := range []map[string]string{
		{AnnotationStartError + "app": "often"},
		{AnnotationOOMAfter + "app": "5s", AnnotationExitAfter + "app": "5s"},
	} {
		p := podtest.New("bad", func(p *v1.Pod) { p.Annotations = bad })
		if _, err := e.sync(p); !errors.Is(err, ErrBadAnnotation) {
			t.Errorf("annotations %v: SyncPod() = %v, want ErrBadAnnotation", bad, err)
		}
	}
}
