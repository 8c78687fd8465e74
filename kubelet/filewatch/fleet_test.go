package filewatch_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet/filewatch"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources"
)

// inotifyInstances counts this process's inotify instances, or skips without /proc.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// desired records the sockets a node's plugin watcher found.
type desired struct{ added chan string }

func (d desired) AddOrUpdatePlugin(path string) (string, error) { d.added <- path; return "id", nil }
func (desired) RemovePlugin(string)                             {}

// More nodes than fs.inotify.max_user_instances' default (128) each run a plugin watcher on a
// registry of their own and a file source on one static pod directory they all name, over one
// inotify instance; each finds its own socket and every node sees the manifest written in the
// shared directory.
func TestFleetSharesOneInstance(t *testing.T) {
	const nodes = 200
	before := inotifyInstances(t)
	root, err := os.MkdirTemp("", "fw") // short: a socket's path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	podDir := filepath.Join(root, "manifests")
	if err := os.Mkdir(podDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fw, err := filewatch.NewInotify()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = fw.Run(ctx) })

	type node struct {
		registry string
		plugins  desired
		updates  chan podconfig.Update
	}
	fleet := make([]node, nodes)
	// watching is done once every node's file source has added its watch of podDir.
	var watching sync.WaitGroup
	watching.Add(nodes)
	for i := range fleet {
		n := &fleet[i]
		name := fmt.Sprintf("node-%03d", i)
		n.registry = filepath.Join(root, name)
		n.plugins = desired{added: make(chan string, 4)}
		n.updates = make(chan podconfig.Update, 16)
		w, err := pluginwatcher.New(pluginwatcher.Options{Dir: n.registry, FS: pluginwatcher.OS{}, Desired: n.plugins, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		wg.Go(func() {
			if err := pluginwatcher.Run(ctx, w, fw.Watch(), nil, ready); err != nil {
				t.Errorf("%s: plugin watcher: %v", name, err)
			}
		})
		select {
		case <-ready:
		case <-ctx.Done():
			t.Fatalf("%s: the plugin watcher did not start", name)
		}
		core, err := sources.NewFile(sources.FileOptions{Path: podDir, NodeName: name, Period: time.Hour, Clock: clock.RealClock{}, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		r, err := sources.NewFileRunner(sources.FileRunnerOptions{Core: core, Clock: clock.RealClock{}, Out: n.updates,
			Watches: func() sources.FileWatch {
				return addedWatch{Watch: fw.Watch(), added: func() { once.Do(watching.Done) }}
			}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = r.Run(ctx) })
	}
	// A manifest written before a node's watch is in place would reach it only at the hourly
	// relist: wait for every file source's watch.
	watched := make(chan struct{})
	go func() { watching.Wait(); close(watched) }()
	select {
	case <-watched:
	case <-ctx.Done():
		t.Fatalf("%d of %d file sources watch %s", fw.Watching(podDir), nodes, podDir)
	}
	if got := inotifyInstances(t) - before; got != 1 {
		t.Errorf("%d nodes opened %d inotify instances, want 1", nodes, got)
	}

	for _, n := range fleet {
		l, err := net.Listen("unix", filepath.Join(n.registry, "reg.sock"))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
	}
	manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: c\n    image: nginx\n"
	// Written whole, then renamed in: a dotfile's events are ignored.
	if err := os.WriteFile(filepath.Join(podDir, ".web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(podDir, ".web.yaml"), filepath.Join(podDir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	for i, n := range fleet {
		select {
		case got := <-n.plugins.added:
			if want := filepath.Join(n.registry, "reg.sock"); got != want {
				t.Errorf("node %d found socket %s, want only its own %s", i, got, want)
			}
		case <-ctx.Done():
			t.Fatalf("node %d found no socket", i)
		}
		for seen := false; !seen; {
			select {
			case u := <-n.updates:
				seen = len(u.Pods) == 1 && strings.HasPrefix(u.Pods[0].Name, "web-")
			case <-ctx.Done():
				t.Fatalf("node %d did not see the manifest", i)
			}
		}
	}
}

// addedWatch is a file source's Watch that tells when its Add has succeeded.
type addedWatch struct {
	*filewatch.Watch
	added func()
}

func (w addedWatch) Add(path string) error {
	if err := w.Watch.Add(path); err != nil {
		return err
	}
	w.added()
	return nil
}
