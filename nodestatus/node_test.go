package nodestatus

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/events"
)

// TestHeartbeatKeepsOtherConditions: the kubelet's condition setters update their own conditions
// where they sit and never remove another writer's (NetworkUnavailable from a network plugin or
// the route controller, a node-problem-detector condition), so a heartbeat leaves a foreign
// condition as it is, its patch does not delete it, and it alone is no change to write.
func TestHeartbeatKeepsOtherConditions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	setConditions(node, now, true, readyMessage)
	network := v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, Reason: "RouteCreated",
		Message: "RouteController created a route", LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
	// Placed first, as a CNI that writes it before the kubelet's first heartbeat would have it.
	node.Status.Conditions = append([]v1.NodeCondition{network}, node.Status.Conditions...)
	upd := node.DeepCopy()
	if got := setConditions(upd, now.Add(10*time.Second), true, readyMessage); len(got) != 0 {
		t.Errorf("heartbeat recorded %v, want no event", got)
	}
	var types []v1.NodeConditionType
	for _, c := range upd.Status.Conditions {
		types = append(types, c.Type)
	}
	wantTypes := []v1.NodeConditionType{v1.NodeNetworkUnavailable, v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Fatalf("conditions after the heartbeat (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(network, upd.Status.Conditions[0]); diff != "" {
		t.Errorf("the heartbeat changed the foreign condition (-want +got):\n%s", diff)
	}
	p, err := statusPatch(node, upd)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p), `"$patch":"delete"`) || !strings.Contains(string(p), `{"type":"NetworkUnavailable"}`) {
		t.Errorf("patch %s removes the foreign condition", p)
	}
	if statusChanged(&node.Status, &upd.Status) {
		t.Errorf("a heartbeat over a foreign condition is a change; want only the heartbeat times to differ")
	}
}

