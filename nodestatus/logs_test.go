package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// logSink keeps the level and message of each line logged at verbosity 0, and an error's error.
type logSink struct{ logs *[]string }

func (s logSink) Init(logr.RuntimeInfo)            {}
func (s logSink) Enabled(level int) bool           { return level == 0 }
func (s logSink) WithValues(...any) logr.LogSink   { return s }
func (s logSink) WithName(string) logr.LogSink     { return s }
func (s logSink) Info(_ int, msg string, _ ...any) { *s.logs = append(*s.logs, "info "+msg) }
func (s logSink) Error(err error, msg string, _ ...any) {
	*s.logs = append(*s.logs, fmt.Sprintf("error %s: %v", msg, err))
}

// listerFunc is a NodeLister.
type listerFunc func(name string) (*v1.Node, error)

func (f listerFunc) Get(name string) (*v1.Node, error) { return f(name) }

// registered returns a Status registered at the epoch (Ready when ready) through client, and a
// context whose logger keeps the lines logged from then on in logs.
func registered(t *testing.T, client *fakeClient, state *fakeState, lister NodeLister, tracer trace.Tracer, logs *[]string) (*Status, context.Context) {
	t.Helper()
	s, err := New(Options{NodeName: "node-1", Clock: client.clk, Tracer: tracer, Client: client, RuntimeState: state, Lister: lister})
	if err != nil {
		t.Fatal(err)
	}
	s.DetachLease()
	if err := s.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	client.calls = nil
	return s, klog.NewContext(context.Background(), logr.New(logSink{logs: logs}))
}

// The kubelet's updateNodeStatus logs each failed try ("Error updating node status, will
// retry") and, when all five fail, returns "update node status exceeds retry count" for
// syncNodeStatus to log; the trace keeps the last try's error.
func TestUpdateNodeStatusRetries(t *testing.T) {
	conflict := `Operation cannot be fulfilled on nodes "node-1": the object has been modified`
	tests := []struct {
		conflicts   int
		wantPatches int
		wantLogs    []string
		wantErr     bool
	}{
		{conflicts: 0, wantPatches: 1},
		{conflicts: 2, wantPatches: 3, wantLogs: []string{"error Error updating node status, will retry: " + conflict,
			"error Error updating node status, will retry: " + conflict}},
		{conflicts: 5, wantPatches: 5, wantErr: true, wantLogs: []string{
			"error Error updating node status, will retry: " + conflict, "error Error updating node status, will retry: " + conflict,
			"error Error updating node status, will retry: " + conflict, "error Error updating node status, will retry: " + conflict,
			"error Error updating node status, will retry: " + conflict}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d conflicts", tt.conflicts), func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			client := &fakeClient{clk: clk}
			rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			var logs []string
			s, ctx := registered(t, client, &fakeState{}, nil, rec, &logs)
			client.conflictNext = tt.conflicts
			clk.Advance(StatusPeriod)
			err = s.Heartbeat(ctx)
			if got := errors.Is(err, errRetryCount); got != tt.wantErr {
				t.Errorf("Heartbeat() = %v, want errRetryCount: %v", err, tt.wantErr)
			}
			if err != nil && err.Error() != "update status of node node-1: update node status exceeds retry count" {
				t.Errorf("Heartbeat() = %q", err)
			}
			patches := 0
			for _, c := range client.calls {
				if c == "10s status" {
					patches++
				}
			}
			if patches != tt.wantPatches {
				t.Errorf("%d status patches, want %d (calls %v)", patches, tt.wantPatches, client.calls)
			}
			if diff := cmp.Diff(tt.wantLogs, logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			var traced []string
			for _, e := range rec.Events() {
				if e.Event == trace.KindError {
					traced = append(traced, e.Reason+": "+e.Message)
				}
			}
			var wantTraced []string
			if tt.wantErr {
				wantTraced = []string{"FailedToUpdateNodeStatus: " + conflict}
			}
			if diff := cmp.Diff(wantTraced, traced); diff != "" {
				t.Errorf("traced errors (-want +got):\n%s", diff)
			}
		})
	}
}

