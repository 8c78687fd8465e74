package fakeruntime

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestInitContainersRunInOrder(t *testing.T) {
	e := newEnv(t, Latencies{ContainerStart: time.Second})
	pod := podtest.New("init", withInit("first", "second"), withExit("first", "2s", "0"), withExit("second", "3s", "0"))
	e.drive(pod, at(30*time.Second))

	var got []string
	for _, ev := range e.events {
		if ev.Event == "started" || ev.Event == "exited" {
			got = append(got, string(ev.Event)+" "+ev.Container+" "+ev.T.String())
		}
	}
	want := []string{
		"started first 1s",
		"exited first 3s",
		"started second 4s",
		"exited second 7s",
		"started app 8s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("container lifecycle mismatch (-want +got):\n%s", diff)
	}
}

func TestInitContainerFailure(t *testing.T) {
	s := time.Second
	tests := []struct {
		name        string
		policy      v1.RestartPolicy
		wantStarts  []time.Duration // of the init container
		wantStopped bool
	}{
		{name: "Never fails the pod", policy: v1.RestartPolicyNever, wantStarts: []time.Duration{0}, wantStopped: true},
		{name: "OnFailure retries with back-off", policy: v1.RestartPolicyOnFailure, wantStarts: []time.Duration{0, 1 * s, 12 * s, 33 * s}},
		{name: "Always retries with back-off", policy: v1.RestartPolicyAlways, wantStarts: []time.Duration{0, 1 * s, 12 * s, 33 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{})
			pod := podtest.New("initfail", podtest.RestartPolicy(tt.policy), withInit("setup"), withExit("setup", "1s", "3"))
			e.drive(pod, at(40*time.Second))
			if diff := cmp.Diff(tt.wantStarts, e.times("started", "setup")); diff != "" {
				t.Errorf("starts of the init container mismatch (-want +got):\n%s", diff)
			}
			if got := e.times("started", "app"); len(got) != 0 {
				t.Errorf("app started at %v, want never", got)
			}
			st := e.status(pod)
			if stopped := st.Sandboxes[0].State == kubecontainer.SandboxNotReady; stopped != tt.wantStopped {
				t.Errorf("sandbox stopped = %v, want %v", stopped, tt.wantStopped)
			}
		})
	}
}

func TestNewSandboxRestartsInitialization(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("resandbox", withInit("first", "second"), withExit("first", "1s", "0"), withExit("second", "1s", "0"))
	e.drive(pod, at(10*time.Second))
	// The sandbox dies (for example a node reboot): the runtime stops everything.
	if _, err := e.rt.KillPod(pod, nil, nil); err != nil {
		t.Fatalf("KillPod() = %v", err)
	}
	e.drive(pod, at(20*time.Second))
	st := e.status(pod)
	if got := len(st.Sandboxes); got != 2 || st.Sandboxes[0].Attempt != 1 {
		t.Fatalf("sandboxes = %+v, want two with the newest at attempt 1", st.Sandboxes)
	}
	var names []string
	for _, ev := range e.events {
		if ev.Event == "started" {
			names = append(names, ev.Container)
		}
	}
	want := []string{"first", "second", "app", "first", "second", "app"}
	if !slices.Equal(names, want) {
		t.Errorf("start order = %v, want %v", names, want)
	}
}
