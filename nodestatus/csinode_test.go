package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeCSINodes keeps one CSINode in memory beside fakeClient's node, and logs each call at its
// virtual instant.
type fakeCSINodes struct {
	c       *fakeClient
	csiNode *storagev1.CSINode
	// down makes every call fail as an unreachable API server does, until the instant.
	down  time.Duration
	calls []string
	// latency is how long each call of a kind takes, as fakeClient's.
	latency map[string]time.Duration
}

func (f *fakeCSINodes) log(call string) error {
	at := f.c.clk.Since(vclock.Epoch)
	f.calls = append(f.calls, at.String()+" "+call)
	f.c.clk.Advance(f.latency[call])
	if at < f.down {
		return errors.New("connection refused")
	}
	return nil
}

func (f *fakeCSINodes) GetNode(_ context.Context, name string) (*v1.Node, error) {
	if err := f.log("node"); err != nil {
		return nil, err
	}
	if f.c.node == nil {
		return nil, apierrors.NewNotFound(v1.Resource("nodes"), name)
	}
	return f.c.node.DeepCopy(), nil
}

// GetCSINode logs a read from the API server's cache (resourceVersion "0") as "cached get".
func (f *fakeCSINodes) GetCSINode(_ context.Context, name string, opts metav1.GetOptions) (*storagev1.CSINode, error) {
	call := "get"
	if opts.ResourceVersion == "0" {
		call = "cached get"
	}
	if err := f.log(call); err != nil {
		return nil, err
	}
	if f.csiNode == nil {
		return nil, apierrors.NewNotFound(storagev1.Resource("csinodes"), name)
	}
	return f.csiNode.DeepCopy(), nil
}

func (f *fakeCSINodes) CreateCSINode(_ context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error) {
	if err := f.log("create"); err != nil {
		return nil, err
	}
	f.csiNode = cn.DeepCopy()
	return cn, nil
}

func (f *fakeCSINodes) UpdateCSINode(_ context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error) {
	if err := f.log("update"); err != nil {
		return nil, err
	}
	f.csiNode = cn.DeepCopy()
	return cn, nil
}

func (f *fakeCSINodes) DeleteCSINode(context.Context, string) error {
	if err := f.log("delete"); err != nil {
		return err
	}
	f.csiNode = nil
	return nil
}

// readyOf is the node's Ready condition as "<status> <message>".
func readyOf(n *v1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return string(c.Status) + " " + c.Message
		}
	}
	return "none"
}

// TestCSINodeKeepsANewNodeNotReady follows v1.35's start-up with the CSI volume plugin: the
// storage error "CSINode is not yet initialized" is set from the start, so the node registered at
// 100ms is NotReady with it; the plugin's tries (0, 10ms, 60ms and 310ms, without jitter here)
// fail until the node can be read, then create the empty CSINode, owned by the node and with the
// migrated-plugins annotation; fastStatusUpdateOnce's next poll reports the node Ready, with
// NodeReady.
func TestCSINodeKeepsANewNodeNotReady(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	csi := &fakeCSINodes{c: client}
	log := &eventLog{t: t, clk: clk}
	s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{}, Jitter: noJitter(),
		CSINodes: csi, Recorder: log})
	if err != nil {
		t.Fatal(err)
	}
	s.DetachLease()
	drive(t, s, clk, 150*time.Millisecond)
	if client.node == nil {
		t.Fatal("node not registered at 150ms")
	}
	if got, want := readyOf(client.node), "False CSINode is not yet initialized"; got != want {
		t.Errorf("registered node's Ready = %q, want %q", got, want)
	}
	drive(t, s, clk, time.Second)
	want := []string{
		"0s cached get", "0s node", // the API server answers; the node does not exist yet
		"10ms node", "60ms node", // the attempt's next tries
		"310ms node", "310ms get", "310ms create", // the node exists: the CSINode is created
	}
	if diff := cmp.Diff(want, csi.calls); diff != "" {
		t.Errorf("CSINode calls (-want +got):\n%s", diff)
	}
	if got, want := readyOf(client.node), "True kubelet is posting ready status"; got != want {
		t.Errorf("node's Ready at 1s = %q, want %q", got, want)
	}
	cn := csi.csiNode
	if cn == nil {
		t.Fatal("no CSINode created")
	}
	if got := cn.Annotations[v1.MigratedPluginsAnnotationKey]; got != MigratedPlugins {
		t.Errorf("CSINode annotation = %q, want %q", got, MigratedPlugins)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "node-uid"}}
	if diff := cmp.Diff(wantOwner, cn.OwnerReferences); diff != "" {
		t.Errorf("CSINode owner (-want +got):\n%s", diff)
	}
	if cn.Spec.Drivers == nil || len(cn.Spec.Drivers) != 0 {
		t.Errorf("CSINode drivers = %#v, want an empty list", cn.Spec.Drivers)
	}
	if got := log.got[len(log.got)-1]; got != "400ms NodeReady Node node-1 status is now: NodeReady" {
		t.Errorf("last node event = %q, want NodeReady at the poll after the CSINode (400ms)", got)
	}
}

