package sources

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sources/staticpod"
)

// mustSet fails unless err is nil and u is a SET of exactly want.
func mustSet(t *testing.T, what string, u *podconfig.Update, err error, want ...string) *podconfig.Update {
	t.Helper()
	if err != nil {
		t.Errorf("%s: error = %v, want nil", what, err)
	}
	if u == nil {
		t.Fatalf("%s: no update, want SET %v", what, want)
	}
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, names(u)); diff != "" {
		t.Errorf("%s: SET mismatch (-want +got):\n%s", what, diff)
	}
	return u
}

// TestQ3StalePodReappears: an all-invalid directory sends an empty SET without clearing the
// store, so the next watch event resurrects the stale pod until a relist with a valid file.
func TestQ3StalePodReappears(t *testing.T) {
	dir := t.TempDir()
	f, _, _ := newTestFile(t, dir)
	a, b := join(dir, "a.yaml"), join(dir, "b.yaml")
	writeFile(t, a, podYAML("a", "a", ""))
	u, err := f.Relist()
	mustSet(t, "relist", u, err, "default/a-node1")

	writeFile(t, a, "garbage: [")
	if u, err := f.HandleEvent(WatchEvent{Path: a, Op: WatchModify}); u != nil || err == nil {
		t.Errorf("HandleEvent(modify to garbage) = %v, %v, want no update and an error", names(u), err)
	}
	u, err = f.Relist()
	if u == nil || len(u.Pods) != 0 {
		t.Errorf("Relist() over an all-invalid directory = %v, want an empty SET", names(u))
	}
	if err == nil || !strings.Contains(err.Error(), a) {
		t.Errorf("Relist() error = %v, want one naming %s", err, a)
	}

	writeFile(t, b, podYAML("b", "b", ""))
	u, err = f.HandleEvent(WatchEvent{Path: b, Op: WatchAdd})
	mustSet(t, "add b", u, err, "default/a-node1", "default/b-node1")

	u, err = f.Relist()
	if err == nil {
		t.Errorf("Relist() error = nil, want the report for %s", a)
	}
	mustSet(t, "relist with a valid file", u, nil, "default/b-node1")
}

// TestQ4InvalidFileKeepsPod: a file that turns invalid keeps its pod until the next relist in
// directory mode, and indefinitely in single-file mode.
func TestQ4InvalidFileKeepsPod(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		f, _, _ := newTestFile(t, dir)
		a, b := join(dir, "a.yaml"), join(dir, "b.yaml")
		writeFile(t, a, podYAML("a", "a", ""))
		writeFile(t, b, podYAML("b", "b", ""))
		u, err := f.Relist()
		mustSet(t, "relist", u, err, "default/a-node1", "default/b-node1")
		writeFile(t, a, podYAML("a", "A", ""))
		if u, err := f.HandleEvent(WatchEvent{Path: a, Op: WatchModify}); u != nil || !errors.Is(err, staticpod.ErrInvalidPod) {
			t.Errorf("HandleEvent(invalid edit) = %v, %v, want no update and ErrInvalidPod", names(u), err)
		}
		u, err = f.HandleEvent(WatchEvent{Path: b, Op: WatchModify})
		mustSet(t, "touch b", u, err, "default/a-node1", "default/b-node1")
		u, _ = f.Relist()
		mustSet(t, "relist", u, nil, "default/b-node1")
	})
	t.Run("singleFile", func(t *testing.T) {
		path := join(t.TempDir(), "a.yaml")
		f, _, _ := newTestFile(t, path)
		writeFile(t, path, podYAML("a", "a", ""))
		u, err := f.Relist()
		first := mustSet(t, "relist", u, err, "default/a-node1")
		writeFile(t, path, podYAML("a", "A", ""))
		for i := 0; i < 2; i++ {
			if u, err := f.Relist(); u != nil || !errors.Is(err, staticpod.ErrInvalidPod) {
				t.Errorf("Relist() of an invalid single file = %v, %v, want no update and ErrInvalidPod", names(u), err)
			}
		}
		writeFile(t, path, podYAML("a", "a", "  labels: {v: \"2\"}\n"))
		u, err = f.Relist()
		second := mustSet(t, "relist after fix", u, err, "default/a-node1")
		if uids(first)["default/a-node1"] == uids(second)["default/a-node1"] {
			t.Errorf("UID after an edit in single-file mode did not change")
		}
	})
}

// TestQ5StaleFileKey: relists never prune the path-to-key map, so a late delete event for a path
// that no longer holds the pod deletes whatever pod owns that key now.
func TestQ5StaleFileKey(t *testing.T) {
	dir := t.TempDir()
	f, _, _ := newTestFile(t, dir)
	a, b := join(dir, "a.yaml"), join(dir, "b.yaml")
	writeFile(t, a, podYAML("web", "web", ""))
	u, err := f.Relist()
	mustSet(t, "relist", u, err, "default/web-node1")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	u, err = f.Relist()
	mustSet(t, "relist after rename", u, err, "default/web-node1")
	u, err = f.HandleEvent(WatchEvent{Path: a, Op: WatchDelete})
	mustSet(t, "late delete of the old path", u, err)
	// The key is gone from the store, so the delete for b finds nothing.
	u, err = f.HandleEvent(WatchEvent{Path: b, Op: WatchDelete})
	if u != nil || !errors.Is(err, ErrNotInCache) {
		t.Errorf("HandleEvent(delete b) = %v, %v, want no update and ErrNotInCache", names(u), err)
	}
}

