package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKubeadmScenarioUsesTheExamples checks that the kubeadm scenario plays exactly the manifests
// of docs/examples/kubeadm, which the README runs with `minikubelet run`: the lesson and the example
// must not drift apart.
func TestKubeadmScenarioUsesTheExamples(t *testing.T) {
	s, err := Load(filepath.Join("..", "..", "scenarios", "kubeadm-control-plane-probes.yaml"), LoadOptions{})
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "kubeadm", "*.yaml"))
	if err != nil || len(files) != 4 {
		t.Fatalf("docs/examples/kubeadm = %v, %v; want the four control-plane manifests", files, err)
	}
	written := map[string]string{}
	for _, st := range s.Steps {
		if w, ok := st.act.(*WriteManifest); ok {
			written[w.Name] = w.Content
		}
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := written[filepath.Base(f)]; !ok || got != string(want) {
			t.Errorf("scenario's %s differs from %s (present %v)", filepath.Base(f), f, ok)
		}
	}
}
