package pleg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

var _ pleg.Lister = (*fakeruntime.Runtime)(nil)

// numbered gives the pod n containers, c0 to c<n-1>, running podtest's image.
func numbered(n int) podtest.Option {
	cs := make([]v1.Container, n)
	for i := range cs {
		cs[i] = podtest.Container(fmt.Sprintf("c%d", i), podtest.DefaultImage)
	}
	return podtest.Containers(cs...)
}

// TestRelistAgainstFakeRuntime follows one pod through the runtime's latencies: the PLEG sees each
// step only once its instant has come.
func TestRelistAgainstFakeRuntime(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Latencies: fakeruntime.DefaultLatencies, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("fakeruntime.New() = %v", err)
	}
	cache := pleg.NewCache()
	g, err := pleg.New(pleg.Options{Runtime: rt, Cache: cache, Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("pleg.New() = %v", err)
	}
	backOff, err := kubecontainer.NewBackoff(clk, kubecontainer.InitialBackoff, kubecontainer.MaxContainerBackoff)
	if err != nil {
		t.Fatalf("NewBackoff() = %v", err)
	}
	pod := podtest.New("web", numbered(1), podtest.Annotation(fakeruntime.AnnotationExitAfter+"c0", "10s"),
		podtest.Annotation(fakeruntime.AnnotationExitCode+"c0", "3"))
	if _, err := rt.SyncPod(pod, nil, backOff); err != nil {
		t.Fatalf("SyncPod() = %v", err)
	}
	var got []string
	for clk.Since(vclock.Epoch) <= 15*time.Second {
		w, _ := g.NextWake()
		clk.Set(w)
		rt.Advance()
		for _, e := range g.Relist() {
			got = append(got, fmt.Sprintf("%v %s %s", clk.Since(vclock.Epoch), e.Type, e.Data))
		}
	}
	want := []string{
		"1s ContainerStarted s-000001",
		"3s ContainerStarted c-000001",
		"13s ContainerDied c-000001",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	st, err, ok := cache.GetNewerThan(pod.UID, vclock.Epoch.Add(12*time.Second))
	if !ok || err != nil || st.ContainerStatuses[0].ExitCode != 3 {
		t.Errorf("GetNewerThan(12s) = %+v, %v, %v, want the exited status", st, err, ok)
	}
}

// BenchmarkRelist10000Containers measures a steady-state relist of 2,500 pods with 4 running
// containers each, the runtime's listing included.
func BenchmarkRelist10000Containers(b *testing.B) {
	clk := vclock.New(vclock.Epoch)
	rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		b.Fatalf("fakeruntime.New() = %v", err)
	}
	for i := range 2500 {
		if _, err := rt.SyncPod(podtest.New(fmt.Sprintf("p%04d", i), numbered(4)), nil, nil); err != nil {
			b.Fatalf("SyncPod() = %v", err)
		}
	}
	g, err := pleg.New(pleg.Options{Runtime: rt, Cache: pleg.NewCache(), Clock: clk, Tracer: trace.Discard})
	if err != nil {
		b.Fatalf("pleg.New() = %v", err)
	}
	if n := len(g.Relist()); n != 2500*5 {
		b.Fatalf("first Relist() = %d events, want %d", n, 2500*5)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if n := len(g.Relist()); n != 0 {
			b.Fatalf("steady Relist() = %d events, want 0", n)
		}
	}
}