// TestDuplicateNamesAcrossFiles: files with the same namespace/name collapse into one entry; a
// relist keeps the last file in sorted order, and a watch event makes its file current.
func TestDuplicateNamesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	f, _, _ := newTestFile(t, dir)
	a, b := join(dir, "a.yaml"), join(dir, "b.yaml")
	writeFile(t, a, podYAML("web", "from-a", ""))
	writeFile(t, b, podYAML("web", "from-b", ""))
	container := func(u *podconfig.Update) string { return u.Pods[0].Spec.Containers[0].Name }
	u, err := f.Relist()
	mustSet(t, "relist", u, err, "default/web-node1")
	if got := container(u); got != "from-b" {
		t.Errorf("relist kept the pod of container %q, want from-b (the last file)", got)
	}
	u, err = f.HandleEvent(WatchEvent{Path: a, Op: WatchModify})
	mustSet(t, "touch a", u, err, "default/web-node1")
	if got := container(u); got != "from-a" {
		t.Errorf("after an event on a.yaml the pod has container %q, want from-a", got)
	}
	u, _ = f.Relist()
	if got := container(u); got != "from-b" {
		t.Errorf("relist kept the pod of container %q, want from-b", got)
	}
}

func TestPathMissingThenAppearing(t *testing.T) {
	dir := join(t.TempDir(), "manifests")
	f, _, _ := newTestFile(t, dir)
	u, err := f.Relist()
	if !errors.Is(err, ErrPathNotExist) || u == nil || len(u.Pods) != 0 {
		t.Errorf("Relist() of a missing path = %v, %v, want an empty SET and ErrPathNotExist", names(u), err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(dir, "web.yaml"), podYAML("web", "web", ""))
	if u, err := f.CheckWatchPath(); u != nil || err != nil {
		t.Errorf("CheckWatchPath() = %v, %v, want nothing once the path exists", names(u), err)
	}
	u, err = f.Relist()
	mustSet(t, "relist", u, err, "default/web-node1")
}

func TestSizeLimit(t *testing.T) {
	if raceEnabled {
		t.Skip(oneGoroutineUnderRace)
	}
	dir := t.TempDir()
	f, _, ev := newTestFile(t, dir)
	// JSON padded with trailing spaces: valid at any size and quick to decode.
	pad := func(name string, size int) string {
		base := string(mustJSON(t, simplePod(name, "nginx")))
		return base + strings.Repeat(" ", size-len(base))
	}
	big, ok := join(dir, "big.json"), join(dir, "ok.json")
	writeFile(t, big, pad("big", maxConfigLength))
	writeFile(t, ok, pad("oky", maxConfigLength-1))
	ev.take()
	u, err := f.Relist()
	mustSet(t, "relist", u, nil, "default/oky-node1")
	if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), big+": ") {
		t.Errorf("Relist() error = %v, want ErrTooLarge naming %s", err, big)
	}
	if got := ev.take(); len(got) == 0 || got[0].Reason != "TooLarge" {
		t.Errorf("trace = %+v, want a TooLarge error first", got)
	}
}

func TestSymlinks(t *testing.T) {
	dir, target := t.TempDir(), t.TempDir()
	f, _, _ := newTestFile(t, dir)
	writeFile(t, join(target, "web.yaml"), podYAML("web", "web", ""))
	if err := os.Symlink(join(target, "web.yaml"), join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(join(target, "missing.yaml"), join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	u, err := f.Relist()
	if err == nil || !strings.Contains(err.Error(), "dangling.yaml") {
		t.Errorf("Relist() error = %v, want the dangling link reported", err)
	}
	mustSet(t, "relist", u, nil, "default/web-node1")
}

func TestFileNextWake(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	f := newFile(t, FileOptions{Path: t.TempDir(), NodeName: "node1", Clock: clk, Period: 20 * time.Second, Tracer: trace.Discard})
	check := func(want time.Duration) {
		t.Helper()
		got, ok := f.NextWake()
		if !ok || got.Sub(vclock.Epoch) != want {
			t.Errorf("NextWake() = %v, %v, want start+%v", got.Sub(vclock.Epoch), ok, want)
		}
	}
	check(0)
	f.Relist()
	check(20 * time.Second)
	clk.Advance(20 * time.Second)
	f.Relist()
	check(40 * time.Second)
	// A relist that runs late keeps the ticker's grid and drops the missed ticks.
	clk.Advance(45 * time.Second)
	f.Relist()
	check(80 * time.Second)
	// A watch event does not move the grid.
	f.HandleEvent(WatchEvent{Path: join(t.TempDir(), "x"), Op: WatchDelete})
	check(80 * time.Second)
}

func TestWatchOpFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   fsnotify.Op
		want WatchOp
		ok   bool
	}{
		{"create", fsnotify.Create, WatchAdd, true},
		{"createWrite", fsnotify.Create | fsnotify.Write, WatchAdd, true},
		{"write", fsnotify.Write, WatchModify, true},
		{"chmod", fsnotify.Chmod, WatchModify, true},
		{"remove", fsnotify.Remove, WatchDelete, true},
		{"rename", fsnotify.Rename, WatchDelete, true},
		{"none", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := watchOpFor(tc.op)
			if got != tc.want || ok != tc.ok {
				t.Errorf("watchOpFor(%v) = %v, %v, want %v, %v", tc.op, got, ok, tc.want, tc.ok)
			}
		})
	}
	if got := WatchOp(7).String(); got != "WatchOp(7)" {
		t.Errorf("WatchOp(7).String() = %q, want WatchOp(7)", got)
	}
}
