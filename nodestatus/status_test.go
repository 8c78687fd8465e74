package nodestatus

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeClient keeps one node and one lease in memory and logs each call at its virtual instant.
type fakeClient struct {
	clk      *vclock.Clock
	node     *v1.Node
	lease    *coordinationv1.Lease
	failNext int // how many CreateNode calls fail first
	// conflictNext is how many UpdateNodeStatus calls fail first with a 409 Conflict, as when a
	// controller changed the node since it was read.
	conflictNext int
	// leaseErrs are the errors of the next UpdateLease calls, in order.
	leaseErrs []error
	calls     []string
	// latency is how long each call of a kind ("create", "get lease"...) takes: the virtual
	// clock moves by it once the call is logged, at its start.
	latency map[string]time.Duration
}

func (c *fakeClient) log(call string) {
	c.calls = append(c.calls, c.clk.Since(vclock.Epoch).String()+" "+call)
	c.clk.Advance(c.latency[call])
}

func (c *fakeClient) GetNode(_ context.Context, name string) (*v1.Node, error) {
	c.log("get")
	if c.node == nil {
		return nil, apierrors.NewNotFound(v1.Resource("nodes"), name)
	}
	return c.node.DeepCopy(), nil
}

func (c *fakeClient) CreateNode(_ context.Context, node *v1.Node) (*v1.Node, error) {
	c.log("create")
	if c.failNext > 0 {
		c.failNext--
		return nil, errors.New("connection refused")
	}
	c.node = node.DeepCopy()
	c.node.UID = types.UID("node-uid")
	return c.node.DeepCopy(), nil
}

func (c *fakeClient) PatchNodeStatus(_ context.Context, original, node *v1.Node) (*v1.Node, error) {
	c.log("status")
	if c.conflictNext > 0 {
		c.conflictNext--
		return nil, apierrors.NewConflict(v1.Resource("nodes"), node.Name, errors.New("the object has been modified"))
	}
	c.node = node.DeepCopy()
	return node, nil
}

func (c *fakeClient) GetLease(_ context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	c.log("get lease")
	if c.lease == nil {
		return nil, apierrors.NewNotFound(coordinationv1.Resource("leases"), name)
	}
	return c.lease.DeepCopy(), nil
}

func (c *fakeClient) CreateLease(_ context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	c.log("lease")
	c.lease = lease.DeepCopy()
	return lease, nil
}

func (c *fakeClient) UpdateLease(_ context.Context, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	c.log("lease")
	if len(c.leaseErrs) > 0 {
		err := c.leaseErrs[0]
		c.leaseErrs = c.leaseErrs[1:]
		return nil, err
	}
	c.lease = lease.DeepCopy()
	return lease, nil
}

// zeroSource is a random source that always draws 0: a Jitter stream that adds no jitter, for tests
// that pin the periods' instants.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// noJitter is a Jitter stream without jitter.
func noJitter() *rand.Rand { return rand.New(zeroSource{}) }

// fakeState is a runtime state whose errors the test sets.
type fakeState struct {
	err       error
	unhealthy bool // the PLEG has not relisted yet
	checks    int  // UpdateRuntimeUp calls
}

func (s *fakeState) Errors() error {
	if s.err == nil && s.unhealthy {
		return errors.New("PLEG is not healthy: pleg has yet to be successful")
	}
	return s.err
}

// UpdateRuntimeUp counts the checks fastStatusUpdateOnce asks for.
func (s *fakeState) UpdateRuntimeUp(context.Context) { s.checks++ }

// register starts s and registers the node at its first attempt, 100ms later: registration
// sleeps before each attempt.
func register(t *testing.T, s *Status, clk *vclock.Clock) {
	t.Helper()
	for range 2 {
		if err := s.Register(context.Background()); err != nil {
			t.Fatalf("Register() at %v: %v", clk.Since(vclock.Epoch), err)
		}
		if !s.Registered() {
			clk.Advance(registerBackoffMin)
		}
	}
	if !s.Registered() {
		t.Fatalf("not registered at %v, want registered at 100ms", clk.Since(vclock.Epoch))
	}
}

