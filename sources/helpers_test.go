package sources

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
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

// podYAML is a minimal pod manifest; extra is inserted under metadata.
func podYAML(name, container, extra string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n%sspec:\n  containers:\n  - name: %s\n    image: nginx:1.27\n",
		name, extra, container)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// simplePod is a pod with one container named "c" running image.
func simplePod(name, image string) *v1.Pod {
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}},
	}
}

// containerSecurityContext is the kubelet tests' ValidSecurityContextWithContainerDefaults.
func containerSecurityContext() *v1.SecurityContext {
	priv := false
	return &v1.SecurityContext{Capabilities: &v1.Capabilities{}, Privileged: &priv}
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
	return newFile(t, FileOptions{Path: path, NodeName: "node1", Clock: clk, Tracer: ev}), clk, ev
}

// newFile returns NewFile(opts) and stops the test if it fails.
func newFile(t testing.TB, opts FileOptions) *File {
	t.Helper()
	f, err := NewFile(opts)
	if err != nil {
		t.Fatalf("NewFile() error = %v", err)
	}
	return f
}

// newHTTP returns NewHTTP(opts) and stops the test if it fails.
func newHTTP(t testing.TB, opts HTTPOptions) *HTTP {
	t.Helper()
	h, err := NewHTTP(opts)
	if err != nil {
		t.Fatalf("NewHTTP() error = %v", err)
	}
	return h
}

// newAPI returns an API core that traces to tracer, and stops the test if NewAPI fails.
func newAPI(t testing.TB, tracer trace.Tracer) *API {
	t.Helper()
	a, err := NewAPI(APIOptions{Tracer: tracer})
	if err != nil {
		t.Fatalf("NewAPI() error = %v", err)
	}
	return a
}

// newAPIRunner returns NewAPIRunner(opts) and stops the test if it fails.
func newAPIRunner(t testing.TB, opts APIRunnerOptions) *APIRunner {
	t.Helper()
	r, err := NewAPIRunner(opts)
	if err != nil {
		t.Fatalf("NewAPIRunner() error = %v", err)
	}
	return r
}

// names lists "namespace/name" of an update's pods in order; nil for no update.
func names(u *podconfig.Update) []string {
	if u == nil {
		return nil
	}
	out := make([]string, len(u.Pods))
	for i, p := range u.Pods {
		out[i] = podkey.Of(p)
	}
	return out
}

// uids maps "namespace/name" to UID for an update's pods.
func uids(u *podconfig.Update) map[string]string {
	out := map[string]string{}
	if u != nil {
		for _, p := range u.Pods {
			out[podkey.Of(p)] = string(p.UID)
		}
	}
	return out
}

func join(elem ...string) string { return filepath.Join(elem...) }
