package trace

import "slices"

// linker gives each event its cause: the seq of the earlier event that made it happen. The
// Recorder runs it on every event in the order it stamps them, so in replay, where that order is
// fixed, the causes are as deterministic as the trace.
//
// The cores do not pass causes to one another; the linker follows the pipeline instead. Every
// hand-over between components is keyed in the trace by the pod, its container and the source,
// and each component takes its input from exactly one place upstream (docs/trace.md, "Causes"):
// a source's SET comes from the scenario step or API server write that changed what it reads,
// PodConfig's update from that SET, the sync loop's handler from the update, the pod worker's sync
// from the handler (or the PLEG event, or its own requeue), SyncPod's runtime actions from the
// sync, the PLEG event from the runtime change it saw, and so on. The linker remembers, per key,
// the last event of each upstream kind and names it. That keeps the trace package the only one that
// knows about causes: the cores stay as they are, and a component added later gets the generic
// rule (the last event on the same pod) without a change here.
//
// An event with no upstream event, such as a periodic relist, a housekeeping pass or a scenario
// step, is a root: its cause is 0. An event that set Cause itself keeps it.
type linker struct {
	// pending is, per source (and "plugin" for the plugin socket directory), the scenario step
	// that changed what the source reads and the instant a SET first answered it.
	pending map[string]*pendingStep
	// apiWrites are the API server's pod writes of the current instant that no api SET has
	// answered yet, in order: the api source sees one watch event per write.
	apiWrites []linked
	lastSet   map[string]uint64 // per source, the last SET
	updates   []configUpdate    // PodConfig updates the sync loop has not handled yet
	config    configUpdate      // the config update the sync loop handled last
	// pods is what the linker remembers of each pod, by the events' pod key: one record a pod,
	// not an entry in a map for each thing remembered, since a fleet's trace links every pod
	// of every node.
	pods      map[string]*podLinks
	component map[Component]uint64
	step      uint64 // the last scenario step
	stepKind  Kind   // its kind
	stepT     int64  // and its instant
	// starts is, per node ("" with one node), the start-up of its kubelet process, from its
	// latest kubelet new.
	starts map[string]*start
	// outages is, per node, the runtime's latest down event and the instant it ends: the PLEG's
	// relists fail until then.
	outages map[string]outage
}

// outage is a runtime down event and the instant, down's T plus its Delay, the runtime answers
// again.
type outage struct {
	seq   uint64
	until int64
}

// start is what the linker remembers of one kubelet process's start-up: its kubelet events, by
// kind, and which first events of the process it has already linked to them.
type start struct {
	last  uint64 // the process's latest kubelet event
	steps map[Kind]uint64
	// sets holds the sources whose first SET was linked to the sources event.
	sets map[string]bool
	// registered, ready, healthy, skipped and resumed are set once the process's first node
	// registration, Ready report, healthy PLEG, sync loop skip and resume were linked.
	registered, ready, healthy, skipped, resumed bool
	// cleared is the latest event that cleared a runtime state error: the runtime answering,
	// the PLEG turning healthy.
	cleared uint64
	// modulesAt is the instant of initializeRuntimeDependentModules.
	modulesAt int64
}

// podLinks is what the linker remembers of one pod: the sequence number of its latest event of
// each kind a later event of the pod follows (seqKind), 0 for none.
type podLinks struct {
	seqs  [numSeqs]uint64
	loops bool // whether the fault step is a crash loop, which outlives an exit
	// containers are the pod's containers the runtime reported on, the sandbox as "".
	containers []containerLinks
}

// seqKind names the events a pod's record remembers. prune and empty go over them all, so a kind
// added here is forgotten and counted with the others.
type seqKind int

const (
	podSeq      seqKind = iota // the last event of any component but events
	dispatchSeq                // what last asked its worker to sync
	requeueSeq                 // the worker's last requeue
	workSeq                    // the worker's last sync or state change
	runtimeSeq                 // the last runtime event
	faultSeq                   // the last scenario step that breaks its containers
	plegSeq                    // the last PLEG event
	cleanupSeq                 // housekeeping's last event
	statusSeq                  // the status manager's last set
	numSeqs
)

// containerLinks is what the linker remembers of one container (or a pod's sandbox): its last
// runtime event, and the last of each kind a PLEG event reports (plegSaw), which the PLEG
// event follows. The runtime's other kinds are never looked up, so they are not kept.
type containerLinks struct {
	name                     string
	last                     uint64
	started, exited, removed uint64
}

