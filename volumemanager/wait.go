package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Wait is one WaitForAttachAndMount, WaitForUnmount or WaitForVolumesGone in progress: it looked
// once when it started, and looks again every interval from then until it is done or its
// deadline has passed.
type Wait struct {
	m        *Manager
	pod      *v1.Pod
	kind     waitKind
	start    time.Time
	interval time.Duration
	// deadline is zero for a wait without one (WaitForVolumesGone).
	deadline time.Time
	// expected are the volumes a container uses, for WaitForAttachAndMount.
	expected []string
}

// waitKind is what a Wait waits for.
type waitKind int

const (
	// waitMounted: every volume a container uses is mounted (WaitForAttachAndMount).
	waitMounted waitKind = iota
	// waitUnmounted: no volume of the pod is mounted; an uncertain one does not count
	// (WaitForUnmount's PodHasMountedVolumes).
	waitUnmounted
	// waitGone: no volume of the pod is mounted or uncertain (SyncTerminatedPod's second poll,
	// podVolumesExist).
	waitGone
)

// VolumesGoneInterval is how often SyncTerminatedPod's second poll looks whether a volume of the
// pod is still possibly mounted.
const VolumesGoneInterval = 100 * time.Millisecond

// WaitForAttachAndMount starts SyncPod's wait for the pod's volumes, and asks the populator to
// look at the pod again. It returns nil when no container uses a volume: there is nothing to
// wait for. Poll looks, first at once.
func (m *Manager) WaitForAttachAndMount(pod *v1.Pod) *Wait {
	var expected []string
	for _, v := range usedVolumes(pod) {
		expected = append(expected, v.Name)
	}
	if len(expected) == 0 {
		return nil
	}
	m.ReprocessPod(pod.UID)
	now := m.opts.Clock.Now()
	return &Wait{m: m, pod: pod, kind: waitMounted, start: now, interval: MountRetryInterval, deadline: now.Add(MountTimeout), expected: expected}
}

// WaitForUnmount starts SyncTerminatedPod's wait until no volume of the pod is mounted, and asks
// the populator to look at the pod again (which drops it once its runtime may be removed). A
// volume reconstructed as uncertain is not mounted (PodHasMountedVolumes counts VolumeMounted
// only): SyncTerminatedPod's second poll, WaitForVolumesGone, waits for it.
func (m *Manager) WaitForUnmount(pod *v1.Pod) *Wait {
	m.ReprocessPod(pod.UID)
	now := m.opts.Clock.Now()
	return &Wait{m: m, pod: pod, kind: waitUnmounted, start: now, interval: MountRetryInterval, deadline: now.Add(MountTimeout)}
}

// WaitForVolumesGone starts SyncTerminatedPod's second poll, after WaitForUnmount: until no volume
// of the pod is mounted or uncertain (podVolumesExist asks GetPossiblyMountedVolumesForPod, then
// the volume directories on disk, which go with the unmounts here). It looks at once, then every
// VolumesGoneInterval from then, with no deadline; it asks the populator for nothing.
func (m *Manager) WaitForVolumesGone(pod *v1.Pod) *Wait {
	return &Wait{m: m, pod: pod, kind: waitGone, start: m.opts.Clock.Now(), interval: VolumesGoneInterval}
}

