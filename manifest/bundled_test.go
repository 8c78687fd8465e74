package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBundledManifestsDecode checks that every example static pod shipped in manifests/ is one
// the kubelet would accept: the README's first command runs them.
func TestBundledManifestsDecode(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "manifests", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled manifests: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			pod, parsed, err := DecodePod(data, Options{NodeName: "node-1", Source: file, IsFile: true})
			if !parsed || err != nil {
				t.Fatalf("DecodePod(%s) = parsed %v, error %v, want a valid pod", file, parsed, err)
			}
			if pod.Spec.NodeName != "node-1" {
				t.Errorf("DecodePod(%s) nodeName = %q, want node-1", file, pod.Spec.NodeName)
			}
		})
	}
}