// drive calls Register and Heartbeat at every wake-up until the instant until.
func drive(t *testing.T, s *Status, clk *vclock.Clock, until time.Duration) {
	t.Helper()
	for {
		if err := s.Register(context.Background()); err != nil {
			t.Logf("Register() at %v: %v", clk.Since(vclock.Epoch), err)
		}
		if err := s.Heartbeat(context.Background()); err != nil {
			t.Errorf("Heartbeat() at %v: %v", clk.Since(vclock.Epoch), err)
		}
		next, ok := s.NextWake()
		if !ok || next.After(vclock.Epoch.Add(until)) {
			return
		}
		// A call that took time may have moved the clock past the wake-up already.
		if next.After(clk.Now()) {
			clk.Set(next)
		}
	}
}

func TestRegisterRetriesThenHeartbeats(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk, failNext: 2}
	s, err := New(Options{NodeName: "node-1", NodeIP: "192.168.0.10", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	drive(t, s, clk, 21*time.Second)
	want := []string{
		"0s get lease", "0s get", // the lease controller's first sync: no lease, and no node to own one
		"0s get",                    // fastStatusUpdateOnce's first poll: no node yet
		"100ms create",              // registration sleeps 100ms before its first attempt...
		"300ms create",              // ...then 200ms, while fastStatusUpdateOnce's next poll waits for it
		"700ms create",              // ...then 400ms
		"700ms get", "700ms status", // syncNodeStatus writes the first status at once
		"700ms get",                             // fastStatusUpdateOnce: the node was registered Ready, done
		"10s get lease", "10s get", "10s lease", // the lease's second sync creates it, owned by the node
		"10.7s get", // unchanged: not written until nodeStatusReportFrequency
		"20s lease", // the lease as last written, updated
		"20.7s get",
	}
	if diff := cmp.Diff(want, client.calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
	if got := client.lease.OwnerReferences; len(got) != 1 || got[0].UID != "node-uid" {
		t.Errorf("lease owner references = %v, want the node", got)
	}
	if got := client.node.Status.Addresses[0]; got.Type != v1.NodeInternalIP || got.Address != "192.168.0.10" {
		t.Errorf("first node address = %v, want InternalIP 192.168.0.10", got)
	}
}

// TestFastPollWaitsForRegistration: in v1.35 syncNodeStatus holds syncNodeStatusMux through the
// whole of registerWithAPIServer, back-off sleeps included, and fastNodeStatusUpdate takes the
// same mutex first, so while registration fails fastStatusUpdateOnce polls once, at the start,
// then waits for the registration and the status update after it. The poll that waited computes
// its 120s timeout when it was due (wait.Until calls the function, which evaluates it, before it
// blocks): after a registration later than 120s it runs all the same, and the next one gives up.
func TestFastPollWaitsForRegistration(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		// runtimeErr keeps the node NotReady, so that the poll after the registration does not
		// end fastStatusUpdateOnce.
		runtimeErr   error
		until        time.Duration
		registeredAt string
		// wantAfter are the API calls from the successful registration on.
		wantAfter  []string
		wantChecks int // runtime checks of the polls
	}{{
		// Attempts at 100, 300, 700, 1500, 3100ms fail, the sixth at 6.3s succeeds.
		name:         "five failures",
		failures:     5,
		until:        6300 * time.Millisecond,
		registeredAt: "6.3s",
		wantAfter: []string{"6.3s create", "6.3s get", "6.3s status",
			"6.3s get"}, // the poll that waited: the node was registered Ready, done
	}, {
		// 22 failures: registered at 124.7s (12.7s, then every 7s).
		name:         "registered after the grace period",
		failures:     22,
		runtimeErr:   errors.New("container runtime is down"),
		until:        130 * time.Second,
		registeredAt: "2m4.7s",
		wantAfter: []string{"2m4.7s create", "2m4.7s get", "2m4.7s status",
			"2m4.7s get"}, // the poll that waited, timed at 100ms: not Ready; the next one gives up
		wantChecks: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			client := &fakeClient{clk: clk, failNext: tt.failures}
			state := &fakeState{err: tt.runtimeErr}
			s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: state, Jitter: noJitter()})
			if err != nil {
				t.Fatal(err)
			}
			s.DetachLease() // the lease's owner reads are not the poll's
			drive(t, s, clk, tt.until)
			if !s.Registered() {
				t.Fatalf("not registered at %v", clk.Since(vclock.Epoch))
			}
			var before []string
			after := client.calls
			for i, c := range client.calls {
				if c == tt.registeredAt+" create" {
					before, after = client.calls[:i], client.calls[i:]
					break
				}
			}
			reads := 0
			for _, c := range before {
				if strings.HasSuffix(c, " get") {
					reads++
				}
			}
			if reads != 1 {
				t.Errorf("%d node reads while registration was failing, want 1: the poll at the start (calls %v)", reads, before)
			}
			if diff := cmp.Diff(tt.wantAfter, after); diff != "" {
				t.Errorf("API calls from the registration on (-want +got):\n%s", diff)
			}
			if !s.fast.IsZero() {
				t.Errorf("fastStatusUpdateOnce still polling at %v, want done", s.fast.Sub(vclock.Epoch))
			}
			if state.checks != tt.wantChecks {
				t.Errorf("%d runtime checks, want %d", state.checks, tt.wantChecks)
			}
		})
	}
}

