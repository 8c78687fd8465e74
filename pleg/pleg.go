package pleg

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/metrics"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The kubelet's generic PLEG settings.
const (
	// DefaultRelistPeriod is genericPlegRelistPeriod.
	DefaultRelistPeriod = time.Second
	// DefaultRelistThreshold is genericPlegRelistThreshold.
	DefaultRelistThreshold = 3 * time.Minute
)

// Lister is the part of the container runtime the PLEG reads.
type Lister interface {
	// GetPods lists every pod the runtime has, with all its containers and sandboxes when all is
	// true.
	GetPods(all bool) ([]*kubecontainer.Pod, error)
	// GetPodStatus returns one pod's full status.
	GetPodStatus(uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error)
}

// VersionedLister is a Lister that numbers its states, as the fake runtime's StateVersion does:
// two calls of StateVersion that return the same number have, between them, the same listing
// (every pod, container and sandbox with the same ID and state), and the number never goes
// down. A runtime that is a VersionedLister lets a relist of an unchanged runtime skip comparing
// its listing.
type VersionedLister interface {
	Lister
	// StateVersion returns the number of the runtime's current state.
	StateVersion() uint64
}

// Options configure a PLEG.
type Options struct {
	// Runtime is what the PLEG relists. Required.
	Runtime Lister
	// Cache receives the pod statuses. Required.
	Cache *Cache
	// Clock is where the PLEG reads the time. Required.
	Clock clock.PassiveClock
	// RelistPeriod is the time from the end of one relist to the next. Zero means
	// DefaultRelistPeriod.
	RelistPeriod time.Duration
	// RelistThreshold is how old the last successful relist may be before the PLEG is unhealthy.
	// Zero means DefaultRelistThreshold.
	RelistThreshold time.Duration
	// Tracer receives the PLEG's events. Required; pass trace.Discard for none.
	Tracer trace.Tracer
	// Metrics receives the relist metrics. Nil records none.
	Metrics Metrics
	// Keys hands out the trace keys of pods another component built already (one string a
	// pod, shared). Nil builds every key.
	Keys *kubecontainer.SharedKeys
}

// Metrics is where the PLEG records its relists (kubelet_pleg_relist_*, kubelet_running_*).
type Metrics interface {
	// ObserveRelist records a relist from start to end; counts is nil when the listing failed.
	// counts is the PLEG's buffer, which the next relist reuses: read it, do not keep it.
	ObserveRelist(start, end time.Time, counts *metrics.RunningCounts)
}

