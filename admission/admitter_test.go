package admission

import (
	"context"
	"errors"
	"iter"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet"
)

// podSet is a fixed set of active pods.
type podSet map[k8stypes.UID]*v1.Pod

func newPodSet(pods ...*v1.Pod) podSet {
	s := podSet{}
	for _, p := range pods {
		s[p.UID] = p
	}
	return s
}

func (s podSet) Get(uid k8stypes.UID) (*v1.Pod, bool) {
	p, ok := s[uid]
	return p, ok
}

func (s podSet) All() iter.Seq[*v1.Pod] { return maps.Values(s) }

type statusLog map[string]v1.PodStatus

func (s statusLog) SetPodStatus(pod *v1.Pod, st v1.PodStatus) { s[pod.Name] = st }

type fakeDevices struct{ ok bool }

func (d fakeDevices) RemovePods(map[string]bool) {}

func (d fakeDevices) Admit(context.Context, *v1.Pod) (bool, string, string) {
	if d.ok {
		return true, "", ""
	}
	return false, "UnexpectedAdmissionError", "Allocate failed due to no room, which is unexpected"
}

// harness is an Admitter over a fixed node and pod list, recording kills, statuses and events.
type harness struct {
	a        *Admitter
	statuses statusLog
	events   *record.FakeRecorder
	killed   []string
	killedSt map[string]v1.PodStatus
}

func newHarness(t *testing.T, node *v1.Node, active []*v1.Pod, devices Devices) *harness {
	t.Helper()
	h := &harness{statuses: statusLog{}, events: record.NewFakeRecorder(16), killedSt: map[string]v1.PodStatus{}}
	opts := Options{
		Node:       func(context.Context) (*v1.Node, error) { return node, nil },
		ActivePods: newPodSet(active...),
		Kill: func(pod *v1.Pod, fn func(*v1.PodStatus)) {
			h.killed = append(h.killed, pod.Name)
			st := v1.PodStatus{Phase: v1.PodRunning}
			fn(&st)
			h.killedSt[pod.Name] = st
		},
		Status:   h.statuses,
		Recorder: h.events,
		Devices:  devices,
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.a = a
	return h
}

func (h *harness) drain() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestNewRequiresOptions(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("New(empty) = %v, want minikubelet.ErrMissingOption", err)
	}
}

