package fakeruntime

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestImagePullFailureAndBackoff checks the pull back-off's window (10s, then 20s, from each
// failure) and that, as in v1.35.0, it is a plain error with no expiry for the pod worker.
func TestImagePullFailureAndBackoff(t *testing.T) {
	e := newEnv(t, Latencies{ImagePull: 2 * time.Second})
	e.rt.FailImagePull("busybox:1.36", 2)
	pod := podtest.New("pull")

	steps := []struct {
		at       time.Duration
		wantErr  error
		wantDone time.Duration
	}{
		{at: 0, wantErr: kubecontainer.ErrImagePull, wantDone: 2 * time.Second},
		{at: 2 * time.Second, wantErr: kubecontainer.ErrImagePullBackOff, wantDone: 2 * time.Second},
		{at: 12 * time.Second, wantErr: kubecontainer.ErrImagePull, wantDone: 14 * time.Second},
		{at: 20 * time.Second, wantErr: kubecontainer.ErrImagePullBackOff, wantDone: 20 * time.Second},
		{at: 34 * time.Second, wantDone: 36 * time.Second},
	}
	for _, s := range steps {
		e.clk.Set(at(s.at))
		res, err := e.sync(pod)
		if !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
			t.Errorf("SyncPod() at %v error = %v, want %v", s.at, err, s.wantErr)
		}
		if !res.Done.Equal(at(s.wantDone)) {
			t.Errorf("SyncPod() at %v Done = %v, want %v", s.at, res.Done.Sub(at(0)), s.wantDone)
		}
		if exp, ok := kubecontainer.MinBackoffExpiration(err); ok {
			t.Errorf("SyncPod() at %v back-off expiry = %v, want none: only a crash loop carries one", s.at, exp.Sub(at(0)))
		}
	}
	e.clk.Set(at(40 * time.Second))
	if c := e.status(pod).FindContainerStatusByName("app"); c == nil || c.State != kubecontainer.ContainerStateRunning {
		t.Errorf("app = %+v, want running", c)
	}
}

func TestImagePullPolicies(t *testing.T) {
	tests := []struct {
		name      string
		image     string
		policy    v1.PullPolicy
		preloaded bool
		wantPulls int
		wantErr   error
	}{
		{name: "IfNotPresent missing pulls", image: "nginx:1.27", policy: v1.PullIfNotPresent, wantPulls: 1},
		{name: "IfNotPresent present does not pull", image: "nginx:1.27", policy: v1.PullIfNotPresent, preloaded: true},
		{name: "Always present pulls", image: "nginx:1.27", policy: v1.PullAlways, preloaded: true, wantPulls: 1},
		{name: "Never missing fails", image: "nginx:1.27", policy: v1.PullNever, wantErr: kubecontainer.ErrImageNeverPull},
		{name: "Never present runs", image: "nginx:1.27", policy: v1.PullNever, preloaded: true},
		{name: "default for latest is Always", image: "nginx:latest", preloaded: true, wantPulls: 1},
		{name: "default for untagged is Always", image: "registry:5000/nginx", preloaded: true, wantPulls: 1},
		{name: "default for a tag is IfNotPresent", image: "registry:5000/nginx:1.27", preloaded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Latencies{ImagePull: time.Second})
			if tt.preloaded {
				e.rt.images[tt.image] = at(0)
			}
			pod := podtest.New("img")
			pod.Spec.Containers[0].Image = tt.image
			pod.Spec.Containers[0].ImagePullPolicy = tt.policy
			_, err := e.sync(pod)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("SyncPod() error = %v, want %v", err, tt.wantErr)
			}
			e.clk.Set(at(time.Minute))
			e.rt.Advance()
			if got := len(e.times("pull", "app")); got != tt.wantPulls {
				t.Errorf("pulls = %d, want %d", got, tt.wantPulls)
			}
		})
	}
}