// validate reports every missing required option, wrapping ErrMissingOption.
func (o Options) validate() error {
	var missing []string
	if o.Runtime == nil {
		missing = append(missing, "Runtime")
	}
	if o.Cache == nil {
		missing = append(missing, "Cache")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// PLEG is the generic relisting pod lifecycle event generator. It is a core: one goroutine drives
// it, and it is not safe for concurrent use.
type PLEG struct {
	opts Options

	// records holds, per pod, the listing of the last successful relist of that pod (old) and of
	// this relist (current).
	records map[types.UID]*podRecord
	// reinspect holds the pods whose status could not be read last time; reinspectNext is the
	// spare the next relist fills.
	reinspect, reinspectNext map[types.UID]bool
	// counts is the metrics' buffer, reused at every relist.
	counts metrics.RunningCounts
	// relistTime is the start of the last relist whose listing succeeded.
	relistTime time.Time
	// next is when the next relist is due.
	next    time.Time
	healthy bool
	// uids, entries and events are scratch space reused across relists.
	uids    []types.UID
	entries []entry
	events  []Event
	// watches holds, per pod, the watch conditions not met yet, by key.
	watches map[types.UID]map[string]WatchCondition
	// versioned is Options.Runtime when it numbers its states, else nil. compared is the state
	// number read after the listing the last full relist compared, valid when hasCompared.
	versioned   VersionedLister
	compared    uint64
	hasCompared bool
	// listed is the state number read on both sides of this relist's listing, valid when
	// listedStable (the two were equal); counted is the one of the listing counts holds, valid
	// when countedStable. observe counts a listing of a state it counted already no more.
	listed, counted             uint64
	listedStable, countedStable bool
}

// WatchCondition is what a watch waits for in a pod's status: the kubelet's pleg.WatchCondition.
type WatchCondition = func(*kubecontainer.PodStatus) bool

type podRecord struct {
	old, current *kubecontainer.Pod
	// kept is where old points once set: the record's own copy of the pod's listing, whose
	// slices the next copy reuses.
	kept kubecontainer.Pod
	// container and sandbox back kept's lists while they hold one entry each, as nearly every
	// pod's do: the record is allocated for the pod anyway, and each list was an allocation
	// of its own at the pod's first listings.
	container [1]kubecontainer.ContainerStatus
	sandbox   [1]kubecontainer.SandboxStatus
}

// keep makes old a copy of p that shares no slices with it, in the record's own storage: the
// lister may share one backing array across a whole listing, and an old record held for hours
// must not pin it. Nothing but the record holds old, so its slices are reused from relist to
// relist: a pod whose listing changed costs no allocation once its lists have room.
func (r *podRecord) keep(p *kubecontainer.Pod) {
	containers, sandboxes := r.kept.Containers[:0], r.kept.Sandboxes[:0]
	if containers == nil {
		containers = r.container[:0]
	}
	if sandboxes == nil {
		sandboxes = r.sandbox[:0]
	}
	r.kept = *p
	r.kept.Containers = append(containers, p.Containers...)
	r.kept.Sandboxes = append(sandboxes, p.Sandboxes...)
	r.old = &r.kept
}

// New returns a PLEG whose first relist is due at once. A missing required option is an error
// wrapping ErrMissingOption.
func New(opts Options) (*PLEG, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new pleg: %w", err)
	}
	if opts.RelistPeriod <= 0 {
		opts.RelistPeriod = DefaultRelistPeriod
	}
	if opts.RelistThreshold <= 0 {
		opts.RelistThreshold = DefaultRelistThreshold
	}
	versioned, _ := opts.Runtime.(VersionedLister)
	return &PLEG{
		opts:          opts,
		versioned:     versioned,
		records:       map[types.UID]*podRecord{},
		reinspect:     map[types.UID]bool{},
		reinspectNext: map[types.UID]bool{},
		watches:       map[types.UID]map[string]WatchCondition{},
		next:          opts.Clock.Now(),
	}, nil
}

// SetPodWatchCondition has the pod reinspected at every relist until condition holds for its new
// status, and then sends one ConditionMet event for it, which makes the pod sync: the kubelet's
// SetPodWatchCondition, which the runtime calls after a resize so that the resize's end is seen
// at the next relist. Setting a key again replaces its condition. A watch on a pod the runtime no
// longer lists is dropped.
func (g *PLEG) SetPodWatchCondition(uid types.UID, key string, condition WatchCondition) {
	// The kubelet versions each condition so that one set again while a relist checks it is not
	// taken as met; a single-goroutine core cannot interleave the two, so the key is enough.
	w := g.watches[uid]
	if w == nil {
		w = map[string]WatchCondition{}
		g.watches[uid] = w
	}
	w[key] = condition
}

// conditionsMet checks the pod's watches against its new status and forgets those met; it
// reports whether one was.
func (g *PLEG) conditionsMet(uid types.UID, status *kubecontainer.PodStatus) bool {
	w := g.watches[uid]
	met := false
	for key, c := range w {
		if c(status) {
			delete(w, key)
			met = true
		}
	}
	if len(w) == 0 {
		delete(g.watches, uid)
	}
	return met
}

// NextWake returns when the next relist is due: one period after the previous relist, failed or
// not. The PLEG always has a next relist.
func (g *PLEG) NextWake() (time.Time, bool) {
	return g.next, true
}

// RequestReinspect marks a pod to have its status read on the next relist even if none of its
// containers changed.
func (g *PLEG) RequestReinspect(uid types.UID) {
	g.reinspect[uid] = true
}

// Relist lists the runtime, updates the cache for every pod that changed and returns the events
// to send, pods in UID order and each pod's events in container ID order. If the listing fails it
// returns nothing and changes nothing, so the PLEG's health degrades.
func (g *PLEG) Relist() []Event {
	now := g.opts.Clock.Now()
	g.next = now.Add(g.opts.RelistPeriod)
	// The runtime's state number is read on both sides of the listing: with a clock that moves
	// between the calls (run's real one), only two equal numbers say which state was listed.
	var before uint64
	if g.versioned != nil {
		before = g.versioned.StateVersion()
	}
	pods, err := g.opts.Runtime.GetPods(true)
	if err != nil {
		g.emit(trace.Event{Event: trace.KindError, Message: err.Error(), Func: "relist"})
		g.observe(now, nil, false)
		return nil
	}
	g.relistTime = now
	g.listedStable = false
	defer g.observe(now, pods, true)

	if g.versioned != nil {
		after := g.versioned.StateVersion()
		g.listed, g.listedStable = after, before == after
		if g.unchanged(before, after) {
			// What the full relist below would do with a listing equal to the one it compared
			// last time, and nothing to reinspect or watch: every pod's comparison finds no
			// event (the last relist left each record's old listing equal in IDs and states to
			// that listing, or copied it), so no pod's status is read, no record, event or trace
			// changes, and what is left is the cache's timestamp, the health and the metrics.
			g.opts.Cache.UpdateTime(now)
			g.checkHealth(now)
			return nil
		}
		g.compared, g.hasCompared = after, before == after
	}

	for _, r := range g.records {
		r.current = nil
	}
	for _, p := range pods {
		r := g.records[p.ID]
		if r == nil {
			r = &podRecord{}
			g.records[p.ID] = r
		}
		r.current = p
	}
	g.uids = g.uids[:0]
	for uid := range g.records {
		g.uids = append(g.uids, uid)
	}
	slices.Sort(g.uids)

	// Watches on pods the runtime no longer lists go (cleanupOrphanedWatchConditions).
	for uid := range g.watches {
		if r := g.records[uid]; r == nil || r.current == nil {
			delete(g.watches, uid)
		}
	}

	var out []Event
	// The pods to read again next time go to the spare map, swapped in at the end: a relist with
	// no change, every second, allocates nothing.
	needsReinspection := g.reinspectNext
	clear(needsReinspection)
	for _, uid := range g.uids {
		r := g.records[uid]
		events := g.computeEvents(uid, r.old, r.current)
		reinspect := g.reinspect[uid]
		watched := len(g.watches[uid]) > 0
		if len(events) == 0 && !reinspect && !watched {
			if r.old == nil && r.current == nil {
				delete(g.records, uid)
			}
			continue
		}
		status, err := g.updateCache(uid, r.current, now)
		if err != nil {
			// Hold the events back and keep the old record, so the next relist finds the same
			// changes again.
			needsReinspection[uid] = true
			continue
		}
		if len(events) == 0 && reinspect {
			events = append(events, Event{ID: uid, Type: PodSync})
		}
		if watched && g.conditionsMet(uid, status) {
			// One event however many conditions were met: the sync looks at everything.
			events = append(events, Event{ID: uid, Type: ConditionMet})
		}
		key := ""
		for _, e := range events {
			if e.Type == ContainerChanged {
				continue
			}
			if key == "" {
				key = g.podKey(uid, r.old, r.current)
			}
			out = append(out, e)
			g.emit(trace.Event{Event: e.Type.traceKind(), Pod: key, UID: string(uid), Container: g.containerName(e.Data, r.old, r.current), Message: e.Data, Func: "relist"})
		}
		if r.current == nil {
			delete(g.records, uid)
		} else {
			r.keep(r.current)
		}
	}
	g.opts.Cache.UpdateTime(now)
	g.reinspect, g.reinspectNext = needsReinspection, g.reinspect
	g.checkHealth(now)
	return out
}

// unchanged reports whether this relist's listing, taken between the state numbers before and
// after, is the one the last full relist compared, and that relist left nothing to do again: no
// pod to reinspect (a failed status read, or a RequestReinspect since) and no watch condition,
// which is checked against the status at every relist. The numbers only grow, so a listing taken
// between two equal numbers shows that state; a full relist whose numbers differed recorded none.
func (g *PLEG) unchanged(before, after uint64) bool {
	return g.hasCompared && before == after && after == g.compared &&
		len(g.reinspect) == 0 && len(g.watches) == 0
}

// observe hands the relist to the metrics: the running pods (those with a running sandbox) and
// the containers by state, as the kubelet's updateRunningPodAndContainerMetrics counts them.
func (g *PLEG) observe(start time.Time, pods []*kubecontainer.Pod, listed bool) {
	if g.opts.Metrics == nil {
		return
	}
	end := g.opts.Clock.Now()
	if !listed {
		g.opts.Metrics.ObserveRelist(start, end, nil)
		return
	}
	counts := &g.counts
	if g.listedStable && g.countedStable && g.listed == g.counted {
		// A listing taken between two equal state numbers shows that state, so it is the
		// listing counts was made of: the same counts. A fleet node relists its unchanged
		// runtime every second.
		g.opts.Metrics.ObserveRelist(start, end, counts)
		return
	}
	g.counted, g.countedStable = g.listed, g.listedStable
	counts.Generation++ // new values for the metrics (RunningCounts.Generation)
	counts.Pods = 0
	if counts.Containers == nil {
		counts.Containers = map[string]int{}
	}
	clear(counts.Containers)
	for _, p := range pods {
		for _, c := range p.Containers {
			counts.Containers[string(c.State)]++
		}
		for _, s := range p.Sandboxes {
			if s.State == kubecontainer.SandboxReady {
				counts.Pods++
				break
			}
		}
	}
	g.opts.Metrics.ObserveRelist(start, end, counts)
}

// updateCache reads the pod's status into the cache, or deletes a pod that is gone, and returns
// the status read (nil for a pod that is gone).
func (g *PLEG) updateCache(uid types.UID, pod *kubecontainer.Pod, now time.Time) (*kubecontainer.PodStatus, error) {
	if pod == nil {
		g.opts.Cache.Delete(uid)
		return nil, nil
	}
	status, err := g.opts.Runtime.GetPodStatus(pod.ID, pod.Name, pod.Namespace)
	g.opts.Cache.Set(uid, status, err, now)
	if err != nil {
		g.emit(trace.Event{Event: trace.KindError, Pod: g.podKey(uid, nil, pod), UID: string(uid), Message: err.Error(), Func: "updateCache"})
	}
	return status, err
}

// containerName returns the name of the container with that ID, empty for a sandbox.
func (g *PLEG) containerName(id string, pods ...*kubecontainer.Pod) string {
	for _, p := range pods {
		if p == nil {
			continue
		}
		for i := range p.Containers {
			if p.Containers[i].ID == id {
				return p.Containers[i].Name
			}
		}
	}
	return ""
}

// podKey returns "namespace/name" from whichever listing has the pod.
func (g *PLEG) podKey(uid types.UID, old, cur *kubecontainer.Pod) string {
	p := cur
	if p == nil {
		p = old
	}
	if p == nil {
		return ""
	}
	return g.opts.Keys.Key(uid, p.Namespace, p.Name)
}

// emit sends e as a PLEG event.
func (g *PLEG) emit(e trace.Event) {
	e.Component = trace.PLEG
	g.opts.Tracer.Emit(e)
}

// Healthy reports whether the last successful relist is recent enough: false before the first
// one and once it is older than the threshold.
func (g *PLEG) Healthy() (bool, error) {
	return g.checkHealth(g.opts.Clock.Now())
}

// checkHealth computes the health at now and traces a change.
func (g *PLEG) checkHealth(now time.Time) (bool, error) {
	var err error
	switch {
	case g.relistTime.IsZero():
		err = fmt.Errorf("pleg has yet to be successful")
	case now.Sub(g.relistTime) > g.opts.RelistThreshold:
		err = fmt.Errorf("pleg was last seen active %v ago; threshold is %v", now.Sub(g.relistTime), g.opts.RelistThreshold)
	}
	ok := err == nil
	if ok != g.healthy {
		e := trace.Event{Event: trace.KindHealth, From: healthWord(g.healthy), To: healthWord(ok), Func: "Healthy"}
		if err != nil {
			e.Message = err.Error()
		}
		g.emit(e)
		g.healthy = ok
	}
	return ok, err
}

func healthWord(ok bool) string {
	if ok {
		return "healthy"
	}
	return "unhealthy"
}

// state is a container's state as the PLEG compares it.
type state uint8

const (
	stateNonExistent state = iota
	stateRunning
	stateExited
	stateUnknown
)

// entry is one container or sandbox ID with its old and new states.
type entry struct {
	id       string
	old, new state
}

// computeEvents returns the events of one pod, in container ID order, in the PLEG's scratch
// space: Relist reads them before it computes the next pod's.
func (g *PLEG) computeEvents(uid types.UID, old, cur *kubecontainer.Pod) []Event {
	es := g.entries[:0]
	add := func(p *kubecontainer.Pod, isNew bool) {
		if p == nil {
			return
		}
		for i := range p.Containers {
			es = append(es, newEntry(p.Containers[i].ID, containerState(p.Containers[i].State), isNew))
		}
		for i := range p.Sandboxes {
			es = append(es, newEntry(p.Sandboxes[i].ID, sandboxState(p.Sandboxes[i].State), isNew))
		}
	}
	add(old, false)
	add(cur, true)
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.id, b.id) })
	g.entries = es

	events := g.events[:0]
	for i := 0; i < len(es); {
		e := es[i]
		j := i + 1
		// An ID in both listings appears twice, once with only its old state and once with only
		// its new one; the zero state means "not listed", so max merges them.
		for ; j < len(es) && es[j].id == e.id; j++ {
			e.old = max(e.old, es[j].old)
			e.new = max(e.new, es[j].new)
		}
		i = j
		events = appendEvents(events, uid, e)
	}
	g.events = events
	return events
}

