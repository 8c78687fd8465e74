package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// listerFunc is a NodeLister.
type listerFunc func(name string) (*v1.Node, error)

func (f listerFunc) Get(name string) (*v1.Node, error) { return f(name) }

// registered returns a Status started at the epoch and registered 100ms later (Ready unless state
// has errors then) through client, its first status written, a context whose logger buffers what
// is logged from then on at verbosity 0, and a function that returns those lines: the level and
// message of each, with an error line's error.
func registered(t *testing.T, client *fakeClient, state *fakeState, lister NodeLister, tracer trace.Tracer) (*Status, context.Context, func() []string) {
	t.Helper()
	s, err := New(Options{NodeName: "node-1", Clock: client.clk, Tracer: tracer, Client: client, RuntimeState: state, Jitter: noJitter(), Lister: lister})
	if err != nil {
		t.Fatal(err)
	}
	s.DetachLease()
	if err := s.Register(context.Background()); err != nil || s.Registered() {
		t.Fatalf("Register() at the start = %v, registered %v; want no attempt before 100ms", err, s.Registered())
	}
	client.clk.Advance(registerBackoffMin)
	if err := s.Register(context.Background()); err != nil || !s.Registered() {
		t.Fatalf("Register() after 100ms = %v, registered %v; want registered", err, s.Registered())
	}
	// The same syncNodeStatus call writes the first status.
	if err := s.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	client.calls = nil
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0), ktesting.BufferLogs(true)))
	logs := func() []string {
		var lines []string
		for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			if e.Type == ktesting.LogError {
				lines = append(lines, fmt.Sprintf("error %s: %v", e.Message, e.Err))
			} else {
				lines = append(lines, "info "+e.Message)
			}
		}
		return lines
	}
	return s, klog.NewContext(context.Background(), logger), logs
}

// The kubelet's updateNodeStatus logs each failed try ("Error updating node status, will
// retry") and, when all five fail, returns "update node status exceeds retry count" for
// syncNodeStatus to log; the trace keeps the last try's error. tryUpdateNodeStatus names the node
// in front of a failed read at every try, the lister's (the first) and the API server's alike; the
// trace leaves that out.
func TestUpdateNodeStatusRetries(t *testing.T) {
	conflict := `Operation cannot be fulfilled on nodes "node-1": the object has been modified`
	retry := "error Error updating node status, will retry: "
	// The trace carries the server's error alone: its event names the node.
	gone := `nodes "node-1" not found`
	notFound := `error getting node "node-1": ` + gone
	tests := []struct {
		name      string
		conflicts int
		// listerGone makes the node lister answer NotFound; gone deletes the node from the API
		// server too.
		listerGone, gone bool
		wantPatches      int
		wantLogs         []string
		wantTraced       []string
	}{
		{name: "0 conflicts", wantPatches: 1},
		{name: "2 conflicts", conflicts: 2, wantPatches: 3, wantLogs: []string{retry + conflict, retry + conflict}},
		{name: "5 conflicts", conflicts: 5, wantPatches: 5,
			wantLogs:   []string{retry + conflict, retry + conflict, retry + conflict, retry + conflict, retry + conflict},
			wantTraced: []string{"FailedToUpdateNodeStatus: " + conflict}},
		{name: "the lister fails, the API server answers", listerGone: true, wantPatches: 1,
			wantLogs: []string{retry + notFound}},
		{name: "the node is gone: every read fails", listerGone: true, gone: true,
			wantLogs:   []string{retry + notFound, retry + notFound, retry + notFound, retry + notFound, retry + notFound},
			wantTraced: []string{"FailedToUpdateNodeStatus: " + gone}},
		{name: "the node is gone, no lister: every read fails", gone: true,
			wantLogs:   []string{retry + notFound, retry + notFound, retry + notFound, retry + notFound, retry + notFound},
			wantTraced: []string{"FailedToUpdateNodeStatus: " + gone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			client := &fakeClient{clk: clk}
			rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			var lister NodeLister
			if tt.listerGone {
				lister = listerFunc(func(name string) (*v1.Node, error) {
					return nil, apierrors.NewNotFound(v1.Resource("nodes"), name)
				})
			}
			s, ctx, logs := registered(t, client, &fakeState{}, lister, rec)
			s.fast = time.Time{} // the periodic update alone
			client.conflictNext = tt.conflicts
			if tt.gone {
				client.node = nil
			}
			// Past the report period (and its random delay) since the registration's write, so
			// that the unchanged status is written again.
			clk.Advance(ReportPeriod + ReportPeriod/2)
			err = s.Heartbeat(ctx)
			wantErr := tt.wantTraced != nil
			if got := errors.Is(err, errRetryCount); got != wantErr {
				t.Errorf("Heartbeat() = %v, want errRetryCount: %v", err, wantErr)
			}
			// The kubelet's error, which "Unable to update node status" logs, does not name the node.
			if err != nil && err.Error() != "update node status exceeds retry count" {
				t.Errorf("Heartbeat() = %q", err)
			}
			patches := 0
			for _, c := range client.calls {
				if c == clk.Since(vclock.Epoch).String()+" status" {
					patches++
				}
			}
			if patches != tt.wantPatches {
				t.Errorf("%d status patches, want %d (calls %v)", patches, tt.wantPatches, client.calls)
			}
			if diff := cmp.Diff(tt.wantLogs, logs()); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTraced, tracedErrors(rec)); diff != "" {
				t.Errorf("traced errors (-want +got):\n%s", diff)
			}
		})
	}
}

