package sources

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkFileRelist relists a directory of 1,000 manifests: read, decode, default, validate,
// hash and build the SET. "unchanged" is the steady state of the periodic relist, where every
// file's bytes are the same as last time and its decode is reused; "first" is a source's first
// relist (or a directory where every file changed), which decodes every manifest as the kubelet
// does on every relist. Both report the cost per pod as well as per relist.
func BenchmarkFileRelist(b *testing.B) {
	const pods = 1000
	dir := b.TempDir()
	for i := range pods {
		name := fmt.Sprintf("pod-%04d", i)
		writeFile(b, join(dir, name+".yaml"), podYAML(name, "app", "  labels: {app: bench}\n"))
	}
	for _, tc := range []struct {
		name  string
		fresh bool // a new source each relist, so nothing is cached
	}{{"unchanged", false}, {"first", true}} {
		b.Run(tc.name, func(b *testing.B) {
			f, _, _ := newTestFile(b, dir)
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if tc.fresh {
					f, _, _ = newTestFile(b, dir)
				}
				u, err := f.Relist()
				if err != nil || len(u.Pods) != pods {
					b.Fatalf("Relist() = %v, want %d pods and no error", err, pods)
				}
			}
			runtime.ReadMemStats(&after)
			perPod := float64(b.N) * pods
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perPod, "ns/pod")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perPod, "allocs/pod")
		})
	}
}
