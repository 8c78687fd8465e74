package fakeruntime

import (
	"errors"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

func TestBehaviorFromAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    Behavior
		wantOK  bool
		wantErr bool
	}{
		{name: "none", ann: map[string]string{"other": "x"}},
		{name: "after and code", ann: map[string]string{AnnotationExitAfter + "app": "5s", AnnotationExitCode + "app": "1"}, want: Behavior{RunFor: 5 * time.Second, ExitCode: 1}, wantOK: true},
		{name: "after only", ann: map[string]string{AnnotationExitAfter + "app": "1m30s"}, want: Behavior{RunFor: 90 * time.Second}, wantOK: true},
		{name: "other container", ann: map[string]string{AnnotationExitAfter + "side": "5s"}},
		{name: "bad duration", ann: map[string]string{AnnotationExitAfter + "app": "5"}, wantErr: true},
		{name: "negative duration", ann: map[string]string{AnnotationExitAfter + "app": "-5s"}, wantErr: true},
		{name: "bad code", ann: map[string]string{AnnotationExitAfter + "app": "5s", AnnotationExitCode + "app": "one"}, wantErr: true},
		{name: "code out of range", ann: map[string]string{AnnotationExitAfter + "app": "5s", AnnotationExitCode + "app": "256"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := BehaviorFromAnnotations(tt.ann, "app")
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrBadAnnotation)) {
				t.Errorf("BehaviorFromAnnotations() error = %v, want error %v wrapping ErrBadAnnotation", err, tt.wantErr)
			}
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("BehaviorFromAnnotations() = %+v, %v, want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func FuzzBehaviorFromAnnotations(f *testing.F) {
	f.Add("5s", "1")
	f.Add("", "")
	f.Add("1h2m3.5s", "255")
	f.Add("-1s", "-1")
	f.Fuzz(func(t *testing.T, after, code string) {
		ann := map[string]string{AnnotationExitAfter + "c": after, AnnotationExitCode + "c": code}
		b, ok, err := BehaviorFromAnnotations(ann, "c")
		if err != nil {
			if !errors.Is(err, ErrBadAnnotation) || ok {
				t.Errorf("BehaviorFromAnnotations(%q, %q) = %v, %v, want ErrBadAnnotation and false", after, code, ok, err)
			}
			return
		}
		if !ok || b.RunFor <= 0 || b.ExitCode < 0 || b.ExitCode > 255 {
			t.Errorf("BehaviorFromAnnotations(%q, %q) = %+v, %v, want a positive RunFor and a code in 0..255", after, code, b, ok)
		}
	})
}

// TestRuntimeFaults checks the scripted faults: an OOM kill, a sandbox that dies, and failing
// RunPodSandbox and CreateContainer calls.
func TestRuntimeFaults(t *testing.T) {
	e := newEnv(t, Latencies{SandboxStart: time.Second})
	pod := podtest.New("faulty")
	if err := e.rt.FailRuntimeCall(CallRunPodSandbox, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); !errors.Is(err, kubecontainer.ErrCreatePodSandbox) {
		t.Fatalf("SyncPod() with a failing RunPodSandbox = %v, want ErrCreatePodSandbox", err)
	}
	if err := e.rt.FailRuntimeCall(CallCreateContainer, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); !errors.Is(err, kubecontainer.ErrCreateContainer) {
		t.Fatalf("SyncPod() with a failing CreateContainer = %v, want ErrCreateContainer", err)
	}
	e.drive(pod, at(10*time.Second))
	if err := e.rt.OOMKill("default/faulty", "app"); err != nil {
		t.Fatalf("OOMKill() = %v", err)
	}
	c := e.status(pod).FindContainerStatusByName("app")
	if c.State != kubecontainer.ContainerStateExited || c.ExitCode != 137 || c.Reason != "OOMKilled" {
		t.Errorf("app after OOMKill = %s %d %q, want exited 137 OOMKilled", c.State, c.ExitCode, c.Reason)
	}
	if err := e.rt.KillSandbox("default/faulty"); err != nil {
		t.Fatalf("KillSandbox() = %v", err)
	}
	if err := e.rt.KillSandbox("default/faulty"); !errors.Is(err, ErrNotFound) {
		t.Errorf("KillSandbox() without a ready sandbox = %v, want ErrNotFound", err)
	}
	if err := e.rt.FailRuntimeCall("ExecSync", 1); err == nil {
		t.Error("FailRuntimeCall(ExecSync) = nil, want an error")
	}
}
