package kubelet

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/sources"
)

// Settle is one pass over everything of the kubelet due at the clock's now, for a driver that
// steps the kubelet on its own clock (replay), in a fixed order: the file source's relist, the
// http source's poll, the simulated API watch, a plugin manager pass (and its gauge), the merge of
// what the sources produced through PodConfig into the sync loop, the sync loop's Advance, and
// the API watch again for what the loop wrote. The first pass is Kubelet.Run's start-up
// (startUp): its trace, the first runtime check and, once the runtime answers, the plugin
// pipeline. Settle reports whether anything but the sync loop made progress; the loop's NextWake
// says whether it has more to do now. What fails is traced, as the kubelet logs it, and the pass
// goes on. The checkpoints are written by SaveCheckpoints.
func (k *Kubelet) Settle(ctx context.Context) bool {
	if !k.started {
		k.started = true
		k.startUp(true)
	}
	now := k.opts.Clock.Now()
	progressed := false
	if s := k.Sources.File; s != nil {
		if t, ok := s.NextWake(); ok && !t.After(now) {
			u, _ := s.Relist() // errors are in the trace
			k.queue(u)
			progressed = true
		}
	}
	if s := k.Sources.HTTP; s != nil {
		if t, ok := s.NextWake(); ok && !t.After(now) {
			u, _ := s.Poll(ctx) // errors are in the trace
			k.queue(u)
			progressed = true
		}
	}
	if k.pumpAPI() {
		progressed = true
	}
	if p := k.Plugins; p != nil {
		env := pluginmanager.Env{Dialer: p.world.Dialer, Books: p.Manager.Actual(), Tracer: k.opts.Tracer}
		if p.advance(ctx, now, env) {
			progressed = true
		}
		// The caches change in passes and in the socket events; the gauge follows them.
		k.Metrics.SetTotalPlugins(p.Manager.TotalPlugins())
	}
	if len(k.pending) > 0 {
		progressed = true
		k.merge(ctx)
	}
	// The sync loop traces what failed and goes on, as the kubelet logs and loops.
	_ = k.Loop.Advance(ctx)
	if k.pumpAPI() {
		progressed = true
	}
	return progressed
}

// SaveCheckpoints writes what the kubelet keeps on disk and has not written yet: the allocation
// checkpoint. A driver that steps the kubelet calls it before it drops the process (replay's
// restartKubelet), since no other pass writes it; Run writes it once a second while it changes
// and when it stops. A failure is logged, as the kubelet logs it, and the kubelet goes on.
func (k *Kubelet) SaveCheckpoints(ctx context.Context) {
	if err := k.Sync.Allocation.Flush(); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to save pod resource information checkpoint")
	}
}

// Due reports whether a Settle now would do anything: the first pass, source updates waiting for
// PodConfig, a watch event waiting in the API watch, or a component whose wake has come (NextWake).
// A stepping driver settles only the kubelets that are due, so that an idle node costs nothing;
// a driver that changes a kubelet's world from outside (a scenario step) settles it regardless.
// The plugin pipeline, whose sockets the world changes, keeps a kubelet that has one always due.
func (k *Kubelet) Due() bool {
	if !k.started || len(k.pending) > 0 || k.Plugins != nil {
		return true
	}
	at, _ := k.NextWake()
	return k.DueAt(at)
}

// DueAt is Due with NextWake's answer, at, already read: a driver that keeps the wakes it read
// after a Settle (NextWakes) asks Due without walking the components again. A kubelet changes
// only when it settles or its world is changed from outside, so at stays its wake until then.
func (k *Kubelet) DueAt(at time.Time) bool {
	if !k.started || len(k.pending) > 0 || k.Plugins != nil {
		return true
	}
	if !at.After(k.opts.Clock.Now()) {
		return true
	}
	w := k.opts.World.APIWatch
	return w != nil && k.Sources.API != nil && w.Pending()
}

// NextWake returns when the kubelet next has work: the earliest of the sync loop's wake, the
// sources' next relist and poll, the plugin manager's next pass and the DRA handler's next wipe.
// It always has one (the
// sync loop's tickers run).
func (k *Kubelet) NextWake() (time.Time, bool) {
	at, _ := k.NextWakes()
	return at, true
}

// NextWakes returns NextWake's answer and, within it, the sync loop's own wake (Loop.NextWake),
// from one walk over the components. A driver of a fleet reads both right after a node's Settle,
// while the node's state is still in the processor's caches, and keeps them until the node
// changes again: asked later, after the other nodes' settles, the same walk misses the caches at
// every component, and that miss grows with the fleet.
func (k *Kubelet) NextWakes() (at, loop time.Time) {
	loop, _ = k.Loop.NextWake()
	at = loop
	earlier := func(t time.Time, ok bool) {
		if ok && t.Before(at) {
			at = t
		}
	}
	if s := k.Sources.File; s != nil {
		earlier(s.NextWake())
	}
	if s := k.Sources.HTTP; s != nil {
		earlier(s.NextWake())
	}
	if p := k.Plugins; p != nil {
		earlier(p.Manager.NextWake())
		earlier(p.DRA.NextWake())
	}
	return at, loop
}

// StaticPodEvents hands the file source the watch events inotify would deliver for the static
// pod path, for a stepping driver; Run's file source watches on its own. What the source makes
// of them is merged at the next Settle.
func (k *Kubelet) StaticPodEvents(evs []sources.WatchEvent) {
	if k.Sources.File == nil {
		return
	}
	for _, ev := range evs {
		u, _ := k.Sources.File.HandleEvent(ev) // errors are in the trace
		k.queue(u)
	}
}
