package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestRuntimeKeeper: the keeper writes the runtime's state once it changed and a period passed
// (or at once when forced), restores it into a new runtime, and ignores a file it cannot restore.
func TestRuntimeKeeper(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	newRuntime := func() *fakeruntime.Runtime {
		rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	path := filepath.Join(t.TempDir(), "runtime", "state.json")
	k := &runtimeKeeper{path: path, rt: newRuntime(), clock: clk}
	k.restore(ctx) // no file: a rebooted node
	k.save(ctx, true)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("after a forced save: %v", err)
	}

	// A save within the period writes nothing.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clk.Set(vclock.Epoch.Add(time.Second / 2))
	k.save(ctx, false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("save within the period wrote the file (%v)", err)
	}

	// A restore of the file written gives the next keeper the same state.
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	next := &runtimeKeeper{path: path, rt: newRuntime(), clock: clk}
	next.restore(ctx)
	if string(next.last) != string(data) {
		t.Errorf("restored state = %s, want %s", next.last, data)
	}

	// A damaged file is ignored: the runtime starts empty.
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := &runtimeKeeper{path: path, rt: newRuntime(), clock: clk}
	bad.restore(ctx)
	if bad.last != nil {
		t.Errorf("a damaged file was taken: %s", bad.last)
	}
	if pods, _ := bad.rt.GetPods(true); len(pods) != 0 {
		t.Errorf("runtime after a damaged file has %d pods", len(pods))
	}
}

// TestRuntimeKeeperFollowsChanges: once a period passed, a save writes a changed state and
// leaves an unchanged one alone.
func TestRuntimeKeeperFollowsChanges(t *testing.T) {
	ctx := context.Background()
	clk := vclock.New(vclock.Epoch)
	rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.json")
	k := &runtimeKeeper{path: path, rt: rt, clock: clk}
	k.save(ctx, true)
	empty, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "busybox"}}}}
	if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
		t.Fatal(err)
	}
	clk.Set(vclock.Epoch.Add(2 * runtimeCheckpointPeriod))
	k.save(ctx, false)
	running, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(running) == string(empty) || !strings.Contains(string(running), `"uid-web"`) {
		t.Errorf("after a sync and a period the file holds %s, want the pod's sandbox and container", running)
	}
	// Nothing changes: a later save leaves the file as it is (a removed file stays removed).
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clk.Set(vclock.Epoch.Add(4 * runtimeCheckpointPeriod))
	k.save(ctx, false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a save of an unchanged state wrote the file (%v)", err)
	}
}
