package podsync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Why SyncPod deletes or creates a static pod's mirror pod, as trace reasons.
const (
	reasonMirrorDeleting = "MirrorPodDeleting"
	reasonMirrorOutdated = "MirrorPodOutdated"
	reasonMirrorMissing  = "MirrorPodMissing"
)

// reconcileMirror is the mirror pod step of SyncPod for a static pod (the kubelet's
// tryReconcileMirrorPods): delete a mirror pod that is being deleted or no longer matches the
// static pod, with a UID precondition, then create one if there is none or it was just deleted
// and the node exists. Errors never fail SyncPod; the mirror client traces its API writes and
// their outcome, this function traces the decisions. Without a mirror client (standalone) there
// is nothing to do.
func (s *Syncer) reconcileMirror(ctx context.Context, pod, mirror *v1.Pod) {
	if s.opts.Mirror == nil || !kubecontainer.IsStaticPod(pod) {
		return
	}
	if mirror != nil && mirror.DeletionTimestamp == nil && podmanager.IsMirrorPodOf(mirror, pod) {
		// The pod's own mirror pod, as at nearly every sync: nothing to reconcile, so no name
		// or trace key is built.
		return
	}
	fullName := kubecontainer.GetPodFullName(pod)
	ev := trace.Event{Component: trace.Mirror, Event: trace.KindReconcile, Pod: podkey.Of(pod), UID: string(pod.UID), Func: "tryReconcileMirrorPods"}
	deleted := false
	if mirror != nil && (mirror.DeletionTimestamp != nil || !podmanager.IsMirrorPodOf(mirror, pod)) {
		e := ev
		e.UID, e.Reason = string(mirror.UID), reasonMirrorOutdated
		if mirror.DeletionTimestamp != nil {
			e.Reason = reasonMirrorDeleting
		}
		s.emit(e)
		uid := mirror.UID
		ok, err := s.opts.Mirror.DeleteMirrorPod(ctx, fullName, &uid)
		if err != nil {
			s.emit(with(ev, trace.KindError, "FailedToDeleteMirrorPod", err.Error()))
		}
		deleted = ok
	}
	if mirror != nil && !deleted {
		return
	}
	node, err := s.opts.Nodes.GetNode(ctx, s.opts.NodeName)
	switch {
	case err != nil:
		s.emit(with(ev, trace.KindSkip, "NodeUnavailable", "no mirror pod: "+fmt.Errorf("failed to get node info: %w", err).Error()))
	case node.DeletionTimestamp != nil:
		s.emit(with(ev, trace.KindSkip, "NodeDeleted", "no mirror pod: node has been removed from the cluster"))
	default:
		s.emit(with(ev, trace.KindReconcile, reasonMirrorMissing, ""))
		// A failure is traced by the mirror client and only logged by the kubelet.
		_ = s.opts.Mirror.CreateMirrorPod(ctx, pod)
	}
}

// with returns e with its event word, reason and message set.
func with(e trace.Event, event trace.Kind, reason, message string) trace.Event {
	e.Event, e.Reason, e.Message = event, reason, message
	return e
}

// FastStaticPodsRegistration reconciles the mirror pod of every static pod in staticToMirror (the
// pod manager's static pods, each with its mirror pod or nil), in the order of their keys: the
// kubelet's fastStaticPodsRegistration, which runs once the node object exists, so that static
// pods whose SyncPod ran before the node was registered get their mirror pods at once rather than
// at their next sync.
func (s *Syncer) FastStaticPodsRegistration(ctx context.Context, staticToMirror map[*v1.Pod]*v1.Pod) {
	pods := make([]*v1.Pod, 0, len(staticToMirror))
	for p := range staticToMirror {
		pods = append(pods, p)
	}
	slices.SortFunc(pods, func(a, b *v1.Pod) int {
		return strings.Compare(podkey.Of(a)+"/"+string(a.UID), podkey.Of(b)+"/"+string(b.UID))
	})
	for _, p := range pods {
		s.reconcileMirror(ctx, p, staticToMirror[p])
	}
}
