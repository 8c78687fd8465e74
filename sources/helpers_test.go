package sources

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/vclock"
)

// events collects trace events; it is safe for the concurrent use the runners make of it.
type events struct {
	mu  sync.Mutex
	all []trace.Event
}

func (e *events) Emit(ev trace.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// take returns the events so far and forgets them.
func (e *events) take() []trace.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.all
	e.all = nil
	return out
}

// manifest is a minimal pod manifest; extra is inserted under metadata.
func manifest(name, container, extra string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n%sspec:\n  containers:\n  - name: %s\n    image: nginx:1.27\n",
		name, extra, container)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newTestFile(t testing.TB, path string) (*File, *vclock.Clock, *events) {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	ev := &events{}
	return NewFile(FileOptions{Path: path, NodeName: "node1", Clock: clk, Tracer: ev}), clk, ev
}

// names lists "namespace/name" of an update's pods in order; nil for no update.
func names(u *podconfig.Update) []string {
	if u == nil {
		return nil
	}
	out := make([]string, len(u.Pods))
	for i, p := range u.Pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}

// uids maps "namespace/name" to UID for an update's pods.
func uids(u *podconfig.Update) map[string]string {
	out := map[string]string{}
	if u != nil {
		for _, p := range u.Pods {
			out[p.Namespace+"/"+p.Name] = string(p.UID)
		}
	}
	return out
}

func join(elem ...string) string { return filepath.Join(elem...) }
