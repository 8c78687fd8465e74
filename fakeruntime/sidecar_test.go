package fakeruntime

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// exitTimes returns, per container, when its newest instance exited.
func exitTimes(e *env, pod *v1.Pod, names ...string) map[string]time.Duration {
	got := map[string]time.Duration{}
	st := e.status(pod)
	for _, n := range names {
		if c := st.FindContainerStatusByName(n); c != nil && c.State == kubecontainer.ContainerStateExited {
			got[n] = c.FinishedAt.Sub(at(0))
		}
	}
	return got
}

// runAll syncs pod until its init containers and app run, one sync per step as the PLEG would.
func runAll(t *testing.T, e *env, pod *v1.Pod) {
	t.Helper()
	for range 5 {
		res, err := e.sync(pod)
		if err != nil {
			t.Fatalf("SyncPod() = %v", err)
		}
		e.clk.Set(res.Done)
	}
}

func TestKillPodTerminationOrder(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("sc", withSidecar("s1", "s2"), podtest.TerminationGracePeriod(30))
	runAll(t, e, pod)
	e.rt.SetStopBehavior("default/sc", "app", StopBehavior{After: 5 * time.Second})
	e.rt.SetStopBehavior("default/sc", "s1", StopBehavior{After: time.Second})
	e.rt.SetStopBehavior("default/sc", "s2", StopBehavior{After: time.Second})
	start := e.clk.Now().Sub(at(0))
	res, err := e.rt.KillPod(pod, nil, nil)
	if err != nil {
		t.Fatalf("KillPod() = %v", err)
	}
	e.clk.Set(res.Done)
	// app first, then the sidecars in reverse order, each SIGTERMed once the one after it is gone.
	want := map[string]time.Duration{"app": start + 5*time.Second, "s2": start + 6*time.Second, "s1": start + 7*time.Second}
	if diff := cmp.Diff(want, exitTimes(e, pod, "app", "s1", "s2")); diff != "" {
		t.Errorf("exits (-want +got):\n%s", diff)
	}
}

func TestKillPodOrderingEatsSidecarGrace(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("sc", withSidecar("s"), podtest.TerminationGracePeriod(10))
	runAll(t, e, pod)
	e.rt.SetStopBehavior("default/sc", "app", StopBehavior{IgnoreSIGTERM: true})
	e.rt.SetStopBehavior("default/sc", "s", StopBehavior{IgnoreSIGTERM: true})
	start := e.clk.Now().Sub(at(0))
	res, _ := e.rt.KillPod(pod, nil, nil)
	e.clk.Set(res.Done)
	// app is SIGKILLed at 10s; the sidecar waited all its 10s, so it gets the 2s minimum.
	want := map[string]time.Duration{"app": start + 10*time.Second, "s": start + 12*time.Second}
	if diff := cmp.Diff(want, exitTimes(e, pod, "app", "s")); diff != "" {
		t.Errorf("exits (-want +got):\n%s", diff)
	}
}

func TestPreStopEatsGrace(t *testing.T) {
	tests := []struct {
		name     string
		sleep    int64
		script   *HookBehavior
		wantExit time.Duration
		wantFail bool
	}{
		{name: "sleep 10s of 30s", sleep: 10, wantExit: 30 * time.Second},
		{name: "sleep past the grace gets 2s", sleep: 29, script: &HookBehavior{Duration: durp(29500 * time.Millisecond)}, wantExit: 29500*time.Millisecond + 2*time.Second},
		{name: "failing exec hook", script: &HookBehavior{Fail: true, Duration: durp(3 * time.Second)}, wantExit: 30 * time.Second, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{})
			pod := podtest.New("ps", podtest.TerminationGracePeriod(30))
			h := &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: tt.sleep}}
			if tt.script != nil && tt.script.Fail {
				h = &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}
			}
			pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: h}
			runAll(t, e, pod)
			if tt.script != nil {
				if err := e.rt.SetHook("default/ps", "app", HookPreStop, *tt.script); err != nil {
					t.Fatal(err)
				}
			}
			e.rt.SetStopBehavior("default/ps", "app", StopBehavior{IgnoreSIGTERM: true})
			start := e.clk.Now().Sub(at(0))
			res, _ := e.rt.KillPod(pod, nil, nil)
			e.clk.Set(res.Done)
			if diff := cmp.Diff(map[string]time.Duration{"app": start + tt.wantExit}, exitTimes(e, pod, "app")); diff != "" {
				t.Errorf("exits (-want +got):\n%s", diff)
			}
			failed := false
			for _, ev := range e.events {
				if ev.Event == trace.KindHook && ev.Message != "running" && ev.Message != "succeeded" {
					failed = true
				}
			}
			if failed != tt.wantFail {
				t.Errorf("hook failed = %v, want %v", failed, tt.wantFail)
			}
		})
	}
}

func TestPostStartBlocksAndFails(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("hook")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm", "up"}}}}
	podtest.Annotation(AnnotationPostStart+"app", "fail 4s")(pod)
	res, err := e.sync(pod)
	// The sync lasts the hook, then the kill: 4s, then the 0s stop.
	if got := res.Done.Sub(at(0)); got != 4*time.Second {
		t.Errorf("SyncPod() Done = %v, want 4s", got)
	}
	var hookErr *kubecontainer.PostStartHookError
	if !errors.As(err, &hookErr) {
		t.Fatalf("SyncPod() = %v, want a PostStartHookError", err)
	}
	want := `Exec lifecycle hook ([warm up]) for Container "app" in Pod "hook_default(uid-hook)" failed - error: command 'warm up' exited with 1: , message: ""`
	if hookErr.Message != want {
		t.Errorf("message = %q, want %q", hookErr.Message, want)
	}
	e.clk.Set(res.Done)
	if c := e.status(pod).FindContainerStatusByName("app"); c.State != kubecontainer.ContainerStateExited {
		t.Errorf("app after a failed postStart = %s, want exited", c.State)
	}
}

func TestParseHookAnnotation(t *testing.T) {
	tests := []struct {
		in      string
		want    HookBehavior
		wantErr bool
	}{
		{in: "fail", want: HookBehavior{Fail: true}},
		{in: "3s", want: HookBehavior{Duration: durp(3 * time.Second)}},
		{in: "fail 3s", want: HookBehavior{Fail: true, Duration: durp(3 * time.Second)}},
		{in: "3s fail", want: HookBehavior{Fail: true, Duration: durp(3 * time.Second)}},
		{in: "", wantErr: true},
		{in: "fail fail", wantErr: true},
		{in: "3s 4s", wantErr: true},
		{in: "-1s", wantErr: true},
		{in: "soon", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseHookAnnotation(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseHookAnnotation(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
			t.Errorf("ParseHookAnnotation(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func durp(d time.Duration) *time.Duration { return &d }

// FuzzParseHookAnnotation feeds the hook annotations' parser, which reads pod metadata anyone can
// write: it must not panic, and what it accepts must be a valid behaviour.
func FuzzParseHookAnnotation(f *testing.F) {
	for _, s := range []string{"fail", "3s", "fail 3s", "", "fail fail", "-1s", "1h2m3.5s fail"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseHookAnnotation(s)
		if err != nil {
			if !errors.Is(err, ErrBadAnnotation) {
				t.Errorf("ParseHookAnnotation(%q) error %v does not wrap ErrBadAnnotation", s, err)
			}
			return
		}
		if b.Duration != nil && *b.Duration < 0 {
			t.Errorf("ParseHookAnnotation(%q) = negative duration %v", s, *b.Duration)
		}
	})
}
