package fakeruntime

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// env is a runtime on a virtual clock with a recorded trace.
type env struct {
	t      testing.TB
	clk    *vclock.Clock
	rt     *Runtime
	bo     *kubecontainer.Backoff
	events []trace.Event
}

func newEnv(t testing.TB, lat Latencies) *env {
	t.Helper()
	e := &env{t: t, clk: vclock.New(vclock.Epoch)}
	rt, err := New(Options{Clock: e.clk, Latencies: lat, Tracer: trace.Func(func(ev trace.Event) {
		ev.T = e.clk.Since(vclock.Epoch)
		e.events = append(e.events, ev)
	})})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	e.rt = rt
	e.bo, err = kubecontainer.NewBackoff(e.clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		t.Fatalf("NewBackoff() error = %v", err)
	}
	return e
}

// restored is a new env whose runtime restored e's checkpoint, as a restarted process's does.
func (e *env) restored() *env {
	e.t.Helper()
	data, err := e.rt.Checkpoint()
	if err != nil {
		e.t.Fatal(err)
	}
	r := newEnv(e.t, Latencies{})
	if err := r.rt.Restore(data); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// at returns the instant d after the start.
func at(d time.Duration) time.Time { return vclock.Epoch.Add(d) }

func (e *env) status(pod *v1.Pod) *kubecontainer.PodStatus {
	e.t.Helper()
	s, err := e.rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		e.t.Fatalf("GetPodStatus(%s) = %v", pod.Name, err)
	}
	return s
}

// sync syncs the pod with the status the runtime reports now, and checks that SyncPod left that
// status as it was: the PLEG's cache hands the pod sync the status it stores, not a copy.
func (e *env) sync(pod *v1.Pod) (kubecontainer.Result, error) {
	e.t.Helper()
	status := e.status(pod)
	before := clonePodStatus(status)
	res, err := e.rt.SyncPod(pod, status, e.bo)
	if diff := cmp.Diff(before, status); diff != "" {
		e.t.Fatalf("SyncPod(%s) changed the status it was handed (-before +after):\n%s", pod.Name, diff)
	}
	return res, err
}

// clonePodStatus is a deep copy of s, so that a write through anything the status points to (a
// slice's element, a container's resources) shows in a comparison with it.
func clonePodStatus(s *kubecontainer.PodStatus) *kubecontainer.PodStatus {
	c := *s
	c.Sandboxes = slices.Clone(s.Sandboxes)
	c.IPs = slices.Clone(s.IPs)
	c.ContainerStatuses = slices.Clone(s.ContainerStatuses)
	for i := range c.ContainerStatuses {
		r := c.ContainerStatuses[i].Resources
		if r == nil {
			continue
		}
		q := func(q *resource.Quantity) *resource.Quantity {
			if q == nil {
				return nil
			}
			d := q.DeepCopy()
			return &d
		}
		c.ContainerStatuses[i].Resources = &kubecontainer.ContainerResources{
			CPURequest: q(r.CPURequest), CPULimit: q(r.CPULimit),
			MemoryRequest: q(r.MemoryRequest), MemoryLimit: q(r.MemoryLimit),
		}
	}
	return &c
}

// drive plays a minimal kubelet against the runtime until the instant until: it syncs the pod at
// once, again whenever a container of it exits (the PLEG's ContainerDied), and at the expiry of
// every back-off error.
func (e *env) drive(pod *v1.Pod, until time.Time) {
	e.t.Helper()
	syncAt, syncDue := e.clk.Now(), true
	busyUntil := e.clk.Now()
	for {
		now := e.clk.Now()
		if syncDue && !syncAt.After(now) && !busyUntil.After(now) {
			syncDue = false
			res, err := e.sync(pod)
			busyUntil = res.Done
			if exp, ok := kubecontainer.MinBackoffExpiration(err); ok {
				syncAt, syncDue = exp, true
			} else if err != nil && !errors.Is(err, kubecontainer.ErrImagePull) {
				e.t.Fatalf("SyncPod(%s) at %v = %v", pod.Name, now.Sub(vclock.Epoch), err)
			} else if err != nil {
				syncAt, syncDue = res.Done, true
			}
		}
		next, ok := e.rt.NextWake()
		if syncDue {
			due := syncAt
			if busyUntil.After(due) {
				due = busyUntil
			}
			if !ok || due.Before(next) {
				next, ok = due, true
			}
		}
		if !ok || next.After(until) {
			e.clk.Set(until)
			e.rt.Advance()
			return
		}
		e.clk.Set(next)
		n := len(e.events)
		e.rt.Advance()
		for _, ev := range e.events[n:] {
			if ev.Event == "exited" && ev.UID == string(pod.UID) {
				syncAt, syncDue = e.clk.Now(), true
			}
		}
	}
}

// times returns when each event named word happened for container, in order.
func (e *env) times(word, container string) []time.Duration {
	var out []time.Duration
	for _, ev := range e.events {
		if string(ev.Event) == word && ev.Container == container {
			out = append(out, ev.T)
		}
	}
	return out
}

// withExit makes the container exit after the duration after, with code (unless empty).
func withExit(container string, after string, code string) podtest.Option {
	return func(p *v1.Pod) {
		podtest.Annotation(AnnotationExitAfter+container, after)(p)
		if code != "" {
			podtest.Annotation(AnnotationExitCode+container, code)(p)
		}
	}
}

// withSidecar appends restartable init containers.
func withSidecar(names ...string) podtest.Option {
	return func(p *v1.Pod) {
		always := v1.ContainerRestartPolicyAlways
		for _, n := range names {
			p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: n, Image: podtest.DefaultImage, RestartPolicy: &always})
		}
	}
}

// withStartupProbe gives the named container a startup probe.
func withStartupProbe(name string) podtest.Option {
	return func(p *v1.Pod) {
		containerSpec(p, name).StartupProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	}
}

func withInit(names ...string) podtest.Option {
	return func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: n, Image: podtest.DefaultImage})
		}
	}
}

func gaps(exits, starts []time.Duration) []time.Duration {
	// starts[0] is the first run; every later start follows exits[i-1].
	var out []time.Duration
	for i := 1; i < len(starts) && i-1 < len(exits); i++ {
		out = append(out, starts[i]-exits[i-1])
	}
	return out
}

var metaNow = metav1.NewTime(vclock.Epoch)

// TestClonePodStatusIsDeep wants a write through the status sync hands SyncPod (an IP, a
// container's resources) to show against clonePodStatus's copy, so that sync's check sees it.
func TestClonePodStatusIsDeep(t *testing.T) {
	cpu := resource.MustParse("100m")
	s := &kubecontainer.PodStatus{
		IPs:               []string{"10.0.0.1"},
		ContainerStatuses: []kubecontainer.ContainerStatus{{Name: "c", Resources: &kubecontainer.ContainerResources{CPURequest: &cpu}}},
	}
	writes := []struct {
		name  string
		write func(*kubecontainer.PodStatus)
	}{
		{"an IP", func(s *kubecontainer.PodStatus) { s.IPs[0] = "10.0.0.2" }},
		{"a container's resources", func(s *kubecontainer.PodStatus) {
			s.ContainerStatuses[0].Resources.CPURequest.Set(1)
		}},
		{"a container's resources' pointer", func(s *kubecontainer.PodStatus) {
			s.ContainerStatuses[0].Resources.MemoryLimit = &cpu
		}},
	}
	for _, w := range writes {
		before := clonePodStatus(s)
		w.write(s)
		if cmp.Diff(before, s) == "" {
			t.Errorf("a write of %s does not show against the copy", w.name)
		}
	}
}