// empty reports whether the record remembers nothing.
func (p *podLinks) empty() bool {
	return p.seqs == [numSeqs]uint64{} && !p.loops && len(p.containers) == 0
}

// links is what the linker remembers of pod, nil for a pod it knows nothing of; for reading only,
// through podLinks' methods, which read a nil record as one that remembers nothing. A pod the
// linker does not know gets no record, and no record is shared between pods. An event of no pod
// makes none either.
func (l *linker) links(pod string) *podLinks {
	return l.pods[pod]
}

// seq is the pod's latest event of kind k, 0 for none.
func (p *podLinks) seq(k seqKind) uint64 {
	if p == nil {
		return 0
	}
	return p.seqs[k]
}

// record is pod's record, made on first use.
func (l *linker) record(pod string) *podLinks {
	p := l.pods[pod]
	if p == nil {
		p = &podLinks{}
		l.pods[pod] = p
	}
	return p
}

// container is the pod's record of the named container, or nil.
func (p *podLinks) container(name string) *containerLinks {
	if p == nil {
		return nil
	}
	for i := range p.containers {
		if p.containers[i].name == name {
			return &p.containers[i]
		}
	}
	return nil
}

// runtimeOf is the container's last runtime event of kind (one of plegSaw's), 0 for none.
func (p *podLinks) runtimeOf(container string, kind Kind) uint64 {
	c := p.container(container)
	if c == nil {
		return 0
	}
	if v := c.of(kind); v != nil {
		return *v
	}
	return 0
}

// of is where the container keeps its last runtime event of kind, nil for a kind it does not
// keep.
func (c *containerLinks) of(kind Kind) *uint64 {
	switch kind {
	case KindStarted:
		return &c.started
	case KindExited:
		return &c.exited
	case KindRemoved:
		return &c.removed
	}
	return nil
}

// lastOf is the container's last runtime event, 0 for none.
func (p *podLinks) lastOf(container string) uint64 {
	if c := p.container(container); c != nil {
		return c.last
	}
	return 0
}

type linked struct {
	seq uint64
	t   int64
	pod string
}

type pendingStep struct {
	seq      uint64
	answered int64 // the instant of the first SET after the step, -1 before it
}

type configUpdate struct {
	seq        uint64
	t          int64
	op, source string
	pods       []string
}

func newLinker() *linker {
	return &linker{
		pending:   map[string]*pendingStep{},
		lastSet:   map[string]uint64{},
		pods:      map[string]*podLinks{},
		component: map[Component]uint64{},
		starts:    map[string]*start{},
		outages:   map[string]outage{},
	}
}

// stepSource is the source, or the plugin socket directory, a scenario step changes.
var stepSource = map[Kind]string{
	KindWriteManifest:      "file",
	KindRemoveManifest:     "file",
	KindRenameManifest:     "file",
	KindServeHTTP:          "http",
	KindCreatePluginSocket: "plugin",
	KindRemovePluginSocket: "plugin",
}

// plegSaw is the runtime event each PLEG event reports.
var plegSaw = map[Kind]Kind{
	KindContainerStarted: KindStarted,
	KindContainerDied:    KindExited,
	KindContainerRemoved: KindRemoved,
}

// faultSteps break a pod's containers: the runtime's next exit of that pod is theirs.
var faultSteps = map[Kind]bool{
	KindContainerExit: true, KindCrashLoop: true, KindContainerStop: true, KindOOMKill: true, KindKillSandbox: true,
}

// link returns e's cause and remembers e. e.Seq is set.
func (l *linker) link(e Event) uint64 {
	cause := e.Cause
	if cause == 0 {
		cause = l.cause(e)
	}
	l.observe(e)
	return cause
}

// latest returns the highest, that is the most recent, of seqs.
func latest(seqs ...uint64) uint64 {
	var m uint64
	for _, s := range seqs {
		m = max(m, s)
	}
	return m
}

