package sources

import (
	"cmp"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// newSet builds the SET a source sends and traces it as a "set" event. The SET gets its own slice
// but shares the pod objects; its Pods is never nil, so an empty SET carries an empty slice, as
// the kubelet's does.
func newSet(tracer trace.Tracer, source, fn string, pods []*v1.Pod) *podconfig.Update {
	// The pods are the source's stored objects, shared read-only: a source replaces a stored pod
	// and never edits one, and podconfig keeps them without a copy, as the kubelet's podStorage
	// keeps the objects the UndeltaStore hands out (docs/design/008-shared-pods.md). Copying them
	// here made every periodic relist copy every pod twice.
	return makeSet(source, slices.Clone(pods)).send(tracer, fn)
}

// set is a SET ready to send, with the pod keys its trace event names. Neither is changed once
// made, so a source whose pods did not change sends the same one again.
type set struct {
	update *podconfig.Update
	names  []string
}

// makeSet makes the SET of pods, which it keeps.
func makeSet(source string, pods []*v1.Pod) set {
	if pods == nil {
		pods = []*v1.Pod{}
	}
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = podkey.Of(p)
	}
	return set{update: &podconfig.Update{Pods: pods, Op: podconfig.SET, Source: source}, names: names}
}

// keyedPod is a pod with its store key, podkey.Of(pod).
type keyedPod struct {
	key string
	pod *v1.Pod
}

// makeStoreSet makes the SET of a store's pods, keyed by podkey.Of, in sortPods' order. The trace
// names the pods by the store's keys, so that a store pushed after every change (the API
// source at every watch event, the file source at every file event) does not build every
// pod's key again each time.
func makeStoreSet(source string, store map[string]*v1.Pod) set {
	byName := make([]keyedPod, 0, len(store))
	for key, p := range store {
		byName = append(byName, keyedPod{key, p})
	}
	slices.SortFunc(byName, func(a, b keyedPod) int { return comparePods(a.pod, b.pod) })
	return makeOrderedSet(source, byName)
}

// makeOrderedSet makes the SET of a store's pods already in sortPods' order, with their keys.
func makeOrderedSet(source string, order []keyedPod) set {
	pods, names := make([]*v1.Pod, len(order)), make([]string, len(order))
	for i, kp := range order {
		pods[i], names[i] = kp.pod, kp.key
	}
	return set{update: &podconfig.Update{Pods: pods, Op: podconfig.SET, Source: source}, names: names}
}

// send traces the SET as fn's and returns it.
func (s set) send(tracer trace.Tracer, fn string) *podconfig.Update {
	tracer.Emit(trace.Event{Component: trace.Sources, Event: trace.KindSet, Source: s.update.Source, Pods: s.names, Func: fn})
	return s.update
}

// sortPods orders pods by namespace, then name. The kubelet's file SETs come out of a map in
// random order; a fixed order keeps replays byte-identical.
func sortPods(pods []*v1.Pod) {
	slices.SortFunc(pods, comparePods)
}

// comparePods is sortPods' order: by namespace, then name.
func comparePods(a, b *v1.Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// traceError records err as an "error" event and returns it unchanged.
func traceError(tracer trace.Tracer, source, fn, fallbackReason string, err error) error {
	tracer.Emit(trace.Event{
		Component: trace.Sources,
		Event:     trace.KindError,
		Source:    source,
		Reason:    reason(err, fallbackReason),
		Message:   err.Error(),
		Func:      fn,
	})
	return err
}