// TestRejectPod checks rejectPod: the event carries the handler's message, the status adds
// "Pod was rejected: " and keeps the QOS class; the device handler runs before the predicate one.
func TestRejectPod(t *testing.T) {
	node := testNode(rl("cpu", "1", "memory", "1Gi", "pods", "110"))
	for _, tc := range []struct {
		name       string
		devices    Devices
		pod        *v1.Pod
		wantReason string
		wantMsg    string
	}{
		{name: "device allocation first", devices: fakeDevices{}, pod: testPod("p", ctr("app", rl("cpu", "2"))),
			wantReason: "UnexpectedAdmissionError", wantMsg: "Allocate failed due to no room, which is unexpected"},
		{name: "out of cpu", devices: fakeDevices{ok: true}, pod: testPod("p", ctr("app", rl("cpu", "2"))),
			wantReason: "OutOfcpu", wantMsg: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000"},
		{name: "os label", pod: func() *v1.Pod {
			p := testPod("p")
			p.Labels = map[string]string{"kubernetes.io/os": "windows"}
			return p
		}(), wantReason: "PodOSSelectorNodeLabelDoesNotMatch", wantMsg: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, node, []*v1.Pod{tc.pod}, tc.devices)
			if h.a.Admit(context.Background(), tc.pod) {
				t.Fatal("Admit() = true, want a rejection")
			}
			want := v1.PodStatus{Phase: v1.PodFailed, Reason: tc.wantReason, Message: "Pod was rejected: " + tc.wantMsg, QOSClass: qosOf(tc.pod)}
			if diff := cmp.Diff(want, h.statuses["p"]); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Warning " + tc.wantReason + " " + tc.wantMsg}, h.drain()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func qosOf(p *v1.Pod) v1.PodQOSClass {
	if len(p.Spec.Containers) > 0 && len(p.Spec.Containers[0].Resources.Requests) > 0 {
		return v1.PodQOSBurstable
	}
	return v1.PodQOSBestEffort
}

// TestAdmitAsksTheHandlersWhateverThePhase: Admit is canAdmitPod and rejectPod, which look at
// the pod's resources, not its phase. The kubelet's HandlePodAdditions is what leaves a finished
// pod out of admission (the kubelet package's allocatingAdmitter), so a finished pod that does
// not fit and reaches Admit is refused.
func TestAdmitAsksTheHandlersWhateverThePhase(t *testing.T) {
	for _, phase := range []v1.PodPhase{v1.PodPending, v1.PodSucceeded, v1.PodFailed} {
		pod := testPod("p", ctr("app", rl("cpu", "100")))
		pod.Status.Phase = phase
		h := newHarness(t, testNode(rl("cpu", "1", "pods", "110")), nil, nil)
		if h.a.Admit(context.Background(), pod) {
			t.Errorf("a %s pod asking for 100 CPUs of 1 was admitted", phase)
		}
		if got := h.statuses["p"]; got.Phase != v1.PodFailed || got.Reason != "OutOfcpu" {
			t.Errorf("a refused %s pod's status = %+v, want Failed with reason OutOfcpu", phase, got)
		}
	}
}

func critical(p *v1.Pod) *v1.Pod {
	p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	p.Spec.Priority = ptr.To[int32](2000001000)
	return p
}

func guaranteed(name, cpu, mem string) *v1.Pod {
	c := ctr("app", rl("cpu", cpu, "memory", mem))
	c.Resources.Limits = rl("cpu", cpu, "memory", mem)
	return testPod(name, c)
}

// TestCriticalPodPreempts checks the critical pod admission handler: victims by QOS tier and
// distance, their Preempting event and status, and the failures it leaves alone.
func TestCriticalPodPreempts(t *testing.T) {
	node := testNode(rl("cpu", "4", "memory", "4Gi", "pods", "110"))
	be := testPod("besteffort", ctr("app", nil))
	small := testPod("small", ctr("app", rl("cpu", "500m")))
	big := testPod("big", ctr("app", rl("cpu", "2")))
	g := guaranteed("guaranteed", "1500m", "1Gi")
	for _, tc := range []struct {
		name       string
		pod        *v1.Pod
		active     []*v1.Pod
		wantKilled []string
		wantReason string
		wantMsg    string
	}{
		{name: "not critical is rejected", pod: testPod("p", ctr("app", rl("cpu", "1"))), active: []*v1.Pod{small, big, g},
			wantReason: "OutOfcpu", wantMsg: "Node didn't have enough resource: cpu, requested: 1000, used: 4000, capacity: 4000"},
		// 1000m missing: the burstable pod closest to 1000m is big (distance 0), not small.
		{name: "burstable before guaranteed", pod: critical(testPod("p", ctr("app", rl("cpu", "1")))), active: []*v1.Pod{be, small, big, g},
			wantKilled: []string{"big"}},
		// 1000m missing with only small (500m) and g (1500m): evicting every burstable pod is
		// not enough, so g goes; then nothing more is needed, and small stays.
		{name: "guaranteed when needed", pod: critical(testPod("p", ctr("app", rl("cpu", "3")))), active: []*v1.Pod{small, g},
			wantKilled: []string{"guaranteed"}},
		{name: "no victims", pod: critical(testPod("p", ctr("app", rl("cpu", "8")))), active: []*v1.Pod{small},
			wantReason: "UnexpectedAdmissionError",
			wantMsg:    "Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: cpu, q: 4000), ]"},
		{name: "other failures are not preempted for", pod: func() *v1.Pod {
			p := critical(testPod("p", ctr("app", rl("cpu", "1"))))
			p.Spec.NodeSelector = map[string]string{"disk": "hdd"}
			return p
		}(), active: []*v1.Pod{small, big, g},
			wantReason: "NodeAffinity", wantMsg: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, node, tc.active, nil)
			ok := h.a.Admit(context.Background(), tc.pod)
			if ok != (tc.wantReason == "") {
				t.Fatalf("Admit() = %v, status %+v", ok, h.statuses["p"])
			}
			if diff := cmp.Diff(tc.wantKilled, h.killed); diff != "" {
				t.Errorf("killed (-want +got):\n%s", diff)
			}
			var wantEvents []string
			for range tc.wantKilled {
				wantEvents = append(wantEvents, "Warning Preempting Preempted in order to admit critical pod")
			}
			if tc.wantReason != "" {
				wantEvents = append(wantEvents, "Warning "+tc.wantReason+" "+tc.wantMsg)
				if got := h.statuses["p"]; got.Reason != tc.wantReason || got.Message != "Pod was rejected: "+tc.wantMsg {
					t.Errorf("status = %s %q", got.Reason, got.Message)
				}
			}
			if diff := cmp.Diff(wantEvents, h.drain()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for _, name := range tc.wantKilled {
				st := h.killedSt[name]
				if st.Phase != v1.PodFailed || st.Reason != "Preempting" || st.Message != "Preempted in order to admit critical pod" ||
					len(st.Conditions) != 1 || st.Conditions[0].Type != v1.DisruptionTarget || st.Conditions[0].Reason != "TerminationByKubelet" ||
					st.Conditions[0].Message != "Pod was preempted by Kubelet to accommodate a critical pod." {
					t.Errorf("victim %s status = %+v", name, st)
				}
			}
		})
	}
}

// TestCanResize: a resize is checked beside the other active pods, not beside the pod's own
// current size, and a refusal rejects nothing: no status, no event.
func TestCanResize(t *testing.T) {
	node := testNode(rl("cpu", "1", "memory", "1Gi", "pods", "110"))
	web, batch := testPod("web", ctr("app", rl("cpu", "300m"))), testPod("batch", ctr("work", rl("cpu", "500m")))
	h := newHarness(t, node, []*v1.Pod{web, batch}, nil)
	fits := testPod("web", ctr("app", rl("cpu", "500m")))
	if ok, reason, msg := h.a.CanResize(context.Background(), fits); !ok {
		t.Errorf("CanResize(500m beside 500m of 1000m) = %s %q, want ok", reason, msg)
	}
	tooBig := testPod("web", ctr("app", rl("cpu", "600m")))
	ok, reason, msg := h.a.CanResize(context.Background(), tooBig)
	if want := "Node didn't have enough resource: cpu, requested: 600, used: 500, capacity: 1000"; ok || reason != "OutOfcpu" || msg != want {
		t.Errorf("CanResize(600m) = %v, %s, %q, want false, OutOfcpu, %q", ok, reason, msg, want)
	}
	if len(h.statuses) != 0 || len(h.drain()) != 0 {
		t.Errorf("CanResize recorded a rejection: statuses %v", h.statuses)
	}
}