func (l *linker) cause(e Event) uint64 {
	t := int64(e.T)
	if c := l.startCause(e, t); c != 0 {
		return c
	}
	switch e.Component {
	case Scenario:
		return 0
	case Sources:
		if e.Event != KindSet {
			return 0
		}
		if e.Source == "api" {
			// Writes of an earlier instant were answered or never reach this node's watch.
			for len(l.apiWrites) > 0 && l.apiWrites[0].t != t {
				l.apiWrites = l.apiWrites[1:]
			}
			if len(l.apiWrites) == 0 {
				return 0
			}
			// The write of a pod the SET carries, else the oldest (a deletion): with several
			// nodes, each node's source sees only the writes of its own pods.
			i := 0
			for j, w := range l.apiWrites {
				if contains(e.Pods, w.pod) {
					i = j
					break
				}
			}
			w := l.apiWrites[i]
			l.apiWrites = append(l.apiWrites[:i], l.apiWrites[i+1:]...)
			return w.seq
		}
		return l.answer(e.Source, t)
	case PodConfig:
		return l.lastSet[e.Source]
	case SyncLoop:
		switch e.Event {
		case KindConfig:
			for i, u := range l.updates {
				if u.op == e.Op && u.source == e.Source {
					l.updates = l.updates[i+1:]
					return u.seq
				}
			}
			return 0
		case KindPLEG:
			return l.links(e.Pod).seq(plegSeq)
		case KindSkip, KindError:
			// A handler that passes over one pod of the update it is handling.
			if l.config.t == t && l.config.has(e.Pod) {
				return l.config.seq
			}
			return l.links(e.Pod).seq(podSeq)
		case KindSync:
			// The tick hands over the pods whose requeue is due.
			var c uint64
			for _, p := range e.Pods {
				c = latest(c, l.links(p).seq(requeueSeq))
			}
			return latest(c, l.links(e.Pod).seq(requeueSeq))
		}
		return 0
	case PodManager:
		if l.config.has(e.Pod) {
			return l.config.seq
		}
		return l.links(e.Pod).seq(podSeq)
	case PodWorkers:
		p := l.links(e.Pod)
		switch e.Event {
		case KindRequeue:
			return p.seq(workSeq)
		case KindError:
			return p.seq(podSeq)
		}
		if c := p.seq(dispatchSeq); c != 0 {
			return c
		}
		return p.seq(podSeq)
	case Runtime:
		p := l.links(e.Pod)
		switch e.Event {
		case KindDown:
			return l.step
		case KindSync:
			return p.seq(workSeq)
		case KindExited:
			if f := p.seq(faultSeq); f != 0 {
				return f
			}
		}
		return latest(p.seq(workSeq), p.seq(runtimeSeq), p.lastOf(e.Container))
	case PLEG:
		if e.Event == KindHealth {
			return 0
		}
		if e.Pod == "" {
			// A relist that failed: the runtime's outage it falls in, if any.
			if o, ok := l.outages[e.Node]; ok && e.Event == KindError && t < o.until {
				return o.seq
			}
			return 0
		}
		// The relist sees what the runtime did to the container, or to the sandbox when there
		// is no container: a start, an exit, a removal.
		p := l.links(e.Pod)
		if k, ok := plegSaw[e.Event]; ok {
			if c := p.runtimeOf(e.Container, k); c != 0 {
				return c
			}
		}
		if c := p.lastOf(e.Container); c != 0 {
			return c
		}
		return p.seq(runtimeSeq)
	case Status:
		p := l.links(e.Pod)
		if e.Event == KindSet || e.Event == KindDelete {
			if c := p.seq(workSeq); c != 0 {
				return c
			}
			return p.seq(podSeq)
		}
		return p.seq(statusSeq)
	case APIServer:
		p := l.links(e.Pod)
		if e.Event == KindStatus {
			if c := p.seq(statusSeq); c != 0 {
				return c
			}
		}
		return p.seq(podSeq)
	case Mirror:
		p := l.links(e.Pod)
		if c := latest(p.seq(workSeq), p.seq(cleanupSeq)); c != 0 {
			return c
		}
		return p.seq(podSeq)
	case Housekeeping, Node:
		return 0
	case PluginWatcher:
		return l.answer("plugin", t)
	case PluginManager:
		return l.component[PluginWatcher]
	case DeviceManager, CSI, DRA:
		// Admission of a pod (an allocation, a rejection) is the pod's; the rest, with no pod
		// and so no podSeq, follows the plugin manager.
		if c := l.links(e.Pod).seq(podSeq); c != 0 {
			return c
		}
		return latest(l.component[PluginManager], l.component[DeviceManager])
	}
	// Events and components the linker has no rule for: the last thing that happened to the pod
	// (none for an event of no pod: observe keeps podSeq only for events of a pod).
	return l.links(e.Pod).seq(podSeq)
}