func TestReadyFollowsTheRuntimeState(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{}
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: rec, Client: client, RuntimeState: state, Jitter: noJitter()})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	drive(t, s, clk, 5*time.Second)
	state.err = errors.New("container runtime is down")
	drive(t, s, clk, 15*time.Second)
	var ready v1.NodeCondition
	for _, c := range client.node.Status.Conditions {
		if c.Type == v1.NodeReady {
			ready = c
		}
	}
	if ready.Status != v1.ConditionFalse || ready.Reason != "KubeletNotReady" || ready.Message != "container runtime is down" {
		t.Errorf("Ready = %s %s %q, want False KubeletNotReady with the runtime's error", ready.Status, ready.Reason, ready.Message)
	}
	var got []string
	for _, e := range rec.Events() {
		got = append(got, string(e.Event)+" "+e.To)
	}
	if diff := cmp.Diff([]string{"register ", "ready False"}, got); diff != "" {
		t.Errorf("node trace (-want +got):\n%s", diff)
	}
}

func TestNewNeedsAClient(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	if _, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, RuntimeState: &fakeState{}, Jitter: noJitter()}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("New() without a client error = %v, want %v", err, minikubelet.ErrMissingOption)
	}
}

func TestRegisteredNodeCarriesTheKubeletsLabels(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	register(t, s, clk)
	want := map[string]string{
		"kubernetes.io/hostname":  "node-1",
		"kubernetes.io/os":        "linux",
		"kubernetes.io/arch":      "amd64",
		"beta.kubernetes.io/os":   "linux",
		"beta.kubernetes.io/arch": "amd64",
		SimulatedLabel:            "true",
	}
	if diff := cmp.Diff(want, client.node.Labels); diff != "" {
		t.Errorf("node labels (-want +got):\n%s", diff)
	}
}

// TestFastStatusUpdate checks fastStatusUpdateOnce: a node registered NotReady is patched Ready
// at the first 100ms poll that finds the runtime state without errors, not at the first 10s
// status update, and the polling stops then.
func TestFastStatusUpdate(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{err: errors.New("PLEG is not healthy"), unhealthy: true}
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: rec, Client: client, RuntimeState: state, Jitter: noJitter()})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	drive(t, s, clk, 250*time.Millisecond)
	state.err, state.unhealthy = nil, false
	drive(t, s, clk, 11*time.Second)
	want := []string{
		"0s get lease", "0s get", // the lease controller's first sync: no node to own the lease yet
		"0s get",                                    // the first poll: no node yet
		"100ms create", "100ms get", "100ms status", // registered NotReady, the first status written
		"100ms get", "200ms get", // NotReady: poll again
		"300ms get", "300ms status", // would be Ready: patched, and the polling ends
		"10s get lease", "10s get", "10s lease", // the lease created
		"10.1s get", // unchanged since the fast update: not written
	}
	if diff := cmp.Diff(want, client.calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range rec.Events() {
		got = append(got, e.T.String()+" "+string(e.Event)+" "+e.To)
	}
	if diff := cmp.Diff([]string{"100ms register ", "300ms ready True"}, got); diff != "" {
		t.Errorf("node trace (-want +got):\n%s", diff)
	}
}