// One poll of fastStatusUpdateOnce, as the kubelet's fastNodeStatusUpdate: it logs what goes
// wrong and polls again, and writes the status only when the node would turn Ready.
func TestFastStatusUpdatePoll(t *testing.T) {
	tests := []struct {
		name string
		// registeredReady registers the node Ready; runtimeErr is the runtime state's at the poll.
		registeredReady bool
		runtimeErr      error
		// lister answers the poll's read when set; at the 120s timeout when late.
		lister    func(stored *v1.Node) (*v1.Node, error)
		late      bool
		wantLogs  []string
		wantPatch bool
		wantAgain bool // polls again 100ms later
	}{{
		name:            "already Ready: done",
		registeredReady: true,
	}, {
		name:       "not ready yet: polled again",
		runtimeErr: errors.New("container runtime is down"),
		wantAgain:  true,
	}, {
		name:      "turns ready: written",
		wantLogs:  []string{"info Fast updating node status as it just became ready"},
		wantPatch: true,
	}, {
		name: "the lister fails: logged, polled again",
		lister: func(*v1.Node) (*v1.Node, error) {
			return nil, apierrors.NewNotFound(v1.Resource("nodes"), "node-1")
		},
		wantLogs:  []string{`error Error getting the current node from lister: error getting node "node-1": nodes "node-1" not found`},
		wantAgain: true,
	}, {
		name: "no Ready condition: logged, polled again",
		lister: func(stored *v1.Node) (*v1.Node, error) {
			n := stored.DeepCopy()
			n.Status.Conditions = nil
			return n, nil
		},
		wantLogs:  []string{"error Node does not have NodeReady condition: <nil>"},
		wantAgain: true,
	}, {
		name:     "120s without becoming ready: logged, done",
		late:     true,
		wantLogs: []string{"error Node not becoming ready in time after startup: <nil>"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			client := &fakeClient{clk: clk}
			state := &fakeState{unhealthy: !tt.registeredReady}
			var lister NodeLister
			if tt.lister != nil {
				lister = listerFunc(func(string) (*v1.Node, error) { return tt.lister(client.node) })
			}
			var logs []string
			s, ctx := registered(t, client, state, lister, trace.Discard, &logs)
			state.unhealthy, state.err = false, tt.runtimeErr
			clk.Advance(FastStatusPeriod)
			if tt.late {
				clk.Set(s.fastStart.Add(fastStatusTimeout))
			}
			if err := s.fastStatusUpdate(ctx, clk.Now()); err != nil {
				t.Fatalf("fastStatusUpdate() = %v", err)
			}
			patched := false
			for _, c := range client.calls {
				patched = patched || c == clk.Since(vclock.Epoch).String()+" status"
			}
			if patched != tt.wantPatch {
				t.Errorf("status written: %v, want %v (calls %v)", patched, tt.wantPatch, client.calls)
			}
			again := s.fast.Equal(clk.Now().Add(FastStatusPeriod))
			if again != tt.wantAgain || !again && !s.fast.IsZero() {
				t.Errorf("next poll at %v, want again: %v", s.fast, tt.wantAgain)
			}
			if diff := cmp.Diff(tt.wantLogs, logs); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

// The Ready setter's message for the runtime state's errors is the kubelet's aggregate's.
func TestReadyMessageIsTheAggregates(t *testing.T) {
	down := errors.New("container runtime is down")
	pleg := fmt.Errorf("PLEG is not healthy: %w", errors.New("pleg was last seen active 3m0s ago; threshold is 3m0s"))
	tests := []struct {
		err  error
		want string
	}{
		{err: down, want: "container runtime is down"},
		{err: errors.Join(down), want: "container runtime is down"},
		{err: errors.Join(down, pleg), want: "[container runtime is down, PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s]"},
		{err: errors.Join(errors.Join(down, pleg), down), want: "[container runtime is down, PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s]"},
	}
	for _, tt := range tests {
		if got := aggregateMessage(tt.err); got != tt.want {
			t.Errorf("aggregateMessage(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// The Ready setter logs "Node became not ready" when Ready turns False, once.
func TestNodeBecameNotReadyIsLogged(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{}
	var logs []string
	s, ctx := registered(t, client, state, nil, trace.Discard, &logs)
	state.err = errors.New("container runtime is down")
	for range 2 {
		clk.Advance(StatusPeriod)
		if err := s.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"info Node became not ready"}, logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}
