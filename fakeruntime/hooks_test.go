package fakeruntime

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// hookEnds lists the messages of the hook events that end a run (not "running").
func hookEnds(e *env) []string {
	var out []string
	for _, ev := range e.events {
		if ev.Event == trace.KindHook && ev.Message != "running" {
			out = append(out, ev.Reason+" "+ev.Message)
		}
	}
	return out
}

// TestHTTPHookTarget checks runHTTPHandler's target, case by case against v1.35's
// lifecycle/handlers.go: the hook's host, else the IP the runtime reports for the pod's ready
// sandbox (for a postStart, the sandbox its own sync creates), a named port resolved against the
// container's ports; no IP (a host-network pod) fails with "failed to find networking
// container"; any HTTP status is a success.
func TestHTTPHookTarget(t *testing.T) {
	ip := sandboxIP("uid-web")
	for _, tt := range []struct {
		name        string
		hostNetwork bool
		get         v1.HTTPGetAction
		script      *HookBehavior
		want        string
	}{
		{name: "pod IP", get: v1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/warmup"}, script: &HookBehavior{Fail: true},
			want: `postStart failed: HTTP lifecycle hook (/warmup) for Container "app" in Pod "web_default(uid-web)" failed - error: Get "http://` + ip + `:8080/warmup": dial tcp ` + ip + `:8080: connect: connection refused`},
		{name: "own host", get: v1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt32(80), Path: "/", Scheme: v1.URISchemeHTTPS}, script: &HookBehavior{Fail: true},
			want: `postStart failed: HTTP lifecycle hook (/) for Container "app" in Pod "web_default(uid-web)" failed - error: Get "https://127.0.0.1:80/": dial tcp 127.0.0.1:80: connect: connection refused`},
		{name: "named port", get: v1.HTTPGetAction{Port: intstr.FromString("admin"), Path: "/"}, script: &HookBehavior{Fail: true},
			want: `postStart failed: HTTP lifecycle hook (/) for Container "app" in Pod "web_default(uid-web)" failed - error: Get "http://` + ip + `:9901/": dial tcp ` + ip + `:9901: connect: connection refused`},
		{name: "unknown port name", get: v1.HTTPGetAction{Port: intstr.FromString("web"), Path: "/"},
			want: `postStart failed: HTTP lifecycle hook (/) for Container "app" in Pod "web_default(uid-web)" failed - error: strconv.Atoi: parsing "web": invalid syntax`},
		{name: "host network", hostNetwork: true, get: v1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/"},
			want: `postStart failed: HTTP lifecycle hook (/) for Container "app" in Pod "web_default(uid-web)" failed - error: failed to find networking container: &{uid-web web default [] ...}`},
		{name: "an error status is a success", get: v1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/"}, script: &HookBehavior{HTTPStatus: 503},
			want: "postStart succeeded (HTTP 503)"},
		{name: "default answer", get: v1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/"},
			want: "postStart succeeded (HTTP 200)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{SandboxStart: 500 * time.Millisecond})
			pod := podtest.New("web")
			pod.Spec.HostNetwork = tt.hostNetwork
			c := &pod.Spec.Containers[0]
			c.Ports = []v1.ContainerPort{{Name: "admin", ContainerPort: 9901}}
			get := tt.get
			c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &get}}
			if tt.script != nil {
				if err := e.rt.SetHook("default/web", "app", HookPostStart, *tt.script); err != nil {
					t.Fatal(err)
				}
			}
			res, _ := e.sync(pod)
			e.clk.Set(res.Done)
			e.rt.Advance()
			got := hookEnds(e)
			if len(got) == 0 || got[0] != tt.want {
				t.Errorf("hook ends = %q, want the first %q", got, tt.want)
			}
		})
	}
}

// TestHookScriptTimes checks a script limited to its next runs: the postStart fails once, the
// container is killed and restarted, and the next run succeeds.
func TestHookScriptTimes(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("web")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"warm"}}}}
	if err := e.rt.SetHook("default/web", "app", HookPostStart, HookBehavior{Fail: true, Times: 1}); err != nil {
		t.Fatal(err)
	}
	runAllLenient(e, pod)
	got := hookEnds(e)
	want := []string{"postStart failed: Exec lifecycle hook ([warm]) for Container \"app\" in Pod \"web_default(uid-web)\" failed - error: command 'warm' exited with 1: , message: \"\"", "postStart succeeded"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hook runs (-want +got):\n%s", diff)
	}
}

// TestPreStopWithoutReadySandbox checks a preStop HTTP hook of a pod whose sandbox died: SyncPod's
// kill finds no IP to aim it at.
func TestPreStopWithoutReadySandbox(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("web")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/"}}}
	runAll(t, e, pod)
	if err := e.rt.KillSandbox("default/web"); err != nil {
		t.Fatal(err)
	}
	res, _ := e.sync(pod)
	e.clk.Set(res.Done)
	got := hookEnds(e)
	if len(got) != 1 || !strings.Contains(got[0], "failed to find networking container") {
		t.Errorf("hook ends = %q, want one preStop failure to find the networking container", got)
	}
}

// runAllLenient syncs the pod a few times, whatever each sync returns.
func runAllLenient(e *env, pod *v1.Pod) {
	for range 5 {
		res, _ := e.sync(pod)
		e.clk.Set(res.Done)
		e.rt.Advance()
	}
}
