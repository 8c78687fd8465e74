package admission

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
)

// usage is what a set of pods holds of the node: how many there are, the sum of their requests
// (PodRequests, as fitsRequest adds them) and the host ports they bind. The Admitter keeps one for
// the active pods and changes it one pod at a time, as pods are admitted, terminate and are
// removed: the kubelet's predicate handler sums every active pod again for every new pod, which
// makes admitting n pods cost n², and that cost is not something a kubelet shows.
//
// Every figure is a sum of per-pod integers, so the order in which pods come and go does not
// change it.
type usage struct {
	pods     map[types.UID]*podUsage
	requests amounts
	// byAddr counts the pods binding each (address, protocol, port); byPort each (protocol, port)
	// on any address, which a wanted port on 0.0.0.0 conflicts with.
	byAddr map[hostPort]int
	byPort map[portKey]int
	// uids are the pods' UIDs as the device manager's RemovePods takes them, kept only when an
	// Admitter has a device manager.
	uids map[string]bool
	// scratch is the list activeRequests sums a pod's requests into (the resource helper's
	// Reuse), read into amounts at once: one map for every share instead of one each.
	scratch v1.ResourceList
}

// podUsage is one pod's share of a usage.
type podUsage struct {
	pod      *v1.Pod
	requests amounts
	ports    []hostPort
}

// portKey is a host port on any address.
type portKey struct {
	protocol string
	port     int32
}

func newUsage(withUIDs bool) *usage {
	u := &usage{pods: map[types.UID]*podUsage{}, byAddr: map[hostPort]int{}, byPort: map[portKey]int{}}
	if withUIDs {
		u.uids = map[string]bool{}
	}
	return u
}

// usageOf counts pods from scratch: what the kubelet computes for every admission, and what the
// kept usage must always equal.
func usageOf(pods iter.Seq[*v1.Pod]) *usage {
	u := newUsage(false)
	for p := range pods {
		u.set(p)
	}
	return u
}

// shareOf computes a pod's share, summing its requests into scratch (see usage.scratch): nil
// for a new list.
func shareOf(pod *v1.Pod, scratch v1.ResourceList) *podUsage {
	return &podUsage{pod: pod, requests: amountsOf(activeRequests(pod, scratch)), ports: hostPorts(pod)}
}

// statusReportsResources says whether a container status reports the resources the runtime
// gave the container, which activeRequests counts and PodRequests does not.
func statusReportsResources(statuses []v1.ContainerStatus) bool {
	for i := range statuses {
		if statuses[i].Resources != nil {
			return true
		}
	}
	return false
}

// activeRequests is what an active pod holds of the node as the predicate handler's NodeInfo
// counts it (PodInfo.CalculateResource with InPlacePodVerticalScaling, GA in v1.35): per
// container, the largest of its allocated requests (the spec, as the caller hands it), the
// resources its status says the runtime gave it and its status's allocatedResources, or
// without the spec when its resize is Infeasible. A pod resized down holds its old requests
// until its status shows the smaller resources actuated. The pod being admitted is measured
// by PodRequests, from its spec only, as the fit plugin measures it.
//
// The requests are summed into reuse, which is cleared first, unless it is nil.
func activeRequests(pod *v1.Pod, reuse v1.ResourceList) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{UseStatusResources: true, Reuse: reuse})
}

// set counts pod, replacing whatever was counted for its UID. A pod already counted as the very
// same object costs nothing: the pod manager stores a new object for every change.
func (u *usage) set(pod *v1.Pod) {
	if old, ok := u.pods[pod.UID]; ok {
		if old.pod == pod {
			return
		}
		u.remove(pod.UID)
	}
	if u.scratch == nil {
		u.scratch = v1.ResourceList{}
	}
	s := shareOf(pod, u.scratch)
	u.pods[pod.UID] = s
	u.requests.addAmounts(s.requests, 1)
	for _, p := range s.ports {
		u.byAddr[p]++
		u.byPort[portKey{p.protocol, p.port}]++
	}
	if u.uids != nil {
		u.uids[string(pod.UID)] = true
	}
}

