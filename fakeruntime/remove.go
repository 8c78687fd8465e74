package fakeruntime

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// RemoveContainer deletes a container that is not running: the CRI RemoveContainer the kubelet's
// container deletor calls after ContainerDied. It returns an error wrapping ErrNotFound for an
// unknown ID and ErrContainerRunning for a running container.
func (r *Runtime) RemoveContainer(id string) error {
	now := r.clock.Now()
	r.applyDue(now)
	if err := r.checkUp(now); err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	c := r.containers[id]
	if c == nil {
		return fmt.Errorf("remove container %s: %w", id, ErrNotFound)
	}
	if c.status.State == kubecontainer.ContainerStateRunning {
		return fmt.Errorf("remove container %s: %w", id, ErrContainerRunning)
	}
	r.removeContainer(r.pods[c.podUID], c, "RemoveContainer")
	return nil
}

// RemovePod deletes every container and sandbox of the pod that is not running, as the
// kubelet's container garbage collector does for a pod that is gone. The pod disappears from
// GetPods once nothing is left. It returns an error wrapping ErrContainerRunning if some
// containers or sandboxes still run; those are kept.
func (r *Runtime) RemovePod(uid types.UID) error {
	now := r.clock.Now()
	r.applyDue(now)
	if err := r.checkUp(now); err != nil {
		return fmt.Errorf("remove pod %s: %w", uid, err)
	}
	rec := r.pods[uid]
	if rec == nil {
		return nil
	}
	left := 0
	for _, c := range append([]*containerRec(nil), rec.containers...) {
		if c.status.State == kubecontainer.ContainerStateRunning {
			left++
			continue
		}
		r.removeContainer(rec, c, "GarbageCollect")
	}
	kept := rec.sandboxes[:0]
	for _, s := range rec.sandboxes {
		if s.status.State == kubecontainer.SandboxReady {
			kept = append(kept, s)
			left++
			continue
		}
		r.emit(trace.Event{Event: trace.KindRemoved, Pod: rec.key(), UID: string(uid), Message: s.status.ID, Func: "GarbageCollect"})
	}
	rec.sandboxes = kept
	r.changed()
	r.dropIfEmpty(rec)
	if left > 0 {
		return fmt.Errorf("remove pod %s: %d containers or sandboxes still running: %w", uid, left, ErrContainerRunning)
	}
	return nil
}

// removeContainer deletes c from its pod and forgets the pod if it is empty now.
func (r *Runtime) removeContainer(rec *podRec, c *containerRec, fn string) {
	cancel(c.exitAt)
	cancel(c.killAt)
	delete(r.containers, c.status.ID)
	r.changed()
	for i, x := range rec.containers {
		if x == c {
			rec.containers = append(rec.containers[:i:i], rec.containers[i+1:]...)
			break
		}
	}
	r.emit(trace.Event{Event: trace.KindRemoved, Pod: rec.key(), UID: string(rec.uid), Container: c.status.Name, Message: c.status.ID, Func: fn})
	r.dropIfEmpty(rec)
}
