package podconfig

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// benchPod is a pod of typical size: two containers, labels, annotations and a status.
func benchPod(i int) *v1.Pod {
	p := newPod(fmt.Sprintf("pod-%05d", i), "bench")
	p.UID = types.UID(fmt.Sprintf("uid-%05d", i))
	p.Labels = map[string]string{"app": "bench", "tier": "backend"}
	p.Annotations = map[string]string{"kubernetes.io/config.hash": string(p.UID)}
	p.Spec.NodeName = "node-1"
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{
		Name:  "sidecar",
		Image: "sidecar:1",
		Env:   []v1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
		Ports: []v1.ContainerPort{{ContainerPort: 8080, Protocol: v1.ProtocolTCP}},
	})
	p.Status.Phase = v1.PodPending
	return p
}

// BenchmarkMergeSet measures a SET of n pods against a Storage already holding them, with none, 1%
// or all of them changed in spec (so each changed pod is an UPDATE). Two batches alternate so that
// the changed pods change on every iteration. "none" re-sends the very same objects, which
// Storage recognises without comparing (a file relist of unchanged manifests); "none-copies"
// sends unchanged content in fresh objects, so every pod is compared field by field as the
// kubelet does. "status" changes every pod's status alone (so each is a RECONCILE, as after
// each of the kubelet's status writes), alternating between two statuses.
func BenchmarkMergeSet(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, changed := range []struct {
			name  string
			every int // every k-th pod changes in spec; 0 for none, -1 for fresh equal objects, -2 for the status
		}{{"none", 0}, {"none-copies", -1}, {"1pct", 100}, {"100pct", 1}, {"status", -2}} {
			b.Run(fmt.Sprintf("pods=%d/changed=%s", n, changed.name), func(b *testing.B) {
				var batches [2][]*v1.Pod
				for i := range n {
					p := benchPod(i)
					q := p
					if changed.every == -1 {
						q = p.DeepCopy()
					}
					if changed.every == -2 {
						q = with(p, func(p *v1.Pod) { p.Status.Phase = v1.PodRunning })
					}
					if changed.every > 0 && i%changed.every == 0 {
						q = with(p, func(p *v1.Pod) { p.Spec.Containers[0].Image = "image:2" })
					}
					batches[0] = append(batches[0], p)
					batches[1] = append(batches[1], q)
				}
				s, err := NewStorage(StorageOptions{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
				if err != nil {
					b.Fatal(err)
				}
				s.Merge("file", Update{Op: SET, Source: "file", Pods: batches[0]})
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				iters := 0
				start := time.Now()
				for b.Loop() {
					s.Merge("file", Update{Op: SET, Source: "file", Pods: batches[(iters+1)%2]})
					iters++
				}
				elapsed := time.Since(start)
				runtime.ReadMemStats(&after)
				pods := float64(iters * n)
				b.ReportMetric(float64(elapsed.Nanoseconds())/pods, "ns/pod")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/pods, "allocs/pod")
			})
		}
	}
}
