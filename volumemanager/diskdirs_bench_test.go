package volumemanager

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkDiskDirs: what `run --root-dir` adds per pod on the sync loop's goroutine, one pod's
// kube-api-access volume: its directory made at the first mount, removed at the unmount, and the
// pod's directories removed by housekeeping's cleanup; a remount of a recorded volume (every
// periodic sync's) makes no system call; a housekeeping pass over 30 pods' directories, all
// kept, reads the pods directory once.
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
			if err := d.Remove(pod.UID, "kube-api-access-x"); err != nil {
				b.Fatal(err)
			}
			d.CleanupOrphans(func(types.UID) bool { return false })
		}
		benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
	})
	b.Run("cleanup-30-kept", func(b *testing.B) {
		d := &DiskDirs{Root: b.TempDir()}
		for i := range 30 {
			if err := d.Add(secretPod(fmt.Sprint(i)), "kube-api-access-x", src); err != nil {
				b.Fatal(err)
			}
		}
		keep := func(types.UID) bool { return true }
		b.ReportAllocs()
		for b.Loop() {
			d.CleanupOrphans(keep)
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
