package allocation

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkFileCheckpointWrite: one write of the checkpoint file (temporary file, fsync,
// rename), as a resize and the periodic flush make it on the sync loop's goroutine, for a node
// with one pod and with the kubelet's 110. The time is the disk's more than the code's: an
// fsync on the machine's file system.
func BenchmarkFileCheckpointWrite(b *testing.B) {
	floor := benchfloor.Floor(b)
	for _, n := range []int{1, 110} {
		allocated := map[types.UID]map[string]v1.ResourceRequirements{}
		for i := range n {
			allocated[types.UID(fmt.Sprintf("uid-%d", i))] = map[string]v1.ResourceRequirements{
				"app": {Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")}}}
		}
		data, err := encodeCheckpoint(allocated)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c := FileCheckpoint{Path: filepath.Join(b.TempDir(), CheckpointFile)}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := c.Write(data); err != nil {
					b.Fatal(err)
				}
			}
			benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
		})
	}
}