// TestImagePullsShareThePuller checks the node's image puller: with one slot (the kubelet's
// serializeImagePulls) three pods asking at once get their images one after the other, with two
// slots two at a time, and without a limit all at once.
func TestImagePullsShareThePuller(t *testing.T) {
	tests := []struct {
		name     string
		slots    int
		wantDone []time.Duration
	}{
		{name: "serial", slots: 1, wantDone: []time.Duration{3 * time.Second, 6 * time.Second, 9 * time.Second}},
		{name: "two at once", slots: 2, wantDone: []time.Duration{3 * time.Second, 3 * time.Second, 6 * time.Second}},
		{name: "no limit", slots: 0, wantDone: []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			rt, err := New(Options{Clock: clk, Latencies: Latencies{ImagePull: 3 * time.Second}, Tracer: trace.Discard, MaxParallelImagePulls: tt.slots})
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Duration
			for _, name := range []string{"a", "b", "c"} {
				pod := podtest.New(name)
				pod.Spec.Containers[0].Image = "registry.example/" + name + ":1"
				res, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil)
				if err != nil {
					t.Fatalf("SyncPod(%s) = %v", name, err)
				}
				got = append(got, res.Done.Sub(vclock.Epoch))
			}
			if diff := cmp.Diff(tt.wantDone, got); diff != "" {
				t.Errorf("SyncPod Done (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, MaxParallelImagePulls: -1}); err == nil {
		t.Error("New(MaxParallelImagePulls -1) error = nil, want an error")
	}
}

// TestPullsOfOneImageShareItsLayers checks the content store: a pull of an image that another
// pull completed meanwhile only resolves its manifest (ImagePullPresent), and a pull that starts
// while another pull fetches the image ends when that one does. Three pods ask for one image at
// 0, 1s and 2s; a pull takes 3s, a pull of a present image 200ms.
func TestPullsOfOneImageShareItsLayers(t *testing.T) {
	tests := []struct {
		name     string
		slots    int
		policy   v1.PullPolicy
		wantDone []time.Duration
	}{
		// The first pull ends at 3s; the queued ones start then and find the layers there.
		{name: "serial", slots: 1, policy: v1.PullIfNotPresent, wantDone: []time.Duration{3 * time.Second, 3200 * time.Millisecond, 3400 * time.Millisecond}},
		// The later pulls run beside the first and end with it.
		{name: "no limit", slots: 0, policy: v1.PullIfNotPresent, wantDone: []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}},
		// Once present, an Always pull resolves the manifest only.
		{name: "always", slots: 1, policy: v1.PullAlways, wantDone: []time.Duration{3 * time.Second, 3200 * time.Millisecond, 3400 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			rt, err := New(Options{Clock: clk, Latencies: Latencies{ImagePull: 3 * time.Second, ImagePullPresent: 200 * time.Millisecond},
				Tracer: trace.Discard, MaxParallelImagePulls: tt.slots})
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Duration
			for i, name := range []string{"a", "b", "c"} {
				clk.Set(at(time.Duration(i) * time.Second))
				pod := podtest.New(name)
				pod.Spec.Containers[0].ImagePullPolicy = tt.policy
				res, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil)
				if err != nil {
					t.Fatalf("SyncPod(%s) = %v", name, err)
				}
				got = append(got, res.Done.Sub(vclock.Epoch))
			}
			if diff := cmp.Diff(tt.wantDone, got); diff != "" {
				t.Errorf("SyncPod Done (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImagePullBackOffEndsWithTheKubelet: the pull back-off is the kubelet's image manager's, in
// the process's memory, so a restarted kubelet (AttachKubelet) pulls at once where the old one
// was backing off. The scripted failures are the registry's and carry over.
func TestImagePullBackOffEndsWithTheKubelet(t *testing.T) {
	e := newEnv(t, Latencies{ImagePull: 2 * time.Second})
	e.rt.FailImagePull("busybox:1.36", 2)
	pod := podtest.New("pull")
	if _, err := e.sync(pod); !errors.Is(err, kubecontainer.ErrImagePull) {
		t.Fatalf("first SyncPod() error = %v, want ErrImagePull", err)
	}
	e.clk.Set(at(4 * time.Second))
	if _, err := e.sync(pod); !errors.Is(err, kubecontainer.ErrImagePullBackOff) {
		t.Fatalf("SyncPod() in the back-off error = %v, want ErrImagePullBackOff", err)
	}
	e.rt.AttachKubelet(nil, nil, nil, nil)
	if _, err := e.sync(pod); !errors.Is(err, kubecontainer.ErrImagePull) {
		t.Errorf("SyncPod() of a restarted kubelet error = %v, want ErrImagePull: a pull, the second scripted failure", err)
	}
}

// TestKubeletRestartEndsItsSyncPod: a SyncPod waiting for a pull when its kubelet restarts
// (AttachKubelet) dies with the process: it records no Pulled event and creates and starts no
// container. The runtime's fetch goes on, so the new process's pull, which starts at once on its
// own empty serial puller, ends when the old one would have, and one container starts.
func TestKubeletRestartEndsItsSyncPod(t *testing.T) {
	e := &env{t: t, clk: vclock.New(vclock.Epoch)}
	rt, err := New(Options{
		Clock:                 e.clk,
		Latencies:             Latencies{SandboxStart: 500 * time.Millisecond, ImagePull: 10 * time.Second, ContainerStart: 500 * time.Millisecond},
		MaxParallelImagePulls: 1,
		Tracer: trace.Func(func(ev trace.Event) {
			ev.T = e.clk.Since(vclock.Epoch)
			e.events = append(e.events, ev)
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	// advance applies each scheduled step at its instant, up to until.
	advance := func(until time.Time) {
		for next, ok := e.rt.NextWake(); ok && !next.After(until); next, ok = e.rt.NextWake() {
			e.clk.Set(next)
			e.rt.Advance()
		}
		e.clk.Set(until)
	}
	pod := podtest.New("web")
	if _, err := e.sync(pod); err != nil { // sandbox at 0.5s, pulled at 10.5s, running at 11s
		t.Fatalf("first SyncPod() error = %v", err)
	}
	advance(at(4 * time.Second))
	e.rt.AttachKubelet(nil, nil, nil, nil)
	res, err := e.sync(pod)
	if err != nil {
		t.Fatalf("SyncPod() of the restarted kubelet error = %v", err)
	}
	if want := at(11 * time.Second); !res.Done.Equal(want) {
		t.Errorf("SyncPod() of the restarted kubelet Done = %v, want %v: the pull ends with the runtime's fetch", res.Done.Sub(vclock.Epoch), want.Sub(vclock.Epoch))
	}
	advance(at(30 * time.Second))
	type seen struct {
		Event   trace.Kind
		T       time.Duration
		Delay   time.Duration
		Message string
	}
	var got []seen
	for _, ev := range e.events {
		switch ev.Event {
		case trace.KindPull, trace.KindPulled, trace.KindCreated, trace.KindStarted:
			got = append(got, seen{ev.Event, ev.T, ev.Delay, ev.Message})
		}
	}
	want := []seen{
		{trace.KindPull, 500 * time.Millisecond, 0, podtest.DefaultImage},
		{trace.KindPull, 4 * time.Second, 0, podtest.DefaultImage}, // no wait behind the dead pull
		{trace.KindPulled, 10500 * time.Millisecond, 0, podtest.DefaultImage},
		{trace.KindCreated, 10500 * time.Millisecond, 0, "c-000002"},
		{trace.KindStarted, 11 * time.Second, 0, "c-000002"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pull, create and start events (-want +got):\n%s", diff)
	}
	if n := len(e.status(pod).ContainerStatuses); n != 1 {
		t.Errorf("%d containers, want 1", n)
	}
}

// TestQueuedPullDiesWithTheKubelet: a pull waiting in the kubelet's serial puller is the
// process's memory and never reached the runtime. After a restart (AttachKubelet) the runtime
// does not take the image as being fetched, a scripted failure that pull would have used up is
// left for the next one, and the checkpoint a restarted run reads does not hold the image.
func TestQueuedPullDiesWithTheKubelet(t *testing.T) {
	const other = "registry.example/other:1"
	tests := []struct {
		name     string
		fail     bool
		wantDone time.Duration // of the new process's SyncPod of b
		wantErr  error
	}{
		// b's sandbox is there: the new process pulls at once, a whole pull from 4s to 14s,
		// and the container is running at 14.5s.
		{name: "queued pull", wantDone: 14*time.Second + 500*time.Millisecond},
		{name: "queued scripted failure", fail: true, wantDone: 14 * time.Second, wantErr: kubecontainer.ErrImagePull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{t: t, clk: vclock.New(vclock.Epoch)}
			rt, err := New(Options{Clock: e.clk, Tracer: trace.Discard, MaxParallelImagePulls: 1,
				Latencies: Latencies{SandboxStart: 500 * time.Millisecond, ImagePull: 10 * time.Second, ContainerStart: 500 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			e.rt = rt
			if tt.fail {
				e.rt.FailImagePull(other, 1)
			}
			a, b := podtest.New("a"), podtest.New("b")
			b.Spec.Containers[0].Image = other
			if _, err := e.sync(a); err != nil { // pulls 0.5s..10.5s
				t.Fatal(err)
			}
			_, _ = e.sync(b) // queued: would pull 10.5s..20.5s
			e.clk.Set(at(4 * time.Second))
			e.rt.Advance()
			data, err := e.rt.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			var cp checkpoint
			if err := json.Unmarshal(data, &cp); err != nil {
				t.Fatal(err)
			}
			if _, ok := cp.Images[other]; ok {
				t.Errorf("checkpoint images = %v, want no %s: its pull waits in the kubelet", cp.Images, other)
			}
			if _, ok := cp.Images[podtest.DefaultImage]; !ok {
				t.Errorf("checkpoint images = %v, want %s: its pull reached the runtime", cp.Images, podtest.DefaultImage)
			}
			e.rt.AttachKubelet(nil, nil, nil, nil)
			res, err := e.sync(b)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("new process's SyncPod of b error = %v, want %v", err, tt.wantErr)
			}
			if want := at(tt.wantDone); !res.Done.Equal(want) {
				t.Errorf("new process's SyncPod of b Done = %v, want %v", res.Done.Sub(vclock.Epoch), want.Sub(vclock.Epoch))
			}
		})
	}
}
