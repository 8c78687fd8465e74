package tainteviction_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// flakyWriter fails the first fails status writes. With events set it notes how many events
// were recorded before its first write.
type flakyWriter struct {
	fails, writes, deletes int
	events                 chan string
	eventsBefore           int
}

func (w *flakyWriter) UpdatePodStatus(_ context.Context, pod *v1.Pod) (*v1.Pod, error) {
	w.writes++
	if w.writes == 1 && w.events != nil {
		w.eventsBefore = len(w.events)
	}
	if w.writes <= w.fails {
		return nil, errors.New("scripted failure")
	}
	return pod, nil
}

func (w *flakyWriter) DeletePod(context.Context, string, string, metav1.DeleteOptions) error {
	w.deletes++
	return nil
}

func (w *flakyWriter) FetchPod(_ context.Context, _, name string) (*v1.Pod, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

// deletePodHandler tries an eviction five times, 10ms apart, then gives up; a pass 10ms later
// is each try here, since an unchanged pod is not processed again.
func TestEvictionRetries(t *testing.T) {
	tests := []struct {
		fails      int
		wantWrites int
		wantAt     time.Duration // when the pod is deleted; -1 is never
	}{
		{fails: 0, wantWrites: 1, wantAt: 0},
		{fails: 1, wantWrites: 2, wantAt: 10 * time.Millisecond},
		{fails: 4, wantWrites: 5, wantAt: 40 * time.Millisecond},
		{fails: 5, wantWrites: 5, wantAt: -1},
	}
	for _, tt := range tests {
		clk := vclock.New(vclock.Epoch)
		node := "a"
		l := &memLister{
			nodes: []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: node},
				Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}},
			pods: map[string][]*v1.Pod{node: {{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u"},
				Spec: v1.PodSpec{NodeName: node, Tolerations: []v1.Toleration{{Operator: v1.TolerationOpExists, TolerationSeconds: ptr.To[int64](0)}}}}}},
		}
		rec := record.NewFakeRecorder(100)
		w := &flakyWriter{fails: tt.fails, events: rec.Events}
		te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: l, Writer: w, Tracer: trace.Discard, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Duration(-1)
		for {
			_ = te.Sync(context.Background()) // the scripted failures are its errors
			if w.deletes > 0 {
				at = clk.Since(vclock.Epoch)
				break
			}
			next, ok := te.NextWake()
			if !ok {
				break
			}
			clk.Set(next)
		}
		if w.writes != tt.wantWrites || at != tt.wantAt {
			t.Errorf("%d failures: %d status writes, deleted at %v; want %d, %v", tt.fails, w.writes, at, tt.wantWrites, tt.wantAt)
		}
		// deletePodHandler records its event once per eviction, before its first try.
		close(rec.Events)
		var events []string
		for ev := range rec.Events {
			events = append(events, ev)
		}
		if diff := cmp.Diff([]string{"Normal TaintManagerEviction Marking for deletion Pod default/p"}, events); diff != "" {
			t.Errorf("%d failures: events (-want +got):\n%s", tt.fails, diff)
		}
		if w.eventsBefore != 1 {
			t.Errorf("%d failures: %d events before the first try, want 1", tt.fails, w.eventsBefore)
		}
	}
}

// An untolerated pod's eviction fails its first try; before the second, 10ms later, the node's
// NoExecute taints are removed. In v1.35 deletePodHandler is already running, and goes on with its
// retries: the pod is deleted at the second try.
//
// For an eviction at once the work is a nil entry in TimedWorkerQueue.workers (createWorker with
// delay <= 0), so handleNodeUpdate's cancelWorkWithEvent -> CancelWork returns false: no
// "Cancelling deletion" event. For an eviction scheduled later the timer has fired, so CancelWork
// finds it and the event is recorded, once, but the running handler still deletes the pod. In
// neither is a cancel traced: the eviction goes on.
func TestRetryGoesOnAfterTaintsRemoved(t *testing.T) {
	tests := []struct {
		name string
		// tolerationSeconds is the pod's toleration of every taint; nil is none.
		tolerationSeconds *int64
		// passes are the passes 10ms apart after the taints are removed.
		passes     int
		wantEvents []string // recorded
	}{
		{
			name: "at once", passes: 1,
			wantEvents: []string{"Normal TaintManagerEviction Marking for deletion Pod default/p"},
		},
		{
			name: "scheduled later", tolerationSeconds: ptr.To[int64](1), passes: 2,
			wantEvents: []string{
				"Normal TaintManagerEviction Marking for deletion Pod default/p",
				"Normal TaintManagerEviction Cancelling deletion of Pod default/p",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u"}, Spec: v1.PodSpec{NodeName: "a"}}
			if tt.tolerationSeconds != nil {
				pod.Spec.Tolerations = []v1.Toleration{{Operator: v1.TolerationOpExists, TolerationSeconds: tt.tolerationSeconds}}
			}
			l := &memLister{
				nodes: []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"},
					Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}},
				pods: map[string][]*v1.Pod{"a": {pod}},
			}
			w := &flakyWriter{fails: 1}
			tr := &collect{}
			rec := record.NewFakeRecorder(10)
			te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: l, Writer: w, Tracer: tr, Recorder: rec})
			if err != nil {
				t.Fatal(err)
			}
			_ = te.Sync(ctx) // the scripted failure, for an eviction at once
			if tt.tolerationSeconds != nil {
				clk.Advance(time.Duration(*tt.tolerationSeconds) * time.Second)
				_ = te.Sync(ctx) // the scripted failure
			}
			l.nodes = []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
			tr.evs = nil
			for range tt.passes {
				clk.Advance(10 * time.Millisecond)
				_ = te.Sync(ctx)
			}
			if got := cancels(tr); len(got) != 0 {
				t.Errorf("cancels %v traced during the running handler's retries; the eviction goes on", got)
			}
			close(rec.Events)
			var got []string
			for ev := range rec.Events {
				got = append(got, ev)
			}
			if diff := cmp.Diff(tt.wantEvents, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if w.deletes != 1 {
				t.Errorf("%d deletes; v1.35's running deletePodHandler deletes the pod at its second try", w.deletes)
			}
		})
	}
}
