package sources

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// APIOptions configures NewAPI.
type APIOptions struct {
	// Tracer receives one event per SET. Required; trace.Discard records nothing.
	Tracer trace.Tracer
}

func (o APIOptions) validate() error {
	var missing []string
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	return missingOptions(missing)
}

// API is the core of the API server pod source: the kubelet's UndeltaStore inside
// NewSourceApiserver. It keeps every pod the reflector delivered, keyed by namespace/name, and
// answers each store change with the full set of pods as one SET update.
//
// The kubelet pushes the store's contents in map order. API sorts them by namespace, then name, so
// that replays are byte-identical; podconfig diffs by UID, so the order has no other effect.
//
// API keeps the very objects it is given, as the UndeltaStore keeps the objects the reflector
// decoded: whoever hands one over gives it up, and nobody changes it afterwards
// (docs/design/008-shared-pods.md). A caller that holds on to a pod it passes must pass a copy.
//
// API is not safe for concurrent use; the runner serialises calls.
type API struct {
	tracer trace.Tracer
	// pods holds the objects handed over, keyed by podkey.Of; they are read-only.
	pods map[string]*v1.Pod
	// order holds the same pods with their keys in sortPods' order, kept at each change, so that
	// the SET after a watch event does not sort the whole store again.
	order []keyedPod
}

// NewAPI returns an empty API source core, or an error wrapping ErrMissingOption.
func NewAPI(opts APIOptions) (*API, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("api source: %w", err)
	}
	return &API{tracer: opts.Tracer, pods: map[string]*v1.Pod{}}, nil
}

// Replace makes pods the whole content of the store, as a reflector's list or relist does, and
// returns the resulting SET. An empty list still gives a SET, which is what marks the api source
// as seen in podconfig.
func (a *API) Replace(pods []*v1.Pod) podconfig.Update {
	a.pods = make(map[string]*v1.Pod, len(pods))
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		a.pods[podkey.Of(pod)] = pod
	}
	a.order = a.order[:0]
	for key, pod := range a.pods {
		a.order = append(a.order, keyedPod{key, pod})
	}
	slices.SortFunc(a.order, func(x, y keyedPod) int { return comparePods(x.pod, y.pod) })
	return a.set()
}

// Add stores pod (replacing any pod with the same namespace/name) and returns the resulting SET,
// as a watch ADDED event does.
func (a *API) Add(pod *v1.Pod) podconfig.Update {
	if pod != nil {
		key := podkey.Of(pod)
		a.forget(key)
		a.pods[key] = pod
		at, _ := slices.BinarySearchFunc(a.order, pod, func(kp keyedPod, p *v1.Pod) int { return comparePods(kp.pod, p) })
		a.order = slices.Insert(a.order, at, keyedPod{key, pod})
	}
	return a.set()
}

// Update is Add for a watch MODIFIED event: the UndeltaStore does not tell them apart.
func (a *API) Update(pod *v1.Pod) podconfig.Update {
	return a.Add(pod)
}

// Delete forgets the pod with pod's namespace/name and returns the resulting SET, as a watch
// DELETED event does. Deleting an unknown pod still gives a SET, as in the kubelet.
func (a *API) Delete(pod *v1.Pod) podconfig.Update {
	if pod != nil {
		a.forget(podkey.Of(pod))
	}
	return a.set()
}

// forget drops the pod stored under key, if any, from the store and its order.
func (a *API) forget(key string) {
	old, ok := a.pods[key]
	if !ok {
		return
	}
	delete(a.pods, key)
	// The stored pod's own namespace and name find it: its key is what it was stored under.
	if at, found := slices.BinarySearchFunc(a.order, old, func(kp keyedPod, p *v1.Pod) int { return comparePods(kp.pod, p) }); found {
		a.order = slices.Delete(a.order, at, at+1)
	}
}

// Pods returns deep copies of the stored pods, sorted by namespace, then name.
func (a *API) Pods() []*v1.Pod {
	out := make([]*v1.Pod, 0, len(a.pods))
	for _, pod := range a.pods {
		out = append(out, pod.DeepCopy())
	}
	sortPods(out)
	return out
}

// set builds the SET for the current content and traces it.
func (a *API) set() podconfig.Update {
	// The SET shares the stored objects read-only (see newSet), as the kubelet's PushFunc does.
	return *makeOrderedSet(podconfig.APISource, a.order).send(a.tracer, "NewSourceApiserver")
}
