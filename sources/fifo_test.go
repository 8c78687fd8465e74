package sources

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestFIFOInTheStaticPodDirectoryDoesNotBlock reproduces a FIFO created in the static pod directory
// while the source runs: the watch event and the relist both name it, and neither may block in
// open(2) waiting for a writer.
func TestFIFOInTheStaticPodDirectoryDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(podYAML("web", "nginx", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := NewFile(FileOptions{Path: dir, NodeName: "node-1", Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("NewFile() error = %v", err)
	}
	if _, err := f.HandleEvent(WatchEvent{Path: fifo, Op: WatchAdd}); !errors.Is(err, ErrNotRegular) {
		t.Errorf("HandleEvent(create of a FIFO) error = %v, want %v", err, ErrNotRegular)
	}
	u, err := f.Relist()
	if err == nil {
		t.Errorf("Relist() with a FIFO in the directory error = nil, want the FIFO named")
	}
	if u == nil || len(u.Pods) != 1 || u.Pods[0].Name != "web-node-1" {
		t.Errorf("Relist() = %v, want the one regular manifest's pod", u)
	}
}
