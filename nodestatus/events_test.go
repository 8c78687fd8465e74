package nodestatus

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// eventLog records the node's events as "<at> <reason> <message>", checking the reference.
type eventLog struct {
	t   *testing.T
	clk *vclock.Clock
	got []string
}

func (l *eventLog) Event(object runtime.Object, eventType, reason, message string) {
	ref, ok := object.(*v1.ObjectReference)
	if !ok || ref.Kind != "Node" || ref.APIVersion != "v1" || ref.Name != "node-1" || ref.UID != "" || ref.Namespace != "" {
		l.t.Errorf("event %s about %#v, want the kubelet's nodeRef (kind Node, name node-1, no UID)", reason, object)
	}
	if eventType != v1.EventTypeNormal {
		l.t.Errorf("event %s of type %s, want Normal", reason, eventType)
	}
	l.got = append(l.got, fmt.Sprintf("%v %s %s", l.clk.Since(vclock.Epoch), reason, message))
}

// TestNodeEvents follows the node's events through a kubelet's life, case by case against v1.35's
// condition setters: the container manager's start when the kubelet runs, the pressure conditions
// of the node it registers 100ms later (Ready new, so no event), NodeReady when the fast update
// finds it ready, NodeNotReady and NodeReady as the runtime goes and comes back, NodeNotSchedulable
// and NodeSchedulable at the status update after a cordon and an uncordon (each 10s after the
// registration's, without jitter here), and a second kubelet on the same node recording the
// registration events again.
func TestNodeEvents(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	client := &fakeClient{clk: clk}
	state := &fakeState{unhealthy: true}
	log := &eventLog{t: t, clk: clk}
	newStatus := func() *Status {
		s, err := New(Options{NodeName: "node-1", Clock: clk, Tracer: trace.Discard, Client: client, RuntimeState: state, Recorder: log, Jitter: noJitter()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := newStatus()
	state.err = fmt.Errorf("PLEG is not healthy")
	drive(t, s, clk, 150*time.Millisecond)
	state.unhealthy, state.err = false, nil
	drive(t, s, clk, 5*time.Second)
	state.err = fmt.Errorf("container runtime is down")
	drive(t, s, clk, 15*time.Second)
	state.err = nil
	drive(t, s, clk, 25*time.Second)
	client.node.Spec.Unschedulable = true
	drive(t, s, clk, 35*time.Second)
	client.node.Spec.Unschedulable = false
	drive(t, s, clk, 45*time.Second)
	// A restarted kubelet registers again: the node exists and is adopted, but the node it built
	// records the setters' events all the same.
	clk.Set(vclock.Epoch.Add(45 * time.Second))
	s = newStatus()
	drive(t, s, clk, 46*time.Second)

	const is = "Node node-1 status is now: "
	want := []string{
		"0s NodeAllocatableEnforced Updated Node Allocatable limit across pods",
		"100ms NodeHasSufficientMemory " + is + "NodeHasSufficientMemory",
		"100ms NodeHasNoDiskPressure " + is + "NodeHasNoDiskPressure",
		"100ms NodeHasSufficientPID " + is + "NodeHasSufficientPID",
		"200ms NodeReady " + is + "NodeReady",
		"10.1s NodeNotReady " + is + "NodeNotReady",
		"20.1s NodeReady " + is + "NodeReady",
		"30.1s NodeNotSchedulable " + is + "NodeNotSchedulable",
		"40.1s NodeSchedulable " + is + "NodeSchedulable",
		"45s NodeAllocatableEnforced Updated Node Allocatable limit across pods",
		"45.1s NodeHasSufficientMemory " + is + "NodeHasSufficientMemory",
		"45.1s NodeHasNoDiskPressure " + is + "NodeHasNoDiskPressure",
		"45.1s NodeHasSufficientPID " + is + "NodeHasSufficientPID",
	}
	if diff := cmp.Diff(want, log.got); diff != "" {
		t.Errorf("node events (-want +got):\n%s", diff)
	}
}

// TestBirthCry checks the event a kubelet records when its process starts.
func TestBirthCry(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	log := &eventLog{t: t, clk: clk}
	BirthCry(log, "node-1")
	if diff := cmp.Diff([]string{"0s Starting Starting kubelet."}, log.got); diff != "" {
		t.Errorf("BirthCry (-want +got):\n%s", diff)
	}
}