// tracedErrors are the reason and message of each error event rec kept, with the function that
// traced it when it is not the periodic update's.
func tracedErrors(rec *trace.Recorder) []string {
	var traced []string
	for _, e := range rec.Events() {
		if e.Event != trace.KindError {
			continue
		}
		if e.Func != "updateNodeStatus" {
			traced = append(traced, e.Func+" "+e.Reason+": "+e.Message)
		} else {
			traced = append(traced, e.Reason+": "+e.Message)
		}
	}
	return traced
}

// One poll of fastStatusUpdateOnce, as the kubelet's fastNodeStatusUpdate: it logs what goes
// wrong and polls again, and writes the status only when the node would turn Ready.
func TestFastStatusUpdatePoll(t *testing.T) {
	conflict := `Operation cannot be fulfilled on nodes "node-1": the object has been modified`
	tests := []struct {
		name string
		// registeredReady registers the node Ready; runtimeErr is the runtime state's at the poll.
		registeredReady bool
		runtimeErr      error
		// lister answers the poll's read when set; at the 120s timeout when late.
		lister func(stored *v1.Node) (*v1.Node, error)
		late   bool
		// conflicts is how many status writes fail with a conflict.
		conflicts int
		wantLogs  []string
		wantPatch bool
		wantAgain bool // polls again 100ms later
		// wantErr is the periodic update's failure, returned for the caller to log as
		// syncNodeStatus does; wantTraced the traced errors (see tracedErrors).
		wantErr    bool
		wantTraced []string
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
		// The lister's error as it is: only tryUpdateNodeStatus names the node in front of it.
		wantLogs:  []string{`error Error getting the current node from lister: nodes "node-1" not found`},
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
	}, {
		// The kubelet retries at once with syncNodeStatus, which reads the node again.
		name:      "the write fails: the periodic update retries it",
		conflicts: 1,
		wantLogs: []string{"info Fast updating node status as it just became ready",
			"error Error updating node status, will retry with syncNodeStatus: " + conflict},
		wantPatch:  true,
		wantTraced: []string{"fastNodeStatusUpdate FailedToUpdateNodeStatus: " + conflict},
	}, {
		// Two failures the kubelet logs apart: the fast write's ("Error updating node status,
		// will retry with syncNodeStatus") and syncNodeStatus's once its five tries failed
		// ("Unable to update node status"), each traced.
		name:      "the write and the periodic update's five tries fail: both traced",
		conflicts: 6,
		wantLogs: []string{"info Fast updating node status as it just became ready",
			"error Error updating node status, will retry with syncNodeStatus: " + conflict,
			"error Error updating node status, will retry: " + conflict, "error Error updating node status, will retry: " + conflict,
			"error Error updating node status, will retry: " + conflict, "error Error updating node status, will retry: " + conflict,
			"error Error updating node status, will retry: " + conflict},
		wantPatch: true,
		wantErr:   true,
		wantTraced: []string{"fastNodeStatusUpdate FailedToUpdateNodeStatus: " + conflict,
			"FailedToUpdateNodeStatus: " + conflict},
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
			rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			s, ctx, logs := registered(t, client, state, lister, rec)
			state.unhealthy, state.err, state.checks = false, tt.runtimeErr, 0
			client.conflictNext = tt.conflicts
			clk.Advance(FastStatusPeriod)
			if tt.late {
				clk.Set(s.fastStart.Add(fastStatusTimeout))
			}
			// The poll due now: the timeout is counted to when it was due.
			s.fast = clk.Now()
			if err := s.fastStatusUpdate(ctx, clk.Now()); errors.Is(err, errRetryCount) != tt.wantErr {
				t.Errorf("fastStatusUpdate() = %v, want errRetryCount: %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantTraced, tracedErrors(rec)); diff != "" {
				t.Errorf("traced errors (-want +got):\n%s", diff)
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
			if diff := cmp.Diff(tt.wantLogs, logs()); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
			// A poll that finds the node not Ready asks the runtime first, as v1.35's calls
			// updateRuntimeUp.
			wantChecks := 0
			if !tt.registeredReady && !tt.late && tt.lister == nil {
				wantChecks = 1
			}
			if state.checks != wantChecks {
				t.Errorf("%d runtime checks, want %d", state.checks, wantChecks)
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
	s, ctx, logs := registered(t, client, state, nil, trace.Discard)
	state.err = errors.New("container runtime is down")
	for range 2 {
		clk.Advance(StatusPeriod)
		if err := s.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"info Node became not ready"}, logs()); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}
