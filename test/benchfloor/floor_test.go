package benchfloor

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestManifestIsWebYAML keeps the floor's manifest the bundled one, so that docs/benchmarks.md can
// name the file.
func TestManifestIsWebYAML(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "web.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != Manifest {
		t.Errorf("Manifest differs from manifests/web.yaml:\n%s", Manifest)
	}
}

func TestMeasure(t *testing.T) {
	f, err := Measure()
	if err != nil {
		t.Fatalf("Measure() error = %v", err)
	}
	if f <= 0 {
		t.Errorf("Measure() = %v, want a positive duration", f)
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(3000, 1000); got != 3 {
		t.Errorf("Ratio(3000, 1000) = %v, want 3", got)
	}
}

// BenchmarkFloor times the floor's decode with the benchmark machinery, to compare with Measure.
func BenchmarkFloor(b *testing.B) {
	data := []byte(Manifest)
	b.ReportAllocs()
	for b.Loop() {
		if err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
