package kubelet

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestNewStandaloneRunsAStaticPod(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	if !e.run(time.Minute, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Errorf("static pod not Running within a minute of virtual time")
	}
	if _, ok := e.k.Pods.GetPodByUID(pod.UID); !ok {
		t.Errorf("pod manager does not hold the static pod")
	}
}

func TestNewWithClientCreatesTheMirrorPod(t *testing.T) {
	e := newEnv(t, envOptions{})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.setFile(pod)
	mirrored := func() bool {
		p := e.apiPod(pod.Namespace, pod.Name)
		return p != nil && kubecontainer.IsMirrorPod(p)
	}
	if !e.run(time.Minute, mirrored) {
		t.Errorf("no mirror pod in the API server within a minute of virtual time")
	}
}

func TestNewNeedsRequiredOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{name: "no clock", opts: Options{NodeName: "node-1", Tracer: trace.Discard}},
		{name: "no tracer", opts: Options{NodeName: "node-1", Clock: vclock.New(vclock.Epoch)}},
		{name: "no node name", opts: Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.opts); !errors.Is(err, minikubelet.ErrMissingOption) {
				t.Errorf("New() error = %v, want %v", err, minikubelet.ErrMissingOption)
			}
		})
	}
}
