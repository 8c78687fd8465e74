package volumemanager

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkDiskDirs: what `run --root-dir` adds per pod on the sync loop's goroutine, one pod's
// kube-api-access volume: its directory made at the first mount and removed with the pod's
// directories at the unmount; a remount of a recorded volume (every periodic sync's) makes no
// system call.
func BenchmarkDiskDirs(b *testing.B) {
	floor := benchfloor.Floor(b)
	pod := secretPod("a")
	src := v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}
	b.Run("mount+unmount", func(b *testing.B) {
		d := &DiskDirs{Root: b.TempDir()}
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Add(pod, "kube-api-access-x", src); err != nil {
				b.Fatal(err)
			}
			d.Remove(pod.UID, "kube-api-access-x")
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("remount", func(b *testing.B) {
		d := &DiskDirs{Root: b.TempDir()}
		if err := d.Add(pod, "kube-api-access-x", src); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Add(pod, "kube-api-access-x", src); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
}