func newEntry(id string, s state, isNew bool) entry {
	if isNew {
		return entry{id: id, new: s}
	}
	return entry{id: id, old: s}
}

// appendEvents applies the state table.
func appendEvents(events []Event, uid types.UID, e entry) []Event {
	if e.old == e.new {
		return events
	}
	switch e.new {
	case stateRunning:
		return append(events, Event{ID: uid, Type: ContainerStarted, Data: e.id})
	case stateExited:
		return append(events, Event{ID: uid, Type: ContainerDied, Data: e.id})
	case stateUnknown:
		return append(events, Event{ID: uid, Type: ContainerChanged, Data: e.id})
	}
	if e.old == stateExited {
		return append(events, Event{ID: uid, Type: ContainerRemoved, Data: e.id})
	}
	return append(events, Event{ID: uid, Type: ContainerDied, Data: e.id}, Event{ID: uid, Type: ContainerRemoved, Data: e.id})
}

// containerState maps a runtime state: created counts as unknown, as in the kubelet.
func containerState(s kubecontainer.ContainerState) state {
	switch s {
	case kubecontainer.ContainerStateRunning:
		return stateRunning
	case kubecontainer.ContainerStateExited:
		return stateExited
	}
	return stateUnknown
}

// sandboxState maps a sandbox state: ready is running, notready is exited.
func sandboxState(s kubecontainer.SandboxState) state {
	switch s {
	case kubecontainer.SandboxReady:
		return stateRunning
	case kubecontainer.SandboxNotReady:
		return stateExited
	}
	return stateUnknown
}