// TestCSINodeInitialization checks initializeCSINode's other paths against v1.35: the wait for
// the API server (a read every second until it answers, NotFound too), a CSINode another node
// owns (deleted, then created at the next try), one without the annotation (updated), and an
// initialization that never succeeds (six attempts of four tries with their back-offs, each
// failure the storage error and traced, then no more tries).
func TestCSINodeInitialization(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
	// owned is a CSINode owned by the node named node-1 with uid.
	owned := func(uid types.UID, annotated bool) *storagev1.CSINode {
		cn := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: uid}}}}
		if annotated {
			cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: MigratedPlugins}
		}
		return cn
	}
	notFound := `nodes "node-1" not found`
	for _, tc := range []struct {
		name    string
		node    *v1.Node
		csiNode *storagev1.CSINode
		down    time.Duration
		until   time.Duration
		// wantCalls are the calls, wantErr the storage error at the end, wantTraced the traced
		// errors' messages.
		wantCalls  []string
		wantErr    string
		wantTraced int
	}{{
		name: "the API server answers from 2.5s", node: node, down: 2500 * time.Millisecond, until: 5 * time.Second,
		wantCalls: []string{"0s cached get", "1s cached get", "2s cached get", "3s cached get", "3s node", "3s get", "3s create"},
	}, {
		name: "a CSINode another node owns is replaced", node: node, csiNode: owned("old-uid", true), until: time.Second,
		wantCalls: []string{"0s cached get", "0s node", "0s get", "0s delete", "10ms node", "10ms get", "10ms create"},
	}, {
		name: "a CSINode without the annotation gets it", node: node, csiNode: owned(node.UID, false), until: time.Second,
		wantCalls: []string{"0s cached get", "0s node", "0s get", "0s update"},
	}, {
		name: "an initialized CSINode is left alone", node: node, csiNode: owned(node.UID, true), until: time.Second,
		wantCalls: []string{"0s cached get", "0s node", "0s get"},
	}, {
		name: "the node never exists: six attempts, then none", until: time.Minute,
		wantCalls: func() []string {
			var calls []string
			at, outer := time.Duration(0), 15*time.Millisecond
			for range 6 {
				inner := 10 * time.Millisecond
				for try := range 4 {
					calls = append(calls, at.String()+" node")
					if try < 3 {
						at += inner
						inner *= 5
					}
				}
				at += outer
				outer *= 6
			}
			return append([]string{"0s cached get"}, calls...)
		}(),
		wantErr:    "failed to initialize CSINode: error updating CSINode annotation: timed out waiting for the condition; caused by: " + notFound,
		wantTraced: 6,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			client := &fakeClient{clk: clk}
			if tc.node != nil {
				client.node = tc.node.DeepCopy()
			}
			csi := &fakeCSINodes{c: client, csiNode: tc.csiNode, down: tc.down}
			rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			init := newCSINodeInit(Options{NodeName: "node-1", Clock: clk, Tracer: rec, CSINodes: csi}, noJitter())
			init.start(clk.Now())
			for {
				init.step(context.Background(), clk.Now())
				next, ok := init.nextWake()
				if !ok || next.After(vclock.Epoch.Add(tc.until)) {
					break
				}
				clk.Set(next)
			}
			if diff := cmp.Diff(tc.wantCalls, csi.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			got := ""
			if err := init.storageError(); err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("storage error = %q, want %q", got, tc.wantErr)
			}
			// A failed attempt's error keeps its causes: the back-off's timeout and the last try's.
			if err := init.storageError(); tc.wantTraced > 0 && (!errors.Is(err, errWaitTimeout) || !apierrors.IsNotFound(err)) {
				t.Errorf("storage error %v: errors.Is(errWaitTimeout) = %v, apierrors.IsNotFound = %v, want both", err, errors.Is(err, errWaitTimeout), apierrors.IsNotFound(err))
			}
			traced := 0
			for _, e := range rec.Events() {
				if e.Event == trace.KindError && e.Reason == "FailedToInitializeCSINode" && e.Message == tc.wantErr {
					traced++
				}
			}
			if traced != tc.wantTraced {
				t.Errorf("%d failures traced, want %d", traced, tc.wantTraced)
			}
			if tc.wantErr == "" {
				if cn := csi.csiNode; cn == nil || cn.Annotations[v1.MigratedPluginsAnnotationKey] != MigratedPlugins || cn.OwnerReferences[0].UID != node.UID {
					t.Errorf("CSINode = %+v, want one the node owns, with the annotation", cn)
				}
			}
		})
	}
}