// Poll looks at the clock's now, as the wait's poll does at a tick: done with nil when the
// volumes are mounted (unmounted, gone), done with an error when the populator reported one for
// the pod (not for WaitForVolumesGone), when the worker's context was cancelled (canceled), or
// when the deadline has passed. Else it returns when to look again: the first tick at or after
// the next pass that could change the answer, or the deadline.
func (w *Wait) Poll(canceled bool) (next time.Time, done bool, err error) {
	now := w.m.opts.Clock.Now()
	switch {
	case canceled:
		return time.Time{}, true, w.failed(context.Canceled)
	case !w.deadline.IsZero() && !now.Before(w.deadline):
		return time.Time{}, true, w.failed(context.DeadlineExceeded)
	}
	uid := w.pod.UID
	if w.kind == waitGone {
		if len(w.m.PossiblyMounted(uid)) == 0 {
			return time.Time{}, true, nil
		}
		return w.nextLook(now), false, nil
	}
	if errs := w.m.errors[uid]; len(errs) > 0 {
		delete(w.m.errors, uid)
		return time.Time{}, true, w.failed(errors.New(strings.Join(errs, "; ")))
	}
	if w.kind == waitUnmounted && len(w.m.mountedOnly(uid)) == 0 || w.kind == waitMounted && len(w.m.unmounted(uid, w.expected)) == 0 {
		return time.Time{}, true, nil
	}
	return w.nextLook(now), false, nil
}

// failed is the wait's error: the volumes still (un)mounted, and why the wait ended. A wait whose
// volumes are mounted (unmounted) after all is no failure (the kubelet's last check). The second
// poll's error is its context's alone (PollUntilContextCancel).
func (w *Wait) failed(cause error) error {
	uid := w.pod.UID
	switch w.kind {
	case waitGone:
		return cause
	case waitUnmounted:
		mounted := w.m.mountedOnly(uid)
		if len(mounted) == 0 {
			return nil
		}
		return fmt.Errorf("mounted volumes=%v: %w", mounted, cause)
	}
	unmounted := w.m.unmounted(uid, w.expected)
	if len(unmounted) == 0 {
		return nil
	}
	// No volume of a simulated node is attachable, so none is ever unattached.
	return fmt.Errorf("unmounted volumes=%v, unattached volumes=%v, failed to process volumes=%v: %w",
		unmounted, []string{}, w.m.notDesired(uid, w.expected), cause)
}

// nextLook is the first tick of the wait after now that is at or after the next pass that could
// change its answer, capped at the deadline. A wait without a deadline and no pass due looks at
// its next tick, as the kubelet's poll does.
func (w *Wait) nextLook(now time.Time) time.Time {
	change, ok := w.m.nextChange(w.pod.UID)
	if !w.deadline.IsZero() && (!ok || !change.Before(w.deadline)) {
		return w.deadline
	}
	if !ok || change.Before(now) {
		change = now
	}
	k := change.Sub(w.start) / w.interval
	at := w.start.Add(k * w.interval)
	for !at.After(now) || at.Before(change) {
		at = at.Add(w.interval)
	}
	if !w.deadline.IsZero() && at.After(w.deadline) {
		return w.deadline
	}
	return at
}

// nextChange is the next pass that could mount or unmount a volume of the pod: the populator's
// next pass, the end of a back-off of one of its volumes, or now while one of them waits for a
// token.
func (m *Manager) nextChange(uid types.UID) (time.Time, bool) {
	var at time.Time
	earlier := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if !m.changedAt.IsZero() {
		earlier(m.tickAfter(m.changedAt))
	}
	if p, ok := m.desired[uid]; ok {
		for _, v := range p.volumes {
			if v.waiting {
				// A token's answer can come at any moment: the wait looks at its next tick,
				// as the kubelet's does every 300ms.
				earlier(m.opts.Clock.Now())
			}
			if !v.failedAt.IsZero() {
				earlier(m.tickAfter(v.failedAt.Add(v.backoff)))
			}
		}
	}
	return at, !at.IsZero()
}

// unmounted lists, sorted, the expected volumes not mounted for the pod (getUnmountedVolumes).
func (m *Manager) unmounted(uid types.UID, expected []string) []string {
	var out []string
	for _, name := range expected {
		if !m.isMounted(uid, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// notDesired lists, sorted, the expected volumes the populator has not added for the pod
// (getVolumesNotInDSW).
func (m *Manager) notDesired(uid types.UID, expected []string) []string {
	out := []string{}
	p := m.desired[uid]
	for _, name := range expected {
		if p == nil || !slices.ContainsFunc(p.volumes, func(d *desiredVolume) bool { return d.name == name }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
