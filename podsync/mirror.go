package podsync

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podworkers"
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
//
// Beside the pod workers (SetBeside) it runs on a goroutine of its own: it reads only the
// options, the read-only pods and the clients, which are safe for concurrent use there.
func (s *Syncer) reconcileMirror(ctx context.Context, pod, mirror *v1.Pod) {
	if !s.mirrorCalls(pod, mirror) {
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

// mirrorCalls reports whether the mirror pod step of pod's sync calls the API server: a static
// pod, with a mirror client, and without its own mirror pod, or with one being deleted.
func (s *Syncer) mirrorCalls(pod, mirror *v1.Pod) bool {
	if s.opts.Mirror == nil || !kubecontainer.IsStaticPod(pod) {
		return false
	}
	// The pod's own mirror pod, as at nearly every sync: nothing to reconcile, so no name or
	// trace key is built.
	return mirror == nil || mirror.DeletionTimestamp != nil || !podmanager.IsMirrorPodOf(mirror, pod)
}

// Beside runs SyncPod's mirror pod calls beside the pod workers' goroutine: in the kubelet each
// pod worker is a goroutine that blocks in its own API calls while the others go on. `run` sets
// one (SetBeside); a driver that steps the kubelet on a virtual clock makes the calls inline, at
// no virtual time.
type Beside interface {
	// Go runs call with a context of its own, derived from ctx, on a goroutine of its own. Once
	// call has returned it runs returned on the pod workers' goroutine and then resumes the
	// worker of uid (podworkers.Workers.Resume). cancel ends call's context; it may be called
	// at any time, more than once.
	Go(ctx context.Context, uid types.UID, call func(context.Context), returned func()) (cancel func())
}

// SetBeside makes SyncPod's mirror pod calls through b; nil makes them inline. Call it before the
// first sync.
func (s *Syncer) SetBeside(b Beside) { s.beside = b }

// reconcileMirrorBeside hands the mirror pod step to the Beside and keeps the sync waiting until
// its calls have returned (podworkers.Result.Blocked); then SyncPod goes on as after an inline
// step. A cancel of the worker's context cancels the calls' context, as the kubelet's worker
// context cancels its API requests, and the wait for the volumes that follows ends at once.
func (s *Syncer) reconcileMirrorBeside(ctx context.Context, pod, mirror *v1.Pod, podStatus *kubecontainer.PodStatus) (podworkers.Result, error) {
	returned := false
	cancel := s.beside.Go(ctx, pod.UID, func(ctx context.Context) { s.reconcileMirror(ctx, pod, mirror) }, func() { returned = true })
	var wait func(ctx context.Context, canceled bool) (podworkers.Result, error)
	wait = func(ctx context.Context, canceled bool) (podworkers.Result, error) {
		if !returned {
			if canceled {
				cancel()
			}
			return podworkers.Result{Blocked: true, Wait: wait}, nil
		}
		return s.mountAndStart(ctx, pod, podStatus, canceled)
	}
	return podworkers.Result{Blocked: true, Wait: wait}, nil
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
// at their next sync. It may run on any goroutine: `run` gives it one of its own, as the
// kubelet does.
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