// startCause links the events of a kubelet process's start-up (docs/trace.md, "Causes"): each
// kubelet event follows the process's last one, and its new follows the restartKubelet step of
// its instant; the BirthCry event follows the process's build; the first SET of each source
// follows makePodSourceConfig, unless a step or a write caused it; the first registration and
// its failures the node status loop; the first Ready report fastStatusUpdateOnce; the PLEG's
// first health its start; the first skip the sync loop's start, and the resume that ends it what
// cleared the last error; the device manager's checkpoint and the watcher's first traversal
// initializeRuntimeDependentModules. It returns 0 for every other event.
func (l *linker) startCause(e Event, t int64) uint64 {
	if e.Component == Kubelet {
		if e.Event == KindNew {
			if l.stepKind == KindRestartKubelet && l.stepT == t {
				return l.step
			}
			return 0
		}
		if st := l.starts[e.Node]; st != nil {
			return st.last
		}
		return 0
	}
	st := l.starts[e.Node]
	if st == nil {
		return 0
	}
	switch {
	case e.Component == Events && e.Reason == "Starting" && e.Pod == "":
		return st.last
	case e.Component == Sources && e.Event == KindSet && !st.sets[e.Source]:
		st.sets[e.Source] = true
		if e.Source == "api" && slices.ContainsFunc(l.apiWrites, func(w linked) bool { return w.t == t }) {
			return 0
		}
		if p := l.pending[e.Source]; e.Source != "api" && p != nil && (p.answered < 0 || p.answered == t) {
			return 0
		}
		return st.steps[KindSources]
	case e.Component == Node && (e.Event == KindRegister || e.Reason == "FailedToRegisterNode") && !st.registered:
		st.registered = e.Event == KindRegister
		return st.steps[KindNodeStatus]
	case e.Component == Node && e.Event == KindReady && !st.ready:
		st.ready = true
		return st.steps[KindFastStatus]
	case e.Component == PLEG && e.Event == KindHealth && !st.healthy:
		st.healthy = true
		st.cleared = max(st.cleared, e.Seq)
		return st.steps[KindPLEG]
	case e.Component == SyncLoop && e.Event == KindSkip && e.Reason == "RuntimeErrors" && !st.skipped:
		st.skipped = true
		return st.steps[KindSyncLoopStart]
	case e.Component == SyncLoop && e.Event == KindResume && st.skipped && !st.resumed:
		st.resumed = true
		return st.cleared
	case e.Component == DeviceManager && e.Event == KindRestored:
		return st.steps[KindRuntimeModules]
	case e.Component == PluginWatcher && e.Event == KindAdd:
		// The watcher's first traversal, at the instant the plugin manager started, finds the
		// sockets already in the registry.
		if m := st.steps[KindRuntimeModules]; m != 0 && st.modulesAt == t && l.answer("plugin", t) == 0 {
			return m
		}
	}
	return 0
}

// answer returns the step pending on source when a SET of it at instant t answers the step: the
// first SET after it, and the others of the same instant (a file write is a create and a write
// to the watch).
func (l *linker) answer(source string, t int64) uint64 {
	p := l.pending[source]
	if p == nil {
		return 0
	}
	if p.answered < 0 {
		p.answered = t
	}
	if p.answered != t {
		return 0
	}
	return p.seq
}