// TestJitter: a jittered wait is its duration plus up to its factor of it (wait.Jitter): 4% for
// the node status and lease periods, 10% for the CSINode's back-off steps.
func TestJitter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		d      time.Duration
		factor float64
		max    time.Duration
	}{
		{d: 10 * time.Second, factor: periodJitter, max: 10*time.Second + 400*time.Millisecond},
		{d: 100 * time.Millisecond, factor: csiNodeJitter, max: 110 * time.Millisecond},
	} {
		for range 100 {
			if got := jitter(r, tc.d, tc.factor); got < tc.d || got >= tc.max {
				t.Fatalf("jitter(%v, %v) = %v, want in [%v, %v)", tc.d, tc.factor, got, tc.d, tc.max)
			}
		}
	}
	if got := jitter(noJitter(), time.Second, periodJitter); got != time.Second {
		t.Errorf("jitter(1s) without a draw = %v, want 1s", got)
	}
}

// TestSetMigrationAnnotation: the annotation lists every migrated in-tree plugin, compared as a
// set, as the node info manager's setMigrationAnnotation does.
func TestSetMigrationAnnotation(t *testing.T) {
	shuffled := strings.Split(MigratedPlugins, ",")
	shuffled[0], shuffled[len(shuffled)-1] = shuffled[len(shuffled)-1], shuffled[0]
	for _, tc := range []struct {
		name, have string
		set        bool
	}{
		{name: "none", set: true},
		{name: "another set", have: "kubernetes.io/gce-pd", set: true},
		{name: "the same", have: MigratedPlugins},
		{name: "the same in another order", have: strings.Join(shuffled, ",")},
	} {
		cn := &storagev1.CSINode{}
		if tc.have != "" {
			cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: tc.have}
		}
		if got := SetMigrationAnnotation(cn); got != tc.set {
			t.Errorf("%s: SetMigrationAnnotation() = %v, want %v", tc.name, got, tc.set)
		}
		if tc.set && cn.Annotations[v1.MigratedPluginsAnnotationKey] != MigratedPlugins {
			t.Errorf("%s: annotation = %q, want %q", tc.name, cn.Annotations[v1.MigratedPluginsAnnotationKey], MigratedPlugins)
		}
	}
}

// TestPeriodsAreJitteredAndSliding: the node status loop and the lease controller wait their
// period plus up to 4% after each run ends (JitterUntil with jitter 0.04, sliding), with jitter
// drawn from the seeded stream, the same for the same seed. The node reads and lease writes take
// 2s each, so a run ends 2s after it starts: sliding periods start 12s apart at least.
func TestPeriodsAreJitteredAndSliding(t *testing.T) {
	const call = 2 * time.Second
	run := func(seed uint64) (status, lease []time.Duration) {
		clk := vclock.New(vclock.Epoch)
		client := &fakeClient{clk: clk, node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}},
			latency: map[string]time.Duration{"get": call, "lease": call}}
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: &fakeState{},
			Jitter: rand.New(rand.NewPCG(seed, seed))})
		if err != nil {
			t.Fatal(err)
		}
		drive(t, s, clk, 2*time.Minute)
		for _, c := range client.calls {
			at, call, _ := strings.Cut(c, " ")
			d, err := time.ParseDuration(at)
			if err != nil {
				t.Fatal(err)
			}
			switch call {
			case "get":
				// A periodic status update's read: the start-up's reads (the lease's owner, the
				// fast polls, the update at the registration) are over by 10s.
				if d > 10*time.Second {
					status = append(status, d)
				}
			case "lease":
				lease = append(lease, d)
			}
		}
		return status, lease
	}
	status, lease := run(7)
	for name, times := range map[string][]time.Duration{"status update": status, "lease renewal": lease} {
		if len(times) < 8 {
			t.Fatalf("%d %ss in 2m, want about 10: %v", len(times), name, times)
		}
		jittered := false
		for i := 1; i < len(times); i++ {
			gap := times[i] - times[i-1]
			if gap < 10*time.Second+call || gap >= 10*time.Second+call+400*time.Millisecond {
				t.Errorf("%s %d came %v after the one before, want the call's %v, then 10s plus up to 4%%", name, i, gap, call)
			}
			jittered = jittered || gap != 10*time.Second+call
		}
		if !jittered {
			t.Errorf("%ss exactly 10s apart, want jitter: %v", name, times)
		}
	}
	again, _ := run(7)
	if diff := cmp.Diff(status, again); diff != "" {
		t.Errorf("status updates of the same seed differ (-first +second):\n%s", diff)
	}
	other, _ := run(8)
	if cmp.Equal(status, other) {
		t.Errorf("status updates of two seeds are the same: %v", fmt.Sprint(status))
	}
}
