package tainteviction_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
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
		wantEvict        bool
	}{{
		name:      "not gone: one try",
		deleteAt:  -1,
		wantCalls: []string{"0s PUT status: ok", "0s DELETE: ok"},
		wantLogs:  []string{`info Deleting pod`},
		wantEvict: true,
	}, {
		name:      "gone after the first try failed",
		failWrite: true,
		deleteAt:  5 * time.Millisecond,
		wantCalls: []string{"0s PUT status: scripted failure", "10ms GET: " + notFound, "20ms GET: " + notFound,
			"30ms GET: " + notFound, "40ms GET: " + notFound},
		wantLogs: []string{`info Deleting pod`, `error TaintEvictionController: timed worker failed at 50ms: ` + notFound},
	}, {
		name:             "gone between the status write and the delete",
		deleteAfterWrite: true,
		wantCalls: []string{"0s PUT status: ok", "0s DELETE: " + notFound, "10ms GET: " + notFound, "20ms GET: " + notFound,
			"30ms GET: " + notFound, "40ms GET: " + notFound},
		wantLogs: []string{`info Deleting pod`, `error TaintEvictionController: timed worker failed at 50ms: ` + notFound},
	}, {
		name:              "gone before the eviction fires: cancelled",
		tolerationSeconds: 1,
		deleteAt:          500 * time.Millisecond,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			var logs []string
			ctx := klog.NewContext(context.Background(), logr.New(logSink{clk: clk, logs: &logs}))
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
				if err := te.Sync(ctx); err != nil {
					t.Fatalf("Sync() = %v", err)
				}
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
			evicted := false
			for _, ev := range tr.evs {
				evicted = evicted || ev.Event == trace.KindEvict
			}
			if evicted != tt.wantEvict {
				t.Errorf("evict traced: %v, want %v", evicted, tt.wantEvict)
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

// logSink keeps the level and message of each line logged at verbosity 0 (client-go logs its
// requests at higher ones), and for errors the time and the error.
type logSink struct {
	clk  *vclock.Clock
	logs *[]string
}

func (s logSink) Init(logr.RuntimeInfo)            {}
func (s logSink) Enabled(level int) bool           { return level == 0 }
func (s logSink) WithValues(...any) logr.LogSink   { return s }
func (s logSink) WithName(string) logr.LogSink     { return s }
func (s logSink) Info(_ int, msg string, _ ...any) { *s.logs = append(*s.logs, "info "+msg) }
func (s logSink) Error(err error, msg string, _ ...any) {
	*s.logs = append(*s.logs, fmt.Sprintf("error %s at %v: %v", msg, s.clk.Since(vclock.Epoch), err))
}
