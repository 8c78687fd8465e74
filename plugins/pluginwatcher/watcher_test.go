package pluginwatcher

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubelet/filewatch"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// recordingDesired records the calls the watcher makes, and signals each on calls when not nil.
type recordingDesired struct {
	log   []string
	calls chan string
	n     int
}

func (d *recordingDesired) AddOrUpdatePlugin(path string) (string, error) {
	if path == "" {
		return "", errors.New("socket path is empty")
	}
	d.n++
	d.record("add " + path)
	return strconv.Itoa(d.n), nil
}

func (d *recordingDesired) RemovePlugin(path string) { d.record("remove " + path) }

func (d *recordingDesired) record(s string) {
	d.log = append(d.log, s)
	if d.calls != nil {
		d.calls <- s
	}
}

type watchList []string

func (w *watchList) Add(dir string) error { *w = append(*w, dir); return nil }

func listen(t *testing.T, path string) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The startup traversal watches every directory (hidden ones too) and finds every socket but
// those whose name starts with a dot; plain files are ignored.
func TestStartTraversesTree(t *testing.T) {
	dir := filepath.Join(shortTemp(t), "plugins_registry")
	for _, d := range []string{"a/b", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"top.sock", "a/b/deep.sock", ".dot.sock"} {
		defer listen(t, filepath.Join(dir, s)).Close()
	}
	d := &recordingDesired{}
	w, err := New(Options{Dir: dir, FS: OS{}, Desired: d, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var watched watchList
	if err := w.Start(&watched); err != nil {
		t.Fatal(err)
	}
	wantWatched := watchList{dir, filepath.Join(dir, ".hidden"), filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")}
	if diff := cmp.Diff(wantWatched, watched); diff != "" {
		t.Errorf("watched (-want +got):\n%s", diff)
	}
	want := []string{"add " + filepath.Join(dir, "a", "b", "deep.sock"), "add " + filepath.Join(dir, "top.sock")}
	if diff := cmp.Diff(want, d.log); diff != "" {
		t.Errorf("desired state calls (-want +got):\n%s", diff)
	}
}

func TestCreateAndRemove(t *testing.T) {
	dir := shortTemp(t)
	defer listen(t, filepath.Join(dir, "p.sock")).Close()
	d := &recordingDesired{}
	w, err := New(Options{Dir: dir, FS: OS{}, Desired: d, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var watched watchList
	sock := filepath.Join(dir, "p.sock")
	for range 2 {
		if err := w.Create(sock, &watched); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Create(filepath.Join(dir, "gone.sock"), &watched); err == nil {
		t.Error("a create event for a vanished file must fail")
	}
	w.Remove(sock)
	w.Remove(filepath.Join(dir, "never.sock"))
	want := []string{"add " + sock, "add " + sock, "remove " + sock, "remove " + filepath.Join(dir, "never.sock")}
	if diff := cmp.Diff(want, d.log); diff != "" {
		t.Errorf("desired state calls (-want +got):\n%s", diff)
	}
}

// Run on the real fsnotify: a socket created in a new sub-directory is found, its removal seen.
func TestRunFollowsSocketsInNewDirectories(t *testing.T) {
	dir := shortTemp(t)
	d := &recordingDesired{calls: make(chan string, 16)}
	w, err := New(Options{Dir: dir, FS: OS{}, Desired: d, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	fw, err := filewatch.NewInotify()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, fwDone := make(chan error), make(chan error)
	ready := make(chan struct{})
	go func() { fwDone <- fw.Run(ctx) }()
	go func() { done <- Run(ctx, w, fw.Watch(), nil, ready) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := <-fwDone; err != nil {
			t.Error(err)
		}
	}()
	<-ready
	sub := filepath.Join(dir, "driver")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sub, "reg.sock")
	l := listen(t, sock)
	expect(t, d.calls, "add "+sock)
	_ = l.Close() // a unix listener removes its socket file on close
	expect(t, d.calls, "remove "+sock)
}

func expect(t *testing.T, calls <-chan string, want string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case got := <-calls:
			if got == want {
				return
			}
		case <-timeout.C:
			t.Fatalf("no %q", want)
		}
	}
}

// shortTemp is a temporary directory with a path short enough for a unix socket name.
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("err = %v", err)
	}
}
