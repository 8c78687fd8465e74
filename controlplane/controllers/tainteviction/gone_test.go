package tainteviction_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// callLog notes each request the controller sends to the API server itself, with its time from
// the start and its outcome, and runs the test's hooks on the way.
type callLog struct {
	controllers.Client
	clk   *vclock.Clock
	calls []string
	// failWrite fails the first status write; afterWrite runs once the first status write is
	// done, before the delete.
	failWrite  bool
	afterWrite func()
	writes     int
}

func (l *callLog) note(verb string, err error) {
	out := "ok"
	if err != nil {
		out = err.Error()
	}
	l.calls = append(l.calls, fmt.Sprintf("%v %s: %s", l.clk.Since(vclock.Epoch), verb, out))
}

func (l *callLog) UpdatePodStatus(ctx context.Context, pod *v1.Pod) (*v1.Pod, error) {
	l.writes++
	if l.failWrite && l.writes == 1 {
		err := errors.New("scripted failure")
		l.note("PUT status", err)
		return nil, err
	}
	out, err := l.Client.UpdatePodStatus(ctx, pod)
	l.note("PUT status", err)
	if l.writes == 1 && l.afterWrite != nil {
		l.afterWrite()
	}
	return out, err
}

func (l *callLog) DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	err := l.Client.DeletePod(ctx, namespace, name, opts)
	l.note("DELETE", err)
	return err
}

func (l *callLog) FetchPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, err := l.Client.FetchPod(ctx, namespace, name)
	l.note("GET", err)
	return pod, err
}

// A pod deleted while deletePodHandler tries to evict it: in v1.35 the handler does not return
// early on NotFound. Each remaining try's addConditionAndDeletePod GETs the pod and fails with
// its NotFound, 10ms apart; after the fifth it sleeps 10ms more and returns the error, which the
// timed worker logs once, at error level ("TaintEvictionController: timed worker failed"). No try
// logs. A pod deleted before its eviction fires is cancelled instead, with no request.
func TestEvictionOfPodGoneDuringTries(t *testing.T) {
	const notFound = `pods "p" not found`
	tests := []struct {
		name string
		// tolerationSeconds delays the eviction.
		tolerationSeconds int64
		failWrite         bool
		// deleteAfterWrite deletes the pod once its status is written, before the handler's
		// delete; deleteAt deletes it at that time (after the pass there, if any).
		deleteAfterWrite bool
		deleteAt         time.Duration
		wantCalls        []string
		wantLogs         []string
		// wantTraced is each event traced: its kind and pod, a scheduled eviction's delay, a
		// cancel's reason.
		wantTraced []string
	}{{
		name:       "not gone: one try",
		deleteAt:   -1,
		wantCalls:  []string{"0s PUT status: ok", "0s DELETE: ok"},
		wantLogs:   []string{`info Deleting pod`},
		wantTraced: []string{"evict-at default/p in 0s", "evict default/p"},
	}, {
		name:      "gone after the first try failed",
		failWrite: true,
		deleteAt:  5 * time.Millisecond,
		wantCalls: []string{"0s PUT status: scripted failure", "10ms GET: " + notFound, "20ms GET: " + notFound,
			"30ms GET: " + notFound, "40ms GET: " + notFound},
		wantLogs: []string{`info Deleting pod`, `error TaintEvictionController: timed worker failed at 50ms: ` + notFound},
		// A handler that has tried is not cancelled: no evict-cancel.
		wantTraced: []string{"evict-at default/p in 0s"},
	}, {
		name:             "gone between the status write and the delete",
		deleteAfterWrite: true,
		wantCalls: []string{"0s PUT status: ok", "0s DELETE: " + notFound, "10ms GET: " + notFound, "20ms GET: " + notFound,
			"30ms GET: " + notFound, "40ms GET: " + notFound},
		wantLogs:   []string{`info Deleting pod`, `error TaintEvictionController: timed worker failed at 50ms: ` + notFound},
		wantTraced: []string{"evict-at default/p in 0s"},
	}, {
		name:              "gone before the eviction fires: cancelled",
		tolerationSeconds: 1,
		deleteAt:          500 * time.Millisecond,
		wantTraced:        []string{"evict-at default/p in 1s", "evict-cancel default/p: pod gone"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			// client-go logs its requests above verbosity 0.
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0), ktesting.BufferLogs(true)))
			ctx := klog.NewContext(context.Background(), logger)
			// logs are the level and message of each line logged during a pass, and for an error
			// the pass's time and the error: the buffer's own times are the wall clock's.
			var logs []string
			seen := 0
			stamp := func() {
				data := logger.GetSink().(ktesting.Underlier).GetBuffer().Data()
				for _, e := range data[seen:] {
					if e.Type == ktesting.LogError {
						logs = append(logs, fmt.Sprintf("error %s at %v: %v", e.Message, clk.Since(vclock.Epoch), e.Err))
					} else {
						logs = append(logs, "info "+e.Message)
					}
				}
				seen = len(data)
			}
			c := ctrltest.NewClient(t, clk)
			createTaintedNodeAndPod(ctx, t, c, tt.tolerationSeconds)
			del := func() {
				if err := c.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
					t.Fatal(err)
				}
			}
			w := &callLog{Client: controllers.Client{Clientset: c}, clk: clk, failWrite: tt.failWrite}
			if tt.deleteAfterWrite {
				w.afterWrite = del
			}
			tr := &collect{}
			te, err := tainteviction.New(tainteviction.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: w, Tracer: tr})
			if err != nil {
				t.Fatal(err)
			}
			deleted := tt.deleteAt <= 0
			for {
				if !deleted && clk.Since(vclock.Epoch) >= tt.deleteAt {
					del()
					deleted = true
				}
				stamp() // nothing logged between passes is lost, or stamped with a pass's time
				if err := te.Sync(ctx); err != nil {
					t.Fatalf("Sync() = %v", err)
				}
				stamp()
				next, ok := te.NextWake()
				if !deleted && (!ok || next.Sub(vclock.Epoch) > tt.deleteAt) {
					next, ok = vclock.Epoch.Add(tt.deleteAt), true
				}
				if !ok {
					break
				}
				clk.Set(next)
			}
			if diff := cmp.Diff(tt.wantCalls, w.calls); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			var traced []string
			for _, ev := range tr.evs {
				line := fmt.Sprintf("%s %s", ev.Event, ev.Pod)
				switch {
				case ev.Event == trace.KindEvictAt:
					line += fmt.Sprintf(" in %v", ev.Delay)
				case ev.Message != "":
					line += ": " + ev.Message
				}
				traced = append(traced, line)
			}
			if diff := cmp.Diff(tt.wantTraced, traced); diff != "" {
				t.Errorf("traced (-want +got):\n%s", diff)
			}
		})
	}
}

// createTaintedNodeAndPod creates node a with the unreachable NoExecute taint and pod p on it,
// tolerating the taint for tolerationSeconds (the API server would give it 300s otherwise).
func createTaintedNodeAndPod(ctx context.Context, t *testing.T, c kubernetes.Interface, tolerationSeconds int64) {
	t.Helper()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeUnreachable, Effect: v1.TaintEffectNoExecute}}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "a", Containers: []v1.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []v1.Toleration{{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists,
				Effect: v1.TaintEffectNoExecute, TolerationSeconds: &tolerationSeconds}}}}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