func (u configUpdate) has(pod string) bool { return contains(u.pods, pod) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// pruneEvery and forgetAfter bound the linker's memory in a long run with many pods: every
// pruneEvery events it drops what it remembers of keys (pods, containers) quiet for forgetAfter
// events. A pod quiet for that long gets no cause for its next event.
const (
	pruneEvery  = 1 << 18
	forgetAfter = 1 << 20
)

func (l *linker) prune(seq uint64) {
	if seq%pruneEvery != 0 || seq < forgetAfter {
		return
	}
	old := seq - forgetAfter
	forget := func(v *uint64) {
		if *v < old {
			*v = 0
		}
	}
	for key, p := range l.pods {
		for i := range p.seqs {
			forget(&p.seqs[i])
		}
		if p.seqs[faultSeq] == 0 {
			p.loops = false // a crash loop is remembered as long as its step
		}
		kept := p.containers[:0]
		for _, c := range p.containers {
			// A container's last event is its latest of every kind: once it is forgotten,
			// so are they.
			if c.last < old {
				continue
			}
			forget(&c.started)
			forget(&c.exited)
			forget(&c.removed)
			kept = append(kept, c)
		}
		clear(p.containers[len(kept):])
		p.containers = kept
		if p.empty() {
			delete(l.pods, key)
		}
	}
}

func (l *linker) observe(e Event) {
	seq, t := e.Seq, int64(e.T)
	l.prune(seq)
	if e.Component != Events && e.Pod != "" {
		l.record(e.Pod).seqs[podSeq] = seq
	}
	l.component[e.Component] = seq
	switch e.Component {
	case Kubelet:
		st := l.starts[e.Node]
		if e.Event == KindNew || st == nil {
			st = &start{steps: map[Kind]uint64{}, sets: map[string]bool{}}
			l.starts[e.Node] = st
		}
		st.last = seq
		st.steps[e.Event] = seq
		switch e.Event {
		case KindRuntimeUp:
			st.cleared = max(st.cleared, seq)
		case KindRuntimeModules:
			st.modulesAt = t
		}
	case Scenario:
		if e.Event == KindError {
			return
		}
		l.step, l.stepKind, l.stepT = seq, e.Event, t
		if src, ok := stepSource[e.Event]; ok {
			l.pending[src] = &pendingStep{seq: seq, answered: -1}
		}
		if faultSteps[e.Event] && e.Pod != "" {
			p := l.record(e.Pod)
			p.seqs[faultSeq], p.loops = seq, e.Event == KindCrashLoop
		}
	case Sources:
		if e.Event == KindSet {
			l.lastSet[e.Source] = seq
		}
	case PodConfig:
		if e.Event == KindUpdate {
			// Updates the sync loop skipped belong to an earlier instant.
			for len(l.updates) > 0 && l.updates[0].t != t {
				l.updates = l.updates[1:]
			}
			l.updates = append(l.updates, configUpdate{seq: seq, t: t, op: e.Op, source: e.Source, pods: e.Pods})
		}
	case SyncLoop:
		if e.Event == KindConfig {
			l.config = configUpdate{seq: seq, t: t, op: e.Op, source: e.Source, pods: e.Pods}
		}
		if e.Pod != "" && e.Event != KindSkip && e.Event != KindError {
			l.record(e.Pod).seqs[dispatchSeq] = seq
		}
		// A reconcile updates the pod manager's copy; it does not wake the worker.
		if (e.Event == KindConfig && e.Op != "RECONCILE") || e.Event == KindSync {
			for _, p := range e.Pods {
				l.record(p).seqs[dispatchSeq] = seq
			}
		}
	case Housekeeping:
		if e.Pod != "" {
			p := l.record(e.Pod)
			p.seqs[dispatchSeq], p.seqs[cleanupSeq] = seq, seq
		}
	case PodWorkers:
		if e.Pod == "" {
			break
		}
		switch e.Event {
		case KindRequeue:
			p := l.record(e.Pod)
			p.seqs[requeueSeq], p.seqs[dispatchSeq] = seq, seq
		case KindSync, KindState:
			l.record(e.Pod).seqs[workSeq] = seq
		}
	case Runtime:
		// The runtime's events of no pod are no pod's: a record under "" would be read as a
		// pod's, its sandbox's last event the cause of every later PLEG event of no pod.
		if e.Pod == "" {
			if e.Event == KindDown {
				l.outages[e.Node] = outage{seq: seq, until: t + int64(e.Delay)}
			}
			break
		}
		p := l.record(e.Pod)
		p.seqs[runtimeSeq] = seq
		c := p.container(e.Container)
		if c == nil {
			p.containers = append(p.containers, containerLinks{name: e.Container})
			c = &p.containers[len(p.containers)-1]
		}
		c.last = seq
		kind := e.Event
		if e.Event == KindSandbox {
			// A sandbox has no container name: ready is its start, stopped its exit.
			kind = map[string]Kind{"ready": KindStarted, "": KindExited}[e.To]
		}
		if v := c.of(kind); v != nil {
			*v = seq
		}
		// A crash loop breaks every run of the container; the other faults break one.
		if e.Event == KindExited && !p.loops {
			p.seqs[faultSeq] = 0
		}
	case PLEG:
		if e.Pod != "" {
			l.record(e.Pod).seqs[plegSeq] = seq
		}
	case Status:
		if e.Event == KindSet && e.Pod != "" {
			l.record(e.Pod).seqs[statusSeq] = seq
		}
	case APIServer:
		l.apiWrites = append(l.apiWrites, linked{seq: seq, t: t, pod: e.Pod})
	}
}
