package fakeruntime

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// failingEnv fails the environment of the containers named in fail.
type failingEnv struct{ fail map[string]bool }

func (h failingEnv) CheckEnvironment(_ *v1.Pod, c *v1.Container, _ string, _ []string) error {
	if h.fail[c.Name] {
		return fmt.Errorf("configmap %q not found", c.Name)
	}
	return nil
}

// stepsRun is what a run of stepsWorkload shows: the trace, the Kubernetes events with the
// references they were recorded about, the statuses and the checkpoint at the end.
type stepsRun struct {
	Trace      []trace.Event
	Events     []string
	Statuses   []string
	Checkpoint string
}

// stepsWorkload plays pods through every typed step and its guards: images pulled, present,
// failing once and invalid; containers created and started with and without a scripted exit
// (annotations, SetBehavior), with init containers and sidecars; a kill between a container's
// create and its start; an environment that cannot be made; and a kubelet restart with steps of
// the process pending.
func stepsWorkload(t *testing.T) stepsRun {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	var out stepsRun
	rec := recorderFunc(func(object runtime.Object, eventType, reason, message string) {
		ref := object.(*v1.ObjectReference)
		out.Events = append(out.Events, fmt.Sprintf("%v %s/%s %s %s %s %s %s %q", clk.Since(vclock.Epoch), ref.Namespace, ref.Name, ref.UID, ref.FieldPath, ref.APIVersion, eventType, reason, message))
	})
	rt, err := New(Options{
		Clock:     clk,
		Latencies: Latencies{SandboxStart: 500 * time.Millisecond, ImagePull: 2 * time.Second, ContainerStart: time.Second, ContainerStop: time.Second},
		Tracer: trace.Func(func(ev trace.Event) {
			ev.T = clk.Since(vclock.Epoch)
			out.Trace = append(out.Trace, ev)
		}),
		Recorder: rec,
	})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	rt.SetRuntimeHelper(failingEnv{fail: map[string]bool{"noenv": true}})
	rt.FailImagePull("nginx:1.27", 1)

	web := podtest.New("web", withInit("setup"), withSidecar("proxy"), podtest.Containers(
		v1.Container{Name: "app", Image: podtest.DefaultImage},
		v1.Container{Name: "cache", Image: "nginx:1.27"},
		v1.Container{Name: "job", Image: podtest.DefaultImage}), withExit("job", "3s", "1"), withExit("setup", "1s", "0"))
	rt.SetBehavior("default/web", "app", Behavior{RunFor: 4 * time.Second, ExitCode: 2})
	killed := podtest.New("killed", podtest.Containers(v1.Container{Name: "app", Image: podtest.DefaultImage}))
	broken := podtest.New("broken", podtest.Containers(
		v1.Container{Name: "noenv", Image: podtest.DefaultImage},
		v1.Container{Name: "badimage", Image: "Not A Valid:Image"}))
	restarted := podtest.New("restarted", podtest.Containers(v1.Container{Name: "app", Image: "redis:7"}))
	pods := []*v1.Pod{web, killed, broken, restarted}

	bo, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		t.Fatal(err)
	}
	sync := func(pod *v1.Pod) {
		status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus(%s) = %v", pod.Name, err)
		}
		_, _ = rt.SyncPod(pod, status, bo)
	}
	advance := func(until time.Time) {
		for {
			next, ok := rt.NextWake()
			if !ok || next.After(until) {
				clk.Set(until)
				rt.Advance()
				return
			}
			clk.Set(next)
			rt.Advance()
		}
	}
	// web pulls busybox until 2.5s; then killed's container is created at 3.5s and would start
	// at 4.5s: the kill comes between. restarted pulls redis until 5.5s: the kubelet restarts
	// before its Pulled, create and start.
	sync(web)
	sync(broken)
	advance(vclock.Epoch.Add(3 * time.Second))
	sync(killed)
	sync(restarted)
	advance(vclock.Epoch.Add(4 * time.Second))
	if _, err := rt.KillPod(killed, nil, nil); err != nil {
		t.Fatalf("KillPod() error = %v", err)
	}
	advance(vclock.Epoch.Add(5 * time.Second))
	rt.AttachKubelet(rec, nil, nil, nil)
	for range 8 {
		advance(clk.Now().Add(5 * time.Second))
		for _, p := range []*v1.Pod{web, broken, restarted} {
			sync(p)
		}
	}
	advance(clk.Now().Add(time.Minute))

	for _, p := range pods {
		s, err := rt.GetPodStatus(p.UID, p.Name, p.Namespace)
		if err != nil {
			t.Fatalf("GetPodStatus(%s) = %v", p.Name, err)
		}
		for _, c := range s.ContainerStatuses {
			out.Statuses = append(out.Statuses, fmt.Sprintf("%s/%s %s %s created %v started %v finished %v exit %d restarts %d",
				p.Name, c.Name, c.ID, c.State, c.CreatedAt.Sub(vclock.Epoch), c.StartedAt.Sub(vclock.Epoch), c.FinishedAt.Sub(vclock.Epoch), c.ExitCode, c.RestartCount))
		}
	}
	data, err := rt.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	out.Checkpoint = string(data)
	return out
}

// render is r as the golden file holds it: one line per trace event, Kubernetes event and status,
// then the checkpoint.
func (r stepsRun) render(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range r.Trace {
		data, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "trace %s\n", data)
	}
	for _, e := range r.Events {
		fmt.Fprintf(&b, "event %s\n", e)
	}
	for _, s := range r.Statuses {
		fmt.Fprintf(&b, "status %s\n", s)
	}
	fmt.Fprintf(&b, "checkpoint %s\n", r.Checkpoint)
	return b.String()
}

var updateSteps = flag.Bool("update", false, "rewrite testdata/steps.golden")

// TestTypedSteps: the steps a container's start takes (its create, its start, the events the
// process records later) are typed values in the schedule. The golden file was first written by the
// closures they replaced; the workload still traces the same events in the same order at the
// same instants, records the same Kubernetes events about the same references, and leaves the
// same statuses and checkpoint.
func TestTypedSteps(t *testing.T) {
	typed := stepsWorkload(t)
	got := typed.render(t)
	golden := filepath.Join("testdata", "steps.golden")
	if *updateSteps {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("workload differs from %s (-want +got):\n%s", golden, diff)
	}
	// The workload reaches what it is for.
	for _, want := range []struct {
		kind      trace.Kind
		pod, name string
	}{
		{trace.KindCreated, "killed", "app"},
		{trace.KindStarted, "web", "proxy"},
		{trace.KindExited, "web", "job"},
		{trace.KindExited, "web", "app"},
		{trace.KindPulled, "web", "cache"},
		{trace.KindFailed, "broken", "noenv"},
		{trace.KindStarted, "restarted", "app"},
	} {
		found := false
		for _, ev := range typed.Trace {
			found = found || (ev.Event == want.kind && ev.Pod == "default/"+want.pod && ev.Container == want.name)
		}
		if !found {
			t.Errorf("no %s of %s/%s in the trace", want.kind, want.pod, want.name)
		}
	}
	for _, ev := range typed.Trace {
		if ev.Pod == "default/killed" && ev.Event == trace.KindStarted {
			t.Errorf("killed's container started after the kill: %+v", ev)
		}
	}
	if len(typed.Events) == 0 || len(typed.Statuses) == 0 {
		t.Errorf("nothing recorded: %d events, %d statuses", len(typed.Events), len(typed.Statuses))
	}
}