// TestFastStatusUpdateRetriesAConflict: the fast status update that would make the node Ready
// finds it changed by a controller (409). As the kubelet's fastNodeStatusUpdate, it retries at
// once by reading the node again, so the node is Ready without waiting 10s for the next period.
func TestFastStatusUpdateRetriesAConflict(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{unhealthy: true}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: state, Jitter: noJitter()})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	drive(t, s, clk, 150*time.Millisecond)
	state.unhealthy, client.conflictNext = false, 1
	drive(t, s, clk, time.Second)
	want := []string{
		"0s get lease", "0s get", "0s get",
		"100ms create", "100ms get", "100ms status", "100ms get", // registered NotReady
		"200ms get", "200ms status", // would be Ready: the write conflicts...
		"200ms get", "200ms status", // ...and the periodic update's read and write follow at once
	}
	if diff := cmp.Diff(want, client.calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
	ready := false
	for _, c := range client.node.Status.Conditions {
		ready = ready || c.Type == v1.NodeReady && c.Status == v1.ConditionTrue
	}
	if !ready {
		t.Errorf("node conditions after the retry = %+v, want Ready", client.node.Status.Conditions)
	}
}

// TestReportFrequency checks nodeStatusReportFrequency: an unchanged status is written at the
// first update (with a random delay drawn for the next report), then once per report period,
// while a change is written at once.
func TestReportFrequency(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: state, Jitter: noJitter(),
		StatusPeriod: 10 * time.Second, ReportPeriod: 30 * time.Second})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	drive(t, s, clk, 200*time.Second)
	var writes []time.Duration
	for _, c := range client.calls {
		if d, ok := strings.CutSuffix(c, " status"); ok {
			v, _ := time.ParseDuration(d)
			writes = append(writes, v)
		}
	}
	if len(writes) < 4 || writes[0] != registerBackoffMin {
		t.Fatalf("status writes at %v, want the first at the registration (100ms) and then every 30s or so", writes)
	}
	if gap := writes[1] - writes[0]; gap < 20*time.Second || gap > 50*time.Second {
		t.Errorf("second write %v after the first, want 30s ± the random delay", gap)
	}
	for i := 2; i < len(writes); i++ {
		if gap := writes[i] - writes[i-1]; gap != 30*time.Second {
			t.Errorf("write %d came %v after the one before, want the report period 30s", i, gap)
		}
	}
	// A change is written at the next update.
	last := writes[len(writes)-1]
	state.err = errors.New("container runtime is down")
	n := len(client.calls)
	drive(t, s, clk, last+40*time.Second)
	changed := false
	for _, c := range client.calls[n:] {
		if strings.HasSuffix(c, " status") {
			changed = true
		}
	}
	if !changed {
		t.Errorf("calls after the runtime went down = %v, want the NotReady status written", client.calls[n:])
	}
}

// TestNodeAdvertisesTheKubeletPort: daemonEndpoints carries the server's port, 10250 by default.
func TestNodeAdvertisesTheKubeletPort(t *testing.T) {
	for _, tc := range []struct{ port, want int32 }{{0, 10250}, {41234, 41234}} {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter(), KubeletPort: tc.port})
		if err != nil {
			t.Fatal(err)
		}
		drive(t, s, clk, time.Second)
		if got := client.node.Status.DaemonEndpoints.KubeletEndpoint.Port; got != tc.want {
			t.Errorf("KubeletPort %d: advertised port %d, want %d", tc.port, got, tc.want)
		}
	}
}

// fakeLister is the node informer's view of the fake API server's node.
type fakeLister struct{ c *fakeClient }

func (l fakeLister) Get(name string) (*v1.Node, error) {
	l.c.log("lister")
	if l.c.node == nil {
		return nil, apierrors.NewNotFound(v1.Resource("nodes"), name)
	}
	return l.c.node.DeepCopy(), nil
}

