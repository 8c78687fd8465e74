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

// discardCheckpoint is a checkpoint that keeps nothing of what it is given, so that a
// benchmark counts the encoding's bytes and not a copy of the file.
type discardCheckpoint struct{ writes, bytes int }

func (c *discardCheckpoint) Write(b []byte) error  { c.writes++; c.bytes = len(b); return nil }
func (c *discardCheckpoint) Read() ([]byte, error) { return nil, nil }

// BenchmarkFlush: a save of the allocation checkpoint after one pod's allocation changed, as
// `run` makes it once a second while pods are admitted or resized, for a node of 30 pods (a
// fleet's) and of the kubelet's 110. Each save encodes every pod's allocation and writes the
// file (here into nothing); file-B is the file's size.
func BenchmarkFlush(b *testing.B) {
	floor := benchfloor.Floor(b)
	for _, n := range []int{30, 110} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			cp := &discardCheckpoint{}
			e := newEnv(b, "200")
			if err := e.start("200", cp); err != nil {
				b.Fatal(err)
			}
			pods := make([]*v1.Pod, n)
			for i := range pods {
				pods[i] = pod(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), "100m")
				pods[i].Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("128Mi")
				e.pods.AddPod(pods[i])
				e.m.SetAllocatedResources(pods[i])
			}
			if err := e.m.Flush(); err != nil {
				b.Fatal(err)
			}
			// The changed pod's allocation alternates, so that every save writes.
			changed := [2]*v1.Pod{e.resize(pods[0], "200m"), e.resize(pods[0], "100m")}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				e.m.SetAllocatedResources(changed[i%2])
				if err := e.m.Flush(); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if cp.writes != i+1 {
				b.Fatalf("%d writes for %d saves, want one each", cp.writes, i+1)
			}
			b.ReportMetric(float64(cp.bytes), "file-B")
			benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
		})
	}
}