// remove stops counting the pod with uid.
func (u *usage) remove(uid types.UID) {
	s, ok := u.pods[uid]
	if !ok {
		return
	}
	delete(u.pods, uid)
	u.requests.addAmounts(s.requests, -1)
	for _, p := range s.ports {
		decrement(u.byAddr, p)
		decrement(u.byPort, portKey{p.protocol, p.port})
	}
	if u.uids != nil {
		delete(u.uids, string(uid))
	}
}

// decrement lowers a count and forgets it at zero, so that a count map holds only what is in use.
func decrement[K comparable](m map[K]int, k K) {
	if m[k] <= 1 {
		delete(m, k)
		return
	}
	m[k]--
}

// others is a usage without one pod: the other active pods, which a new pod is checked against.
// The new pod is in the pod manager, and so possibly among the active pods, when it is admitted.
type others struct {
	u   *usage
	own *podUsage // the excluded pod's share, nil when it is not counted
}

// without returns the usage of every pod but the one with uid.
func (u *usage) without(uid types.UID) others {
	return others{u: u, own: u.pods[uid]}
}

// count is how many other pods there are.
func (o others) count() int64 {
	n := int64(len(o.u.pods))
	if o.own != nil {
		n--
	}
	return n
}

// requests is the sum of the other pods' requests.
func (o others) requests() amounts {
	r := o.u.requests
	r.scalar = maps.Clone(r.scalar)
	if o.own != nil {
		r.addAmounts(o.own.requests, -1)
	}
	return r
}

// portTaken is the nodeports filter for one wanted port: another pod binds the same protocol and
// port on the same address, or either address is 0.0.0.0.
func (o others) portTaken(w hostPort) bool {
	if w.ip == anyAddress {
		return o.u.byPort[portKey{w.protocol, w.port}]-o.ownCount(func(p hostPort) bool {
			return p.protocol == w.protocol && p.port == w.port
		}) > 0
	}
	wildcard := hostPort{ip: anyAddress, protocol: w.protocol, port: w.port}
	return o.u.byAddr[w]+o.u.byAddr[wildcard]-o.ownCount(func(p hostPort) bool { return p == w || p == wildcard }) > 0
}

// ownCount is how many of the excluded pod's ports match.
func (o others) ownCount(match func(hostPort) bool) int {
	if o.own == nil {
		return 0
	}
	n := 0
	for _, p := range o.own.ports {
		if match(p) {
			n++
		}
	}
	return n
}

// diff describes how u differs from want, a recount; "" when they agree.
func (u *usage) diff(want *usage) string {
	var out []string
	if len(u.pods) != len(want.pods) {
		out = append(out, fmt.Sprintf("count %d, recount %d", len(u.pods), len(want.pods)))
	}
	for _, uid := range slices.Sorted(maps.Keys(u.pods)) {
		if w, ok := want.pods[uid]; !ok {
			out = append(out, fmt.Sprintf("pod %s counted but not active", uid))
		} else if w.pod != u.pods[uid].pod {
			out = append(out, fmt.Sprintf("pod %s counted as a stale object", uid))
		}
	}
	for _, uid := range slices.Sorted(maps.Keys(want.pods)) {
		if _, ok := u.pods[uid]; !ok {
			out = append(out, fmt.Sprintf("pod %s active but not counted", uid))
		}
	}
	if got, w := u.requests.String(), want.requests.String(); got != w {
		out = append(out, fmt.Sprintf("requests %s, recount %s", got, w))
	}
	if !maps.Equal(u.byAddr, want.byAddr) || !maps.Equal(u.byPort, want.byPort) {
		out = append(out, fmt.Sprintf("host ports %v, recount %v", u.byAddr, want.byAddr))
	}
	if u.uids != nil {
		for uid := range u.uids {
			if _, ok := want.pods[types.UID(uid)]; !ok {
				out = append(out, fmt.Sprintf("device UID %s not active", uid))
			}
		}
		if len(u.uids) != len(want.pods) {
			out = append(out, fmt.Sprintf("%d device UIDs, recount %d", len(u.uids), len(want.pods)))
		}
	}
	return strings.Join(out, "; ")
}