// TestSetConditions holds setConditions to the kubelet's setters: a pressure condition is
// updated in place, its reason and message set only when its status turns False; Ready is
// replaced whole, its transition time kept while its status is; a missing condition is appended.
func TestSetConditions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := then.Add(time.Minute)
	ts := metav1.NewTime(now)
	cond := func(ty v1.NodeConditionType, st v1.ConditionStatus, reason, msg string, hb, tr metav1.Time) v1.NodeCondition {
		return v1.NodeCondition{Type: ty, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: hb, LastTransitionTime: tr}
	}
	memory := func(hb, tr metav1.Time) v1.NodeCondition {
		return cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", hb, tr)
	}
	disk := func(hb, tr metav1.Time) v1.NodeCondition {
		return cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", hb, tr)
	}
	pid := func(hb, tr metav1.Time) v1.NodeCondition {
		return cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available", hb, tr)
	}
	ready := func(hb, tr metav1.Time) v1.NodeCondition {
		return cond(v1.NodeReady, v1.ConditionTrue, "KubeletReady", readyMessage, hb, tr)
	}
	for _, tc := range []struct {
		name       string
		conditions []v1.NodeCondition
		want       []v1.NodeCondition
		recorded   []string
	}{{
		name:     "a new node",
		want:     []v1.NodeCondition{memory(ts, ts), disk(ts, ts), pid(ts, ts), ready(ts, ts)},
		recorded: []string{events.NodeHasSufficientMemory, events.NodeHasNoDiskPressure, events.NodeHasSufficientPID},
	}, {
		name:       "a heartbeat",
		conditions: []v1.NodeCondition{memory(then, then), disk(then, then), pid(then, then), ready(then, then)},
		want:       []v1.NodeCondition{memory(ts, then), disk(ts, then), pid(ts, then), ready(ts, then)},
	}, {
		name: "conditions in another order stay where they are",
		conditions: []v1.NodeCondition{ready(then, then), pid(then, then),
			cond("FrequentKubeletRestart", v1.ConditionFalse, "NoFrequentKubeletRestart", "kubelet is functioning properly", then, then),
			disk(then, then), memory(then, then)},
		want: []v1.NodeCondition{ready(ts, then), pid(ts, then),
			cond("FrequentKubeletRestart", v1.ConditionFalse, "NoFrequentKubeletRestart", "kubelet is functioning properly", then, then),
			disk(ts, then), memory(ts, then)},
	}, {
		name: "a False pressure condition keeps another writer's reason",
		conditions: []v1.NodeCondition{cond(v1.NodeMemoryPressure, v1.ConditionFalse, "Other", "other", then, then),
			disk(then, then), pid(then, then), ready(then, then)},
		want: []v1.NodeCondition{cond(v1.NodeMemoryPressure, v1.ConditionFalse, "Other", "other", ts, then),
			disk(ts, then), pid(ts, then), ready(ts, then)},
	}, {
		name: "the node lifecycle controller's Unknown",
		conditions: []v1.NodeCondition{
			cond(v1.NodeMemoryPressure, v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", then, then),
			disk(then, then), pid(then, then),
			cond(v1.NodeReady, v1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status.", then, then)},
		want:     []v1.NodeCondition{memory(ts, ts), disk(ts, then), pid(ts, then), ready(ts, ts)},
		recorded: []string{events.NodeHasSufficientMemory, events.NodeReady},
	}, {
		name:       "missing ones appended after the others",
		conditions: []v1.NodeCondition{ready(then, then), v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse}},
		want: []v1.NodeCondition{ready(ts, then), v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse},
			memory(ts, ts), disk(ts, ts), pid(ts, ts)},
		recorded: []string{events.NodeHasSufficientMemory, events.NodeHasNoDiskPressure, events.NodeHasSufficientPID},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{Status: v1.NodeStatus{Conditions: tc.conditions}}
			recorded := setConditions(node, now, true, readyMessage)
			if diff := cmp.Diff(tc.want, node.Status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.recorded, recorded); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConditionsChanged: the kubelet's nodeConditionsHaveChanged compares the lists sorted by
// type, heartbeat times left out.
func TestConditionsChanged(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	later := metav1.NewTime(then.Add(time.Minute))
	a := []v1.NodeCondition{
		{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, Reason: "RouteCreated", LastHeartbeatTime: then, LastTransitionTime: then},
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: then, LastTransitionTime: then},
		{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: then, LastTransitionTime: then},
	}
	change := func(f func([]v1.NodeCondition) []v1.NodeCondition) []v1.NodeCondition {
		return f(append([]v1.NodeCondition(nil), a...))
	}
	for _, tc := range []struct {
		name string
		b    []v1.NodeCondition
		want bool
	}{
		{"the same", change(func(c []v1.NodeCondition) []v1.NodeCondition { return c }), false},
		{"heartbeats only", change(func(c []v1.NodeCondition) []v1.NodeCondition {
			for i := range c {
				c[i].LastHeartbeatTime = later
			}
			return c
		}), false},
		{"reordered", change(func(c []v1.NodeCondition) []v1.NodeCondition {
			return []v1.NodeCondition{c[2], c[0], c[1]}
		}), false},
		{"reordered, with a heartbeat", change(func(c []v1.NodeCondition) []v1.NodeCondition {
			c[1].LastHeartbeatTime = later
			return []v1.NodeCondition{c[1], c[2], c[0]}
		}), false},
		{"reordered, with a reason changed", change(func(c []v1.NodeCondition) []v1.NodeCondition {
			c[0].Reason = "NoRouteCreated"
			return []v1.NodeCondition{c[2], c[1], c[0]}
		}), true},
		{"a transition time", change(func(c []v1.NodeCondition) []v1.NodeCondition {
			c[2].LastTransitionTime = later
			return c
		}), true},
		{"one fewer", change(func(c []v1.NodeCondition) []v1.NodeCondition { return c[1:] }), true},
		{"one type for another", change(func(c []v1.NodeCondition) []v1.NodeCondition {
			c[0].Type = "KernelDeadlock"
			return c
		}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := conditionsChanged(a, tc.b); got != tc.want {
				t.Errorf("conditionsChanged() = %v, want %v", got, tc.want)
			}
		})
	}
}
