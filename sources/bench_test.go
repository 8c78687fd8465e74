package sources

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkFileRelist relists a directory of 1,000 manifests: read, decode, default, validate,
// hash and build the SET with its copies. It reports the cost per pod as well as per relist.
func BenchmarkFileRelist(b *testing.B) {
	const pods = 1000
	dir := b.TempDir()
	for i := range pods {
		name := fmt.Sprintf("pod-%04d", i)
		writeFile(b, join(dir, name+".yaml"), manifest(name, "app", "  labels: {app: bench}\n"))
	}
	f, _, _ := newTestFile(b, dir)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		u, err := f.Relist()
		if err != nil || len(u.Pods) != pods {
			b.Fatalf("Relist() = %v, want %d pods and no error", err, pods)
		}
	}
	runtime.ReadMemStats(&after)
	perPod := float64(b.N) * pods
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perPod, "ns/pod")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perPod, "allocs/pod")
}
