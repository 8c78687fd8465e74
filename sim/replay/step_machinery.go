package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// ExpectPodMachinery checks what the kubelet's pod machinery holds at its instant: the pod
// manager's pods, each pod worker, and the work queue. Each list is checked only when given (an
// empty list checks that it is empty); its verdict shows all three, so a scenario can follow
// their contents step by step.
type ExpectPodMachinery struct {
	// PodManager lists the pod manager's pods ("namespace/name", mirror pods aside), sorted.
	PodManager *[]string `json:"podManager,omitempty"`
	// Workers lists the pod workers, sorted by pod: "namespace/name state", then " running
	// SyncFunc(op)" while a sync function runs (" waiting SyncFunc(op)" while the update it took
	// waits for a PLEG relist), then " pending op" when an update waits for the worker.
	Workers *[]string `json:"workers,omitempty"`
	// Queue lists the work queue's entries, the earliest first: "namespace/name in 1m2s", the time
	// left before the sync loop's tick finds the pod due.
	Queue *[]string `json:"queue,omitempty"`
}

// The kinds of this file and what they declare.
var _ expectation = (*ExpectPodMachinery)(nil)

func (x *ExpectPodMachinery) validate() error {
	if x.PodManager == nil && x.Workers == nil && x.Queue == nil {
		return errors.New("expectPodMachinery checks nothing: give podManager, workers or queue")
	}
	return nil
}

// checks pairs each list the step gives with its key.
func (x *ExpectPodMachinery) checks(m machinery) []check {
	var out []check
	for _, c := range []check{{"podManager", x.PodManager, m.pods}, {"workers", x.Workers, m.workers}, {"queue", x.Queue, m.queue}} {
		if c.want != nil {
			out = append(out, c)
		}
	}
	return out
}

// check is one list of an ExpectPodMachinery and what the machinery holds.
type check struct {
	key  string
	want *[]string
	got  []string
}

// machinery is what the pod machinery holds, in the forms ExpectPodMachinery writes.
type machinery struct{ pods, workers, queue []string }

// podMachinery reads n's pod manager, pod workers and work queue.
func podMachinery(e *engine, n *node) machinery {
	var m machinery
	s := n.kubelet.Sync
	for _, p := range s.Pods.GetPods() {
		m.pods = append(m.pods, p.Namespace+"/"+p.Name)
	}
	slices.Sort(m.pods)
	names := map[types.UID]string{}
	for _, v := range s.Workers.Views() {
		names[v.UID] = v.Pod
		w := v.Pod + " " + v.State.String()
		switch {
		case v.Sync != "" && v.WaitsForCache:
			w += fmt.Sprintf(" waiting %s(%s)", v.Sync, v.SyncOp)
		case v.Sync != "":
			w += fmt.Sprintf(" running %s(%s)", v.Sync, v.SyncOp)
		}
		if v.Pending != "" {
			w += " pending " + v.Pending
		}
		m.workers = append(m.workers, w)
	}
	now := e.clk.Now()
	for _, q := range s.Queue.Entries() {
		name, ok := names[q.UID]
		if !ok {
			name = string(q.UID)
		}
		m.queue = append(m.queue, fmt.Sprintf("%s in %s", name, trace.Human(q.Due.Sub(now))))
	}
	return m
}

// judge compares the lists the step gives with the pod machinery's.
func (x *ExpectPodMachinery) judge(_ context.Context, e *engine, n *node) Outcome {
	m := podMachinery(e, n)
	o := Outcome{What: x.describe(), Met: true}
	for _, c := range x.checks(m) {
		if !slices.Equal(*c.want, c.got) && (len(*c.want) > 0 || len(c.got) > 0) {
			o.Met = false
		}
	}
	o.Seen = fmt.Sprintf("podManager=%s workers=%s queue=%s", list(m.pods), list(m.workers), list(m.queue))
	return o
}

func (x *ExpectPodMachinery) describe() string {
	var parts []string
	for _, c := range x.checks(machinery{}) {
		parts = append(parts, c.key+"="+list(*c.want))
	}
	return "expectPodMachinery " + strings.Join(parts, " ")
}

// list writes a list as its check names it: [a, b].
func list(items []string) string { return "[" + strings.Join(items, ", ") + "]" }