// TestStatusUpdatesReadTheLister: as the kubelet's tryUpdateNodeStatus, the first try reads the
// node lister and the retries after a failed write read the API server.
func TestStatusUpdatesReadTheLister(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, Lister: fakeLister{client}, RuntimeState: state, Jitter: noJitter()})
	if err != nil {
		t.Fatal(err)
	}
	s.DetachLease()
	drive(t, s, clk, 5*time.Second)
	// A change to write, whose writes conflict twice.
	state.err, client.conflictNext = errors.New("container runtime is down"), 2
	drive(t, s, clk, 11*time.Second)
	want := []string{
		"0s lister",                                    // fastStatusUpdateOnce's first poll: no node yet
		"100ms create", "100ms lister", "100ms status", // registered, the first status written
		"100ms lister", // fastStatusUpdateOnce: registered Ready
		"10.1s lister", "10.1s status", "10.1s get", "10.1s status", "10.1s get", "10.1s status",
	}
	if diff := cmp.Diff(want, client.calls); diff != "" {
		t.Errorf("API calls (-want +got):\n%s", diff)
	}
}

// TestNodeRegistersWithTaints: registerWithTaints' taints are on the node it creates.
func TestNodeRegistersWithTaints(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter(), Taints: []v1.Taint{SimulatedTaint}})
	if err != nil {
		t.Fatal(err)
	}
	register(t, s, clk)
	want := []v1.Taint{{Key: "minikubelet.io/simulated", Value: "true", Effect: v1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(want, client.node.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
}

// TestNodeStatusPatch checks the patch nodeutil.PatchNodeStatus sends: the status difference
// without the spec, and changed addresses replaced whole.
func TestNodeStatusPatch(t *testing.T) {
	base := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Spec:       v1.NodeSpec{Unschedulable: true},
		Status: v1.NodeStatus{
			Addresses:  []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeHostName, Address: "node-1"}},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionFalse}},
		},
	}
	ready := base.DeepCopy()
	ready.Spec.Unschedulable = false
	ready.Status.Conditions[0].Status = v1.ConditionTrue
	moved := ready.DeepCopy()
	moved.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: "node-1"}}
	for _, tc := range []struct {
		name string
		node *v1.Node
		want string
	}{
		{"conditions", ready, `{"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"status":"True","type":"Ready"}]}}`},
		{"addresses", moved, `{"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"addresses":[{"address":"node-1","type":"Hostname"},{"$patch":"replace"}],"conditions":[{"status":"True","type":"Ready"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, node := base.DeepCopy(), tc.node.DeepCopy()
			got, err := statusPatch(base, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch = %s, want %s", got, tc.want)
			}
			// The patch is made on copies: neither node changes.
			if diff := cmp.Diff(before, base); diff != "" {
				t.Errorf("statusPatch changed the original (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(node, tc.node); diff != "" {
				t.Errorf("statusPatch changed the node (-before +after):\n%s", diff)
			}
		})
	}
}

// TestBackOffsStartWhenTheCallReturns: registration, the lease's reads and the CSINode's tries
// sleep their back-off once the failed call has returned, as the kubelet's do, so a call that
// takes 1s moves every later try by 1s.
func TestBackOffsStartWhenTheCallReturns(t *testing.T) {
	second := time.Second
	t.Run("registration", func(t *testing.T) {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk, failNext: 2, latency: map[string]time.Duration{"create": second}}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
		if err != nil {
			t.Fatal(err)
		}
		s.DetachLease()
		drive(t, s, clk, 5*time.Second)
		// 100ms, then 1s for the call and 200ms, then 1s and 400ms.
		if diff := cmp.Diff([]string{"100ms create", "1.3s create", "2.7s create"}, only(client.calls, "create")); diff != "" {
			t.Errorf("registration attempts (-want +got):\n%s", diff)
		}
	})
	t.Run("lease", func(t *testing.T) {
		clk := vclock.New(vclock.Epoch)
		client := &failingLeaseReads{fakeClient: fakeClient{clk: clk, latency: map[string]time.Duration{"get lease": second}}}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
		if err != nil {
			t.Fatal(err)
		}
		renewUntil(s.DetachLease(), clk, 5*time.Second, func(time.Duration) {})
		// Each read takes 1s, then the back-off: 200ms, 400ms, 800ms.
		want := []string{"0s get lease", "1.2s get lease", "2.6s get lease", "4.4s get lease"}
		if diff := cmp.Diff(want, client.calls); diff != "" {
			t.Errorf("lease reads (-want +got):\n%s", diff)
		}
	})
	t.Run("CSINode", func(t *testing.T) {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk}
		// The API server answers (no CSINode), but the node is not there to own one.
		csi := &fakeCSINodes{c: client, latency: map[string]time.Duration{"node": second}}
		init := newCSINodeInit(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, CSINodes: csi}, noJitter())
		init.start(clk.Now())
		for {
			init.step(context.Background(), clk.Now())
			next, ok := init.nextWake()
			if !ok || next.After(vclock.Epoch.Add(5*time.Second)) {
				break
			}
			if next.After(clk.Now()) {
				clk.Set(next)
			}
		}
		// Each try takes 1s, then the inner back-off: 10ms, 50ms, 250ms; then the outer one, 15ms.
		want := []string{"0s node", "1.01s node", "2.06s node", "3.31s node", "4.325s node"}
		if diff := cmp.Diff(want, only(csi.calls, "node")); diff != "" {
			t.Errorf("CSINode tries (-want +got):\n%s", diff)
		}
	})
}

// only is the calls of one kind.
func only(calls []string, kind string) []string {
	var out []string
	for _, c := range calls {
		if _, k, _ := strings.Cut(c, " "); k == kind {
			out = append(out, c)
		}
	}
	return out
}

// TestTimesAreReadAfterTheCalls: the instants the kubelet times from the end of its API calls
// follow a call that takes time: fastStatusUpdateOnce's next poll (wait.Until is sliding), the
// last status report (patchNodeStatus reads the clock once the patch returned), and the CSINode's
// wait for the API server (PollImmediateInfinite's ticker starts once the immediate read returned,
// and drops the ticks that come during a read).
func TestTimesAreReadAfterTheCalls(t *testing.T) {
	t.Run("fast poll", func(t *testing.T) {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk, latency: map[string]time.Duration{"get": 30 * time.Millisecond}}
		state := &fakeState{err: errors.New("container runtime is down")}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: state, Jitter: noJitter()})
		if err != nil {
			t.Fatal(err)
		}
		s.DetachLease()
		drive(t, s, clk, 500*time.Millisecond)
		want := []string{
			"0s get",                    // the first poll, returning at 30ms
			"100ms create",              // registration: the next poll waits for it...
			"100ms get", "130ms status", // ...and the status update after it
			"130ms get",              // the poll that waited, returning at 160ms
			"260ms get", "390ms get", // then 100ms after each poll returned
		}
		if diff := cmp.Diff(want, client.calls); diff != "" {
			t.Errorf("API calls (-want +got):\n%s", diff)
		}
	})
	t.Run("last report", func(t *testing.T) {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk, latency: map[string]time.Duration{"status": time.Second}}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter()})
		if err != nil {
			t.Fatal(err)
		}
		s.DetachLease()
		drive(t, s, clk, 200*time.Millisecond)
		// The first status, written at 100ms, returns at 1.1s.
		if got, want := s.lastReport.Sub(vclock.Epoch), 1100*time.Millisecond; got != want {
			t.Errorf("last report at %v, want %v, when the patch returned", got, want)
		}
	})
	t.Run("CSINode's wait for the API server", func(t *testing.T) {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk, node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}}
		// Each read takes 1.5s; the API server answers from 5s.
		csi := &fakeCSINodes{c: client, down: 5 * time.Second, latency: map[string]time.Duration{"cached get": 1500 * time.Millisecond, "get": 1500 * time.Millisecond}}
		init := newCSINodeInit(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, CSINodes: csi}, noJitter())
		init.start(clk.Now())
		for {
			init.step(context.Background(), clk.Now())
			next, ok := init.nextWake()
			if !ok || next.After(vclock.Epoch.Add(7*time.Second)) {
				break
			}
			if next.After(clk.Now()) {
				clk.Set(next)
			}
		}
		// The ticker starts at 1.5s: a read at 2.5s, its 3.5s tick dropped (the read returns at
		// 4s), a read at 4.5s, its 5.5s tick dropped, the read at 6.5s answered; the try follows
		// once it returned.
		want := []string{"0s cached get", "2.5s cached get", "4.5s cached get", "6.5s cached get", "8s node", "8s get", "9.5s create"}
		if diff := cmp.Diff(want, csi.calls); diff != "" {
			t.Errorf("API server reads (-want +got):\n%s", diff)
		}
	})
}
