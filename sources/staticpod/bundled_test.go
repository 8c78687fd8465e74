package staticpod

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBundledManifestsDecode checks that every example static pod shipped in manifests/ and
// docs/examples/kubeadm/ is one the kubelet would accept: the README's run commands run them.
func TestBundledManifestsDecode(t *testing.T) {
	var files []string
	for _, dir := range []string{"manifests", filepath.Join("docs", "examples", "kubeadm")} {
		found, err := filepath.Glob(filepath.Join("..", "..", dir, "*"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no bundled manifests in %s: %v", dir, err)
		}
		files = append(files, found...)
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
