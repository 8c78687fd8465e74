package tainteviction_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// memLister serves fixed nodes and pods, so that a benchmark times the controller's pass alone.
type memLister struct {
	nodes []*v1.Node
	pods  map[string][]*v1.Pod // by node
}

func (l *memLister) ListNodes(context.Context) ([]*v1.Node, error) { return l.nodes, nil }
func (l *memLister) GetNode(_ context.Context, name string) (*v1.Node, error) {
	for _, n := range l.nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
}
func (l *memLister) ListPodsOnNode(_ context.Context, node string) ([]*v1.Pod, error) {
	return l.pods[node], nil
}
func (l *memLister) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	for _, pods := range l.pods {
		for _, p := range pods {
			if p.Namespace == namespace && p.Name == name {
				return p, nil
			}
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

type noWrites struct{}

func (noWrites) UpdatePodStatus(context.Context, *v1.Pod) (*v1.Pod, error) {
	return nil, fmt.Errorf("no writes expected")
}
func (noWrites) DeletePod(context.Context, string, string, metav1.DeleteOptions) error {
	return fmt.Errorf("no writes expected")
}
func (noWrites) FetchPod(context.Context, string, string) (*v1.Pod, error) {
	return nil, fmt.Errorf("no reads expected")
}

// BenchmarkSyncTainted: one pass of the controller in a steady state, 50 unreachable nodes with
// 20 pods each, every pod tolerating the taint for 300s (the API server's default tolerations)
// and its eviction scheduled by an earlier pass; the clock does not move, so nothing is due. It
// is what every controller pass costs while a zone is cut off. Every pod shares one tolerations
// slice, so comparing them is the best case: pods read from the API server have their own.
func BenchmarkSyncTainted(b *testing.B) {
	benchSyncTainted(b, nil)
}

// BenchmarkSyncTaintedFeed is BenchmarkSyncTainted with a feed of changed nodes that names none
// after its first call, as in replay between two writes of the nodes: the pass does not read the
// nodes' taints again.
func BenchmarkSyncTaintedFeed(b *testing.B) {
	benchSyncTainted(b, &ctrltest.Feed{All: true})
}

func benchSyncTainted(b *testing.B, feed tainteviction.NodeChanges) {
	floor := benchfloor.Floor(b)
	l := &memLister{pods: map[string][]*v1.Pod{}}
	tolerations := []v1.Toleration{
		{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	for n := range 50 {
		name := fmt.Sprintf("node-%02d", n)
		l.nodes = append(l.nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}})
		for p := range 20 {
			l.pods[name] = append(l.pods[name], &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-pod-%02d", name, p), UID: types.UID(fmt.Sprintf("uid-%d-%d", n, p))},
				Spec:       v1.PodSpec{NodeName: name, Tolerations: tolerations},
			})
		}
	}
	te, err := tainteviction.New(tainteviction.Options{Clock: vclock.New(vclock.Epoch), Lister: l, Writer: noWrites{}, Tracer: trace.Discard, Changes: feed})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := te.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	if _, ok := te.NextWake(); !ok {
		b.Fatal("the first pass scheduled nothing")
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := te.Sync(ctx); err != nil {
			b.Fatal(err)
		}
	}
	benchfloor.Report(b, b.Elapsed()/time.Duration(b.N), floor)
}
