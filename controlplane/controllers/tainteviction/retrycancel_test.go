package tainteviction_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// An untolerated pod's eviction fails its first try; before the second, 10ms later, the node's
// NoExecute taints are removed. In v1.35 deletePodHandler is already running: the work is a nil
// entry in TimedWorkerQueue.workers (createWorker with delay <= 0), so handleNodeUpdate's
// cancelWorkWithEvent -> CancelWork returns false (no "Cancelling deletion" event) and the
// goroutine goes on with its retries: the pod is deleted at the second try.
func TestRetryGoesOnAfterTaintsRemoved(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	l := &memLister{
		nodes: []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"},
			Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}},
		pods: map[string][]*v1.Pod{"a": {{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u"}, Spec: v1.PodSpec{NodeName: "a"}}}},
	}
	w := &flakyWriter{fails: 1}
	tr := &collect{}
	te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: l, Writer: w, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	_ = te.Sync(context.Background()) // the scripted failure
	l.nodes = []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
	clk.Advance(10 * time.Millisecond)
	tr.evs = nil
	_ = te.Sync(context.Background())
	if got := cancels(tr); len(got) != 0 {
		t.Errorf("cancels %v during the running handler's retries; v1.35 records none", got)
	}
	if w.deletes != 1 {
		t.Errorf("%d deletes; v1.35's running deletePodHandler deletes the pod at its second try", w.deletes)
	}

}

// The same for an eviction scheduled later: its timer has fired, so CancelWork finds it and the
// "Cancelling deletion" event is recorded, once, but the running handler still deletes the pod.
func TestRetryOfDelayedEvictionGoesOn(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	l := &memLister{
		nodes: []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"},
			Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}},
		pods: map[string][]*v1.Pod{"a": {{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u"},
			Spec: v1.PodSpec{NodeName: "a", Tolerations: []v1.Toleration{{Operator: v1.TolerationOpExists, TolerationSeconds: ptr.To[int64](1)}}}}}},
	}
	w := &flakyWriter{fails: 1}
	rec := record.NewFakeRecorder(10)
	te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: l, Writer: w, Tracer: trace.Discard, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	_ = te.Sync(context.Background())
	clk.Advance(time.Second)
	_ = te.Sync(context.Background()) // the scripted failure
	l.nodes = []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
	for range 2 {
		clk.Advance(10 * time.Millisecond)
		_ = te.Sync(context.Background())
	}
	close(rec.Events)
	var got []string
	for ev := range rec.Events {
		got = append(got, ev)
	}
	want := []string{
		"Normal TaintManagerEviction Marking for deletion Pod default/p",
		"Normal TaintManagerEviction Cancelling deletion of Pod default/p",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if w.deletes != 1 {
		t.Errorf("%d deletes; the running deletePodHandler deletes the pod at its second try", w.deletes)
	}
}
