package kubelet

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	if !next.saved || next.last != sha256.Sum256(data) {
		t.Errorf("restored keeper: saved %v, digest %x, want the digest of %s", next.saved, next.last, data)
	}

	// A damaged file is ignored: the runtime starts empty.
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := &runtimeKeeper{path: path, rt: newRuntime(), clock: clk}
	bad.restore(ctx)
	if bad.saved {
		t.Errorf("a damaged file was taken (digest %x)", bad.last)
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
	// A state whose version moved while its bytes did not (a change undone, say) is encoded and
	// found equal to the file's by its digest: not written either.
	k.version--
	clk.Set(vclock.Epoch.Add(6 * runtimeCheckpointPeriod))
	k.save(ctx, false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a save of the same bytes under a new version wrote the file (%v)", err)
	}
	if k.version != rt.StateVersion() {
		t.Errorf("keeper's version %d after an equal save, want the runtime's %d", k.version, rt.StateVersion())
	}
}

// tickingClock moves on by a millisecond at every reading, as the real clock moves while the
// keeper encodes: an effect can fall due between two of the keeper's readings.
type tickingClock struct{ now time.Time }

func (c *tickingClock) Now() time.Time {
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func (c *tickingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// TestRuntimeKeeperSavesWhatFellDueWhileSaving: a container start that falls due while a save
// reads the runtime is in the file by the next save, whatever reading it fell due at.
func TestRuntimeKeeperSavesWhatFellDueWhileSaving(t *testing.T) {
	ctx := context.Background()
	for offset := range 12 {
		t.Run(fmt.Sprintf("%dms", offset), func(t *testing.T) {
			clk := &tickingClock{now: vclock.Epoch}
			rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard,
				Latencies: fakeruntime.Latencies{ContainerStart: 10 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "busybox"}}}}
			if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "state.json")
			k := &runtimeKeeper{path: path, rt: rt, clock: clk}
			clk.now = clk.now.Add(time.Duration(offset) * time.Millisecond)
			k.save(ctx, true)
			clk.now = clk.now.Add(time.Hour)
			k.save(ctx, true)
			saved, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := rt.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			if string(saved) != string(want) {
				t.Errorf("file after a later save:\n%s\nwant the runtime's state:\n%s", saved, want)
			}
		})
	}
}

// TestRuntimeKeepersShareBuffers: the keepers of a fleet's nodes, each on its own goroutine
// (as each node's sync loop runs), encode through the one pool of buffers at once; each file
// holds its own runtime's state, never bytes of another node's, and the race detector sees
// no buffer used by two at a time. The nodes' states differ in length, so a buffer handed from
// a longer state to a shorter one would show.
func TestRuntimeKeepersShareBuffers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var wg sync.WaitGroup
	for n := range 16 {
		wg.Go(func() {
			clk := vclock.New(vclock.Epoch)
			rt, err := fakeruntime.New(fakeruntime.Options{Clock: clk, Tracer: trace.Discard})
			if err != nil {
				t.Error(err)
				return
			}
			k := &runtimeKeeper{path: filepath.Join(dir, fmt.Sprintf("node-%d.json", n)), rt: rt, clock: clk}
			for i := range 10 + n {
				pod := &v1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d-pod-%d", n, i), Namespace: "default",
						UID: types.UID(fmt.Sprintf("uid-%d-%d", n, i))},
					Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "busybox"}}},
				}
				if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
					t.Error(err)
					return
				}
				k.save(ctx, true)
				got, err := os.ReadFile(k.path)
				if err != nil {
					t.Error(err)
					return
				}
				want, err := rt.Checkpoint()
				if err != nil {
					t.Error(err)
					return
				}
				if string(got) != string(want) {
					t.Errorf("node %d, save %d: the file holds\n%s\nwant its runtime's\n%s", n, i, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
