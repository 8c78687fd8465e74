package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
)

// handedOn checks the contract of docs/design/008-shared-pods.md: a pod PodConfig hands the sync
// loop is shared, read-only, by the pod manager, the pod workers, the prober and everyone they
// hand it to, and a pod the API server's watch hands an api source is shared by the server, the
// source and PodConfig, so nobody may change either; nor a stored node or lease the controllers
// read. It keeps a copy of each such pod as it was
// handed on and compares the two at the end of the replay. Equality is apimachinery's semantic one: reading a
// quantity caches its string form in it, which is not a change.
type handedOn struct {
	pods []handed
	// statuses are the status manager's cached statuses, which GetPodStatus hands out without a
	// copy, each with its copy at the instant it was first seen.
	statuses     []handedStatus
	seenStatuses map[*v1.PodStatus]bool
	// objects are the stored nodes and leases the controllers read, shared the same way.
	objects []handedObject
}

// handedObject is one stored object other than a pod as it was read, by whom and when.
type handedObject struct {
	reader string
	at     time.Duration
	obj    runtime.Object // the shared object
	was    runtime.Object // its copy at the time
}

func (h *handedOn) addObject(reader string, at time.Duration, obj runtime.Object) {
	h.objects = append(h.objects, handedObject{reader: reader, at: at, obj: obj, was: obj.DeepCopyObject()})
}

// handedStatus is one cached status as it was first seen, on which node and when.
type handedStatus struct {
	node   string
	at     time.Duration
	uid    types.UID
	status *v1.PodStatus // the cached object
	was    *v1.PodStatus // its copy at the time
}

// handed is one pod as it was handed on, by whom and when.
type handed struct {
	node string
	at   time.Duration
	pod  *v1.Pod // the shared object
	was  *v1.Pod // its copy at the time
}

func (h *handedOn) add(node string, at time.Duration, pods []*v1.Pod) {
	for _, p := range pods {
		h.pods = append(h.pods, handed{node: node, at: at, pod: p, was: p.DeepCopy()})
	}
}

// addStatuses takes the node's cached statuses it has not seen yet. A status is replaced, never
// changed, by the manager, so a new object is a new status; one seen before keeps its first copy.
// It is called after each settle of the node: a status cached and replaced within one settle, or
// changed by a reader in the settle that cached it, is not seen.
func (h *handedOn) addStatuses(node string, at time.Duration, each func(func(types.UID, *v1.PodStatus))) {
	if h.seenStatuses == nil {
		h.seenStatuses = map[*v1.PodStatus]bool{}
	}
	from := len(h.statuses)
	each(func(uid types.UID, s *v1.PodStatus) {
		if h.seenStatuses[s] {
			return
		}
		h.seenStatuses[s] = true
		h.statuses = append(h.statuses, handedStatus{node: node, at: at, uid: uid, status: s, was: s.DeepCopy()})
	})
	// The manager's map has no order: the UIDs give the errors one.
	slices.SortFunc(h.statuses[from:], func(a, b handedStatus) int { return strings.Compare(string(a.uid), string(b.uid)) })
}

// check returns an error naming every pod that changed after it was handed on, and what part of it.
func (h *handedOn) check() error {
	var errs []error
	for _, p := range h.pods {
		if equality.Semantic.DeepEqual(p.pod, p.was) {
			continue
		}
		var parts []string
		if !equality.Semantic.DeepEqual(p.pod.ObjectMeta, p.was.ObjectMeta) {
			parts = append(parts, "metadata")
		}
		if !equality.Semantic.DeepEqual(p.pod.Spec, p.was.Spec) {
			parts = append(parts, "spec")
		}
		if !equality.Semantic.DeepEqual(p.pod.Status, p.was.Status) {
			parts = append(parts, "status")
		}
		errs = append(errs, fmt.Errorf("node %s: pod %s (UID %s), handed on at %v, was changed afterwards: %v",
			p.node, podkey.Of(p.was), p.was.UID, p.at, parts))
	}
	for _, s := range h.statuses {
		if !equality.Semantic.DeepEqual(s.status, s.was) {
			errs = append(errs, fmt.Errorf("node %s: the status of UID %s, cached at %v, was changed afterwards", s.node, s.uid, s.at))
		}
	}
	for _, o := range h.objects {
		if equality.Semantic.DeepEqual(o.obj, o.was) {
			continue
		}
		m, err := meta.Accessor(o.was)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %T, read at %v, was changed afterwards", o.reader, o.was, o.at))
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %T %s/%s (resourceVersion %s), read at %v, was changed afterwards",
			o.reader, o.was, m.GetNamespace(), m.GetName(), m.GetResourceVersion(), o.at))
	}
	return errors.Join(errs...)
}
