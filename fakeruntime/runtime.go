package fakeruntime

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Latencies are how long the runtime's blocking calls take on the clock. Zero makes a step
// instant.
type Latencies struct {
	// SandboxStart is the time from RunPodSandbox to a ready sandbox.
	SandboxStart time.Duration
	// ImagePull is the time one image pull takes, successful or not.
	ImagePull time.Duration
	// ImagePullPresent is the time a pull of an image whose layers the runtime already has
	// takes: the registry's manifest lookup, no download. A pull that queued behind a pull of
	// the same image, or a pullPolicy Always pull of a present image, takes this.
	ImagePullPresent time.Duration
	// ContainerStart is the time from a created container to a running one.
	ContainerStart time.Duration
	// ContainerStop is how long a container that handles SIGTERM takes to exit.
	ContainerStop time.Duration
}

// DefaultLatencies are plausible latencies for a local runtime with a warm registry, used by the
// run command.
var DefaultLatencies = Latencies{
	SandboxStart:     500 * time.Millisecond,
	ImagePull:        2 * time.Second,
	ImagePullPresent: 200 * time.Millisecond,
	ContainerStart:   500 * time.Millisecond,
	ContainerStop:    500 * time.Millisecond,
}

// Options configure a Runtime.
type Options struct {
	// Clock is where the runtime reads the time. Required.
	Clock clock.PassiveClock
	// Latencies are the durations of the blocking steps.
	Latencies Latencies
	// Tracer receives the runtime's trace events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Recorder receives the Kubernetes events kuberuntime records (Pulling, Pulled, Created,
	// Started, Killing, BackOff, Failed). Nil records none.
	Recorder EventRecorder
	// MaxParallelImagePulls is how many image pulls the node runs at once; later pulls wait in
	// line. 1 is the kubelet's default serial image puller (serializeImagePulls: true); 0 means
	// no limit (serializeImagePulls: false without maxParallelImagePulls).
	MaxParallelImagePulls int
	// Metrics receives the runtime's CRI calls and starts. Nil records none.
	Metrics Metrics
	// SidecarStartup answers, for a running sidecar with a startup probe, what its probe says
	// (the kubelet's startupManager.Get); see Runtime.sidecarStarted. Nil takes every startup
	// probe to have passed.
	SidecarStartup func(containerID string) SidecarStartup
	// Pulls is told when the image manager starts and ends pulling for a pod. Nil tells no one.
	Pulls PullRecorder
	// Keys hands out the trace keys of pods another component built already (one string a
	// pod, shared). Nil builds every key.
	Keys *kubecontainer.SharedKeys
}

// PullRecorder is the kubelet's pod pulling time recorder (the pod startup latency tracker): the
// image manager tells it when a pod's pull is asked for and when it succeeded or was not needed.
type PullRecorder interface {
	RecordImageStartedPulling(uid types.UID, at time.Time)
	RecordImageFinishedPulling(uid types.UID, at time.Time)
}

// AttachKubelet points the runtime's kubelet-side instruments at a new kubelet process: the
// containers outlive a kubelet restart, but its event recorder, its metrics, its startup tracker,
// its pods' trace keys, its image pull back-off and its image puller's queue start afresh.
// kuberuntime records its events through the process's broadcaster, so the new process's events
// are correlated (counted, aggregated) by its own caches, not the old one's; the pull back-off and
// the puller's slots are its image manager's, in its memory. The keys matter beyond the trace: the
// old process's keys keep its pod workers, and all they reach, alive for as long as the runtime
// lives. Nil values detach them.
//
// The old process's SyncPods die with it: the CRI calls they would still have made (sandbox and
// container creations and starts, init container removals) are never made, and the events and log
// lines they would have recorded when a step ended are not recorded. A call in flight is
// cancelled with the old process's connection, except an image pull: the runtime's fetch of the
// image goes on and completes when it would have, and a new process's pull of the same image ends
// then (see pullEnd); a pull the process had not sent yet (queued in its puller, or due at a
// later step) never reached the runtime, and the runtime forgets it (undoUnsentFetches). A kill's
// later steps are the process's too: its Killing event and StopContainer after a postStart hook,
// a preStop hook's end, the StopContainer sent when the hook returned, the StopPodSandbox after
// the wait for the containers (see stopContainers). What the
// runtime does by itself goes on: a container stopping because a StopContainer actually sent (its
// instant not later than now) asked it to, a scripted exit.
func (r *Runtime) AttachKubelet(rec EventRecorder, m Metrics, p PullRecorder, keys *kubecontainer.SharedKeys) {
	r.applyDue(r.clock.Now())
	r.recorder, r.metrics, r.pulls, r.keys = rec, m, p, keys
	r.podRecorder, _ = rec.(PodEventRecorder)
	// New checked these arguments already.
	r.imageBackoff, _ = kubecontainer.NewBackoff(r.clock, kubecontainer.InitialBackoff, kubecontainer.MaxImageBackoff)
	r.schedule.dropOfProcess()
	clear(r.pullSlots)
	r.undoUnsentFetches(r.clock.Now())
}

// RuntimeHelper is what the runtime asks of the kubelet process to configure a container
// (kubecontainer.RuntimeHelper, through GenerateRunContainerOptions): whether its environment
// can be made, and the error when it cannot. The kubelet's helper makes the variables; a fake
// container runs nothing with them, so the runtime asks only for the error (envvars.Maker's
// CheckEnvironment, which fails exactly when its MakeEnvironmentVariables does).
type RuntimeHelper interface {
	CheckEnvironment(pod *v1.Pod, container *v1.Container, podIP string, podIPs []string) error
}

// SetRuntimeHelper points the runtime at the kubelet process that configures its containers: a
// restarted kubelet is a new helper. Nil configures every container with no environment to
// resolve.
func (r *Runtime) SetRuntimeHelper(h RuntimeHelper) { r.helper = h }

// EventRecorder records one Kubernetes event about object. client-go's record.EventRecorder
// satisfies it. A recorder must not change the object it is handed (client-go's copies the
// reference into the Event): the runtime hands the same reference again for the next event
// about the same container.
type EventRecorder interface {
	Event(object runtime.Object, eventType, reason, message string)
}

// PodEventRecorder is an EventRecorder that also takes the pod's "namespace/name" key and the
// container's name ("" for the pod) beside the reference, so that it need not build them again
// from the reference (eventrecord.Tracing). A Recorder that has the method is recorded through
// it.
type PodEventRecorder interface {
	PodEvent(ref *v1.ObjectReference, podKey, container, eventType, reason, message string)
}

func (o Options) validate() error {
	var missing []string
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	if o.MaxParallelImagePulls < 0 {
		return fmt.Errorf("options MaxParallelImagePulls %d: must not be negative", o.MaxParallelImagePulls)
	}
	return nil
}

// Errors the runtime returns besides kubecontainer's. Check them with errors.Is.
var (
	// ErrRuntimeDown is returned by every call while the runtime is down (see Down).
	ErrRuntimeDown = errors.New("container runtime is down")
	// ErrNotFound is returned for a container or pod the runtime does not have.
	ErrNotFound = errors.New("not found")
	// ErrContainerRunning is returned when removing a container that still runs.
	ErrContainerRunning = errors.New("container is running")
	// ErrBadAnnotation is returned when a minikubelet.io scripting annotation does not parse. It
	// is also a kubecontainer.ErrCreateContainerConfig: the container cannot be configured.
	ErrBadAnnotation error = configError("bad minikubelet.io annotation")
)

// configError is an error that counts as kubecontainer.ErrCreateContainerConfig.
type configError string

func (e configError) Error() string { return string(e) }

// Is makes errors.Is(err, kubecontainer.ErrCreateContainerConfig) hold.
func (e configError) Is(target error) bool { return target == kubecontainer.ErrCreateContainerConfig }

// Runtime is an in-memory container runtime: the kubelet's kuberuntime manager on top of a fake
// CRI. It is a core: every call returns at once, records its effects at the virtual instants they
// happen, and Advance applies them when the clock reaches them. It is driven by one goroutine and
// has no lock; a runner that shares it serialises the calls.
//
// The struct is wider than the house limit because it is the whole fake CRI; its state is split
// by concern into records (pods, containers, sandboxes), the schedule, and scripting.
type Runtime struct {
	clock    clock.PassiveClock
	lat      Latencies
	tracer   trace.Tracer
	recorder EventRecorder
	// podRecorder is recorder when it is a PodEventRecorder, else nil.
	podRecorder PodEventRecorder
	metrics     Metrics
	pulls       PullRecorder
	// keys hands out pods' trace keys built elsewhere (Options.Keys).
	keys *kubecontainer.SharedKeys
	// helper is the kubelet process that configures containers (SetRuntimeHelper); nil is none.
	helper RuntimeHelper

	// pods, containers and sandboxes are the records visible as of the applied schedule.
	pods       map[types.UID]*podRec
	containers map[string]*containerRec
	uids       []types.UID // sorted keys of pods; nil when it must be rebuilt
	// schedule holds the effects that happen later, in (time, sequence) order.
	schedule transitions
	seq      uint64
	// spareEvents are pending events whose step ran, for the next ones (pendingEvent).
	spareEvents []*pendingEvent
	// lastContainer and lastSandbox number the IDs handed out.
	lastContainer, lastSandbox int
	// images maps each image to the instant its pull completes.
	images       map[string]time.Time
	imageBackoff *kubecontainer.Backoff
	pullFailures map[string]int
	// fetches are the pulls a SyncPod planned that may not have reached the runtime yet (see
	// unsentFetches): a kubelet restart undoes those it had not sent.
	fetches   []fetch
	behaviors map[behaviorKey]Behavior
	// pullSlots holds, per image puller slot, when its last pull ends; empty for no limit.
	pullSlots []time.Time
	stops     map[behaviorKey]StopBehavior
	hooks     map[hookKey]HookBehavior
	// sidecarStartup is Options.SidecarStartup.
	sidecarStartup func(containerID string) SidecarStartup
	// callFailures counts, per CRI call, how many of its next calls fail.
	callFailures map[string]int
	// generation counts the kills of each pod. A sandbox or container creation or start that a
	// SyncPod scheduled before a kill is dropped when it falls due: the kill cancelled the
	// SyncPod's context, which in the kubelet aborts the CRI calls still to come.
	generation map[types.UID]int
	downUntil  time.Time
	// lists caches GetPods' answers, [0] without and [1] with the stopped containers, until a
	// record changes (changed): the PLEG lists every second and housekeeping every two, and
	// most of the time nothing has changed. [0] is made from [1] (running), sharing its pods
	// whose containers all run.
	lists [2][]*kubecontainer.Pod
	// state grows with every change to what Checkpoint writes (a record, an ID counter, an
	// image), so that a caller that saves checkpoints skips encoding an unchanged state: a
	// fleet's nodes are asked for one every second and mostly have none.
	state uint64
	// hashes and wellFormed remember, per container name and image, the container hash, and the
	// image references that parsed: both are pure functions of those strings that every sync
	// of every pod asks again (the hash is the JSON and spew dump's FNV, the parse a regular
	// expression) for the few images a node runs. Each holds at most maxMemo entries, and is
	// made at its first use. wellFormed keeps with each image the reference the runtime reports
	// for it (imageRef), which every instance of the image then shares.
	hashes     map[hashKey]uint64
	wellFormed map[string]string
	// presentMessages remembers, per image, the Pulled event's message for an image already
	// present: every start of a container of a present image records it, word for word the
	// same. At most maxMemo entries, made at its first use.
	presentMessages map[string]string
	// fieldPaths remembers the containers' field paths in events (containerFieldPath), at
	// most maxMemo, made at its first use.
	fieldPaths map[fieldPathKey]string
}

// hashKey is what HashContainer reads of a container.
type hashKey struct{ name, image string }

// maxMemo bounds each memo: a node with more distinct containers or images than this computes
// again what it forgot.
const maxMemo = 4096

// keepMemo remembers v under k in the memo *m, made at its first use and emptied whole once it holds
// maxMemo entries.
func keepMemo[K comparable, V any](m *map[K]V, k K, v V) {
	switch {
	case *m == nil:
		*m = map[K]V{}
	case len(*m) >= maxMemo:
		clear(*m)
	}
	(*m)[k] = v
}

// containerHash is kubecontainer.HashContainer(c), remembered.
func (r *Runtime) containerHash(c *v1.Container) uint64 {
	k := hashKey{c.Name, c.Image}
	if h, ok := r.hashes[k]; ok {
		return h
	}
	h := kubecontainer.HashContainer(c)
	keepMemo(&r.hashes, k, h)
	return h
}

// alreadyPresentMessage is the message of the Pulled event for image, already present on the
// node, remembered.
func (r *Runtime) alreadyPresentMessage(image string) string {
	if msg, ok := r.presentMessages[image]; ok {
		return msg
	}
	msg := fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image)
	keepMemo(&r.presentMessages, image, msg)
	return msg
}

// seqID is fmt.Sprintf(prefix+"%06d", n) for the IDs the runtime numbers (n >= 0), built in one
// allocation: fmt boxes n and builds the string, for every sandbox and container.
func seqID(prefix string, n int) string {
	var buf [32]byte
	var d [20]byte
	digits := strconv.AppendInt(d[:0], int64(n), 10)
	b := append(buf[:0], prefix...)
	for i := len(digits); i < 6; i++ {
		b = append(b, '0')
	}
	return string(append(b, digits...))
}

// checkImageName is parseImageName(image), with the images that parsed remembered with their
// reference; an error is worked out (and worded) afresh each time.
func (r *Runtime) checkImageName(image string) error {
	if _, ok := r.wellFormed[image]; ok {
		return nil
	}
	if err := parseImageName(image); err != nil {
		return err
	}
	keepMemo(&r.wellFormed, image, imageRef(image))
	return nil
}

// imageRefOf is imageRef(image), the one checkImageName remembered when it has it: the instances
// of an image share one string.
func (r *Runtime) imageRefOf(image string) string {
	if ref, ok := r.wellFormed[image]; ok {
		return ref
	}
	return imageRef(image)
}

// changed drops the cached listings after a record changed.
func (r *Runtime) changed() {
	r.lists = [2][]*kubecontainer.Pod{}
	r.state++
}

// StateVersion is a number that grows whenever the state Checkpoint writes changes, as of the
// clock's instant: two calls that return the same number have the same checkpoint between them.
func (r *Runtime) StateVersion() uint64 {
	r.applyDue(r.clock.Now())
	return r.state
}

type podRec struct {
	uid             types.UID
	name, namespace string
	containers      []*containerRec // in creation order
	sandboxes       []*sandboxRec   // in creation order
	// podKey is the pod's "namespace/name", once asked for or once a SyncPod that had it
	// created the record: every SyncPod that does something, every kill and every container's
	// exit trace it.
	podKey string
	// refs are the references the pod's Kubernetes events were last recorded about, one per
	// container (and "" for the pod itself): each pull, creation and start records an event,
	// and the reference and its field path were built anew for each.
	refs []eventRefRec
	// sandboxArr and containerArr back the first sandbox and container the lists hold, and
	// firstSandbox is the first sandbox's record: nearly every pod has one of each, and each was
	// an allocation of its own. The lists are the record's alone (a reader gets copies of the
	// statuses), so their arrays may live in it.
	sandboxArr       [1]*sandboxRec
	containerArr     [1]*containerRec
	refsArr          [1]eventRefRec
	firstSandbox     sandboxRec
	firstSandboxUsed bool
}

// addSandbox appends a sandbox record of sb and returns it.
func (p *podRec) addSandbox(sb sandboxRec) *sandboxRec {
	rec := &p.firstSandbox
	if p.firstSandboxUsed {
		// The first may still be referred to (a kill's closure) after it was removed.
		rec = new(sandboxRec)
	}
	p.firstSandboxUsed = true
	*rec = sb
	if p.sandboxes == nil {
		p.sandboxes = p.sandboxArr[:0]
	}
	p.sandboxes = append(p.sandboxes, rec)
	return rec
}

// addContainer appends c.
func (p *podRec) addContainer(c *containerRec) {
	if p.containers == nil {
		p.containers = p.containerArr[:0]
	}
	p.containers = append(p.containers, c)
}

// eventRefRec is the reference a pod's events about container were last recorded about.
type eventRefRec struct {
	container string
	// list is the field of the spec that held the container (containerList) when ref was built.
	list string
	ref  *v1.ObjectReference
}

func (p *podRec) key() string {
	if p.podKey == "" {
		p.podKey = podkey.Build(p.namespace, p.name)
	}
	return p.podKey
}

// keyOf is podkey.Of(pod), the one the pod's record keeps when it has one.
func (r *Runtime) keyOf(pod *v1.Pod) string {
	if rec := r.pods[pod.UID]; rec != nil && rec.name == pod.Name && rec.namespace == pod.Namespace {
		return rec.key()
	}
	return r.keys.Of(pod)
}

type containerRec struct {
	status kubecontainer.ContainerStatus
	seq    int
	podUID types.UID
	// exitAt and killAt are the pending natural exit and the pending exit of a stop, if any.
	exitAt, killAt *transition
}

type sandboxRec struct {
	status kubecontainer.SandboxStatus
	seq    int
	// ip is the sandbox's pod IP, "" for a host-network pod (the runtime reports none).
	ip string
	// ips is []string{ip}, made once and handed to every reader (PodStatus.IPs at every
	// GetPodStatus, the hooks, the environment), who only read it: the kubelet's runtime also
	// builds it anew at every status, which nothing can tell from a shared one.
	ips []string
}

// podIPs are the IPs the runtime reports for a pod (the kubelet's PodStatus.IPs): its newest
// sandbox's, while that sandbox is ready.
func (rec *podRec) podIPs() []string {
	if rec == nil || len(rec.sandboxes) == 0 {
		return nil
	}
	newest := rec.sandboxes[len(rec.sandboxes)-1]
	if newest.status.State != kubecontainer.SandboxReady || newest.ip == "" {
		return nil
	}
	if newest.ips == nil {
		// A sandbox read back from a checkpoint; a capacity of one, so that an append copies.
		newest.ips = []string{newest.ip}[:1:1]
	}
	return newest.ips
}

// sandboxIP is the IP a pod's sandboxes get: a stable address in 10.88.0.0/16 derived from the
// pod's UID, as a CNI plugin's range would give one (the fake runtime has no network).
func sandboxIP(uid types.UID) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	v := h.Sum32()
	return "10.88." + strconv.Itoa(int(v>>8&0xff)) + "." + strconv.Itoa(1+int(v&0xff)%254)
}

// New returns an empty Runtime.
func New(opts Options) (*Runtime, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new runtime: %w", err)
	}
	imageBackoff, err := kubecontainer.NewBackoff(opts.Clock, kubecontainer.InitialBackoff, kubecontainer.MaxImageBackoff)
	if err != nil {
		return nil, fmt.Errorf("new runtime: %w", err)
	}
	podRecorder, _ := opts.Recorder.(PodEventRecorder)
	return &Runtime{
		clock:          opts.Clock,
		lat:            opts.Latencies,
		tracer:         opts.Tracer,
		recorder:       opts.Recorder,
		podRecorder:    podRecorder,
		metrics:        opts.Metrics,
		pulls:          opts.Pulls,
		keys:           opts.Keys,
		pods:           map[types.UID]*podRec{},
		containers:     map[string]*containerRec{},
		images:         map[string]time.Time{},
		imageBackoff:   imageBackoff,
		pullFailures:   map[string]int{},
		behaviors:      map[behaviorKey]Behavior{},
		stops:          map[behaviorKey]StopBehavior{},
		hooks:          map[hookKey]HookBehavior{},
		sidecarStartup: opts.SidecarStartup,
		callFailures:   map[string]int{},
		pullSlots:      make([]time.Time, opts.MaxParallelImagePulls),
		generation:     map[types.UID]int{},
	}, nil
}

// NextWake returns the instant of the earliest scheduled effect, and false if none is scheduled.
func (r *Runtime) NextWake() (time.Time, bool) {
	for len(r.schedule) > 0 && r.schedule[0].cancelled() {
		r.schedule.pop()
	}
	if len(r.schedule) == 0 {
		return time.Time{}, false
	}
	return r.schedule[0].at, true
}

// Advance applies every scheduled effect due at or before now, in (time, sequence) order, and
// traces each. Every other call does the same first, so a caller never sees a stale state.
func (r *Runtime) Advance() {
	r.applyDue(r.clock.Now())
}

// GetPods lists the runtime's pods sorted by UID, each with its containers and sandboxes sorted by
// ID. With all false it lists only running containers and ready sandboxes, and only pods that have
// one. The listing is shared with later calls until the runtime changes: the caller must not
// change it.
func (r *Runtime) GetPods(all bool) ([]*kubecontainer.Pod, error) {
	now := r.clock.Now()
	r.applyDue(now)
	if err := r.checkUp(now); err != nil {
		r.observeOp("list_podsandbox", 0, err)
		return nil, fmt.Errorf("list pods: %w", err)
	}
	r.observeOp("list_podsandbox", 0, nil)
	r.observeOp("list_containers", 0, nil)
	if r.lists[1] == nil {
		r.lists[1] = r.list()
	}
	if all {
		return r.lists[1], nil
	}
	if r.lists[0] == nil {
		r.lists[0] = running(r.lists[1])
	}
	return r.lists[0], nil
}

// running is GetPods(false)'s listing made from GetPods(true)'s: a pod whose containers all run
// and whose sandboxes are all ready (nearly every pod of a settled node) is the same in both, and
// is shared rather than copied, as the whole listing is shared between calls; the others are
// filtered into one backing array each, as list lays out the whole listing.
func running(all []*kubecontainer.Pod) []*kubecontainer.Pod {
	var nc, ns, filtered int
	for _, p := range all {
		c, s := countRunning(p)
		if c+s > 0 && (c < len(p.Containers) || s < len(p.Sandboxes)) {
			nc, ns, filtered = nc+c, ns+s, filtered+1
		}
	}
	backing := make([]kubecontainer.Pod, 0, filtered)
	containers := make([]kubecontainer.ContainerStatus, 0, nc)
	sandboxes := make([]kubecontainer.SandboxStatus, 0, ns)
	pods := make([]*kubecontainer.Pod, 0, len(all))
	for _, p := range all {
		c, s := countRunning(p)
		switch {
		case c+s == 0:
			continue
		case c == len(p.Containers) && s == len(p.Sandboxes):
			pods = append(pods, p)
			continue
		}
		c0, s0 := len(containers), len(sandboxes)
		for _, c := range p.Containers {
			if c.State == kubecontainer.ContainerStateRunning {
				containers = append(containers, c)
			}
		}
		for _, s := range p.Sandboxes {
			if s.State == kubecontainer.SandboxReady {
				sandboxes = append(sandboxes, s)
			}
		}
		backing = append(backing, kubecontainer.Pod{
			ID: p.ID, Name: p.Name, Namespace: p.Namespace,
			Containers: containers[c0:len(containers):len(containers)],
			Sandboxes:  sandboxes[s0:len(sandboxes):len(sandboxes)],
		})
		pods = append(pods, &backing[len(backing)-1])
	}
	return pods
}

// countRunning counts p's running containers and ready sandboxes.
func countRunning(p *kubecontainer.Pod) (containers, sandboxes int) {
	for i := range p.Containers {
		if p.Containers[i].State == kubecontainer.ContainerStateRunning {
			containers++
		}
	}
	for i := range p.Sandboxes {
		if p.Sandboxes[i].State == kubecontainer.SandboxReady {
			sandboxes++
		}
	}
	return containers, sandboxes
}

// list builds GetPods(true)'s answer from the records; GetPods(false)'s is made from it
// (running).
func (r *Runtime) list() []*kubecontainer.Pod {
	// One backing array each for pods, containers and sandboxes keeps a listing of thousands of
	// containers to a handful of allocations; the PLEG relists every second.
	nc, ns := 0, 0
	for _, rec := range r.pods {
		nc += len(rec.containers)
		ns += len(rec.sandboxes)
	}
	backing := make([]kubecontainer.Pod, 0, len(r.pods))
	containers := make([]kubecontainer.ContainerStatus, 0, nc)
	sandboxes := make([]kubecontainer.SandboxStatus, 0, ns)
	pods := make([]*kubecontainer.Pod, 0, len(r.pods))
	for _, uid := range r.sortedUIDs() {
		rec := r.pods[uid]
		c0, s0 := len(containers), len(sandboxes)
		for _, c := range rec.containers {
			containers = append(containers, c.status)
		}
		for _, s := range rec.sandboxes {
			sandboxes = append(sandboxes, s.status)
		}
		backing = append(backing, kubecontainer.Pod{
			ID: rec.uid, Name: rec.name, Namespace: rec.namespace,
			Containers: containers[c0:len(containers):len(containers)],
			Sandboxes:  sandboxes[s0:len(sandboxes):len(sandboxes)],
		})
		pods = append(pods, &backing[len(backing)-1])
	}
	return pods
}

// GetPodStatus returns what the runtime has for the pod now: sandboxes and container instances
// newest first. An unknown pod has an empty status.
func (r *Runtime) GetPodStatus(uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error) {
	now := r.clock.Now()
	r.applyDue(now)
	if err := r.checkUp(now); err != nil {
		return nil, fmt.Errorf("get status of pod %s/%s: %w", namespace, name, err)
	}
	rec := r.pods[uid]
	if rec == nil {
		return &kubecontainer.PodStatus{UID: uid, Name: name, Namespace: namespace, TimeStamp: now}, nil
	}
	// The status and the lists of a pod with one sandbox and one container instance (nearly
	// every pod, nearly always) in one allocation; a longer list gets an array of its own. Each
	// list's capacity is its length, so that an append by a reader copies.
	one := &statusOfOne{PodStatus: kubecontainer.PodStatus{UID: uid, Name: name, Namespace: namespace, TimeStamp: now}}
	s := &one.PodStatus
	if n := len(rec.sandboxes); n == 1 {
		one.sandbox[0] = rec.sandboxes[0].status
		s.Sandboxes = one.sandbox[:1:1]
	} else if n > 1 {
		s.Sandboxes = make([]kubecontainer.SandboxStatus, n)
		for i := range n {
			s.Sandboxes[i] = rec.sandboxes[n-1-i].status
		}
	}
	s.IPs = rec.podIPs()
	if n := len(rec.containers); n == 1 {
		one.container[0] = rec.containers[0].status
		s.ContainerStatuses = one.container[:1:1]
	} else if n > 1 {
		s.ContainerStatuses = make([]kubecontainer.ContainerStatus, n)
		for i := range n {
			s.ContainerStatuses[i] = rec.containers[n-1-i].status
		}
	}
	return s, nil
}

// statusOfOne is a pod's status with room for one sandbox and one container instance.
type statusOfOne struct {
	kubecontainer.PodStatus
	sandbox   [1]kubecontainer.SandboxStatus
	container [1]kubecontainer.ContainerStatus
}

// checkUp returns ErrRuntimeDown while the runtime is down.
func (r *Runtime) checkUp(now time.Time) error {
	if now.Before(r.downUntil) {
		return ErrRuntimeDown
	}
	return nil
}

// sortedUIDs returns the pod UIDs in order, rebuilding the cached order after a pod came or went.
func (r *Runtime) sortedUIDs() []types.UID {
	if r.uids == nil {
		r.uids = make([]types.UID, 0, len(r.pods))
		for uid := range r.pods {
			r.uids = append(r.uids, uid)
		}
		slices.Sort(r.uids)
	}
	return r.uids
}

// podFor returns the record of uid, creating it on the first visible effect. key, when not
// empty, is the pod's "namespace/name" the caller already holds.
func (r *Runtime) podFor(uid types.UID, name, namespace, key string) *podRec {
	rec := r.pods[uid]
	if rec == nil {
		rec = &podRec{uid: uid, name: name, namespace: namespace, podKey: key}
		r.pods[uid] = rec
		r.uids = nil
		r.changed()
	}
	return rec
}

// dropIfEmpty forgets a pod with no containers and no sandboxes left.
func (r *Runtime) dropIfEmpty(rec *podRec) {
	if len(rec.containers) == 0 && len(rec.sandboxes) == 0 {
		delete(r.pods, rec.uid)
		r.uids = nil
		r.changed()
	}
}

// emit sends e as a runtime event.
func (r *Runtime) emit(e trace.Event) {
	e.Component = trace.Runtime
	r.tracer.Emit(e)
}

// kubeEvent is a Kubernetes event kuberuntime records at one step of a call.
type kubeEvent struct {
	eventType, reason, message string
}

// emitAndRecord traces e and records k at the same instant: in the kubelet, kuberuntime records
// its events as each step happens. k is about e's container when e names one, else about e's pod
// (pod, when known, gives the reference its resourceVersion and the container its field path).
func (r *Runtime) emitAndRecord(pod *v1.Pod, e trace.Event, k kubeEvent) {
	r.emit(e)
	r.record(pod, e.Pod, types.UID(e.UID), e.Container, k)
}

// record records k about the pod, or about its container when container is not empty.
func (r *Runtime) record(pod *v1.Pod, podKey string, uid types.UID, container string, k kubeEvent) {
	if r.recorder == nil {
		return
	}
	ref := r.eventRef(pod, podKey, uid, container)
	if r.podRecorder != nil {
		r.podRecorder.PodEvent(ref, podKey, container, k.eventType, k.reason, k.message)
		return
	}
	r.recorder.Event(ref, k.eventType, k.reason, k.message)
}

// eventRef is newEventRef(pod, podKey, uid, container), the reference the pod's last event
// about the container was recorded about when it is the same. A reference handed to a recorder
// is never changed afterwards (client-go's recorder and the APIRecorder copy it into the Event;
// the trace reads it), so it can be handed again. It is the same when the pod's resourceVersion
// is and the container is still in the same list of the spec: a pod from a file or a URL has no
// resourceVersion, and a manifest that pins its UID may be edited to move a container between
// the containers and the init containers (a sidecar), which changes the field path the kubelet
// builds from the pod it holds. A reference to a container the pod's spec does not name
// ("implicitly required container") is not kept: the container may yet be added as an ephemeral
// one.
func (r *Runtime) eventRef(pod *v1.Pod, podKey string, uid types.UID, container string) *v1.ObjectReference {
	rec := r.pods[uid]
	if pod == nil || rec == nil || !isKeyOf(podKey, rec.namespace, rec.name) {
		// A pod known only to the runtime gets the implicit field path, which may change.
		return newEventRef(pod, podKey, uid, container)
	}
	list := containerList(pod, container)
	i := slices.IndexFunc(rec.refs, func(c eventRefRec) bool { return c.container == container })
	if i >= 0 && rec.refs[i].list == list {
		if rec.refs[i].ref.ResourceVersion == pod.ResourceVersion {
			return rec.refs[i].ref
		}
		// A newer resourceVersion: the rest, the field path included, stays.
		ref := *rec.refs[i].ref
		ref.ResourceVersion = pod.ResourceVersion
		rec.refs[i].ref = &ref
		return &ref
	}
	ref := newEventRef(pod, podKey, uid, "")
	if container != "" {
		ref.FieldPath = r.containerFieldPath(pod, container)
	}
	switch {
	case container != "" && list == "":
		// Implicit: not kept.
	case i >= 0:
		rec.refs[i] = eventRefRec{container: container, list: list, ref: ref}
	default:
		if rec.refs == nil {
			rec.refs = rec.refsArr[:0]
		}
		rec.refs = append(rec.refs, eventRefRec{container: container, list: list, ref: ref})
	}
	return ref
}

// isKeyOf reports whether key is podkey.Build(namespace, name), without building it.
func isKeyOf(key, namespace, name string) bool {
	return len(key) == len(namespace)+1+len(name) && key[:len(namespace)] == namespace &&
		key[len(namespace)] == '/' && key[len(namespace)+1:] == name
}

// newEventRef is the object an event is recorded about: the pod, as ref.GetReference makes it (kind,
// API version, namespace, name, UID and the resourceVersion of the pod the kubelet holds), or,
// for a container event, the kubelet's GenerateContainerRef: the same with the container's field
// path, spec.containers{name} or spec.initContainers{name}. pod is nil for a pod known only to
// the runtime; the kubelet then rebuilds a pod without containers from the container's labels,
// which gives the field path "implicitly required container <name>".
func newEventRef(pod *v1.Pod, podKey string, uid types.UID, container string) *v1.ObjectReference {
	namespace, name, _ := strings.Cut(podKey, "/")
	ref := &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: namespace, Name: name, UID: uid}
	if pod != nil {
		ref.ResourceVersion = pod.ResourceVersion
	}
	if container != "" {
		ref.FieldPath = containerFieldPath(pod, container)
	}
	return ref
}

// containerFieldPath is containerFieldPath(pod, container), remembered for the containers
// the spec names: the pods of a node repeat a few names ("spec.containers{app}"), and the
// first event about each pod's container built the path anew.
func (r *Runtime) containerFieldPath(pod *v1.Pod, container string) string {
	list := containerList(pod, container)
	if list == "" {
		return containerFieldPath(pod, container)
	}
	k := fieldPathKey{list, container}
	if path, ok := r.fieldPaths[k]; ok {
		return path
	}
	path := containerFieldPath(pod, container)
	keepMemo(&r.fieldPaths, k, path)
	return path
}

// fieldPathKey is what a container's field path is made of.
type fieldPathKey struct{ list, container string }

// containerFieldPath is the kubelet's fieldPath of a container in pod.
func containerFieldPath(pod *v1.Pod, container string) string {
	if list := containerList(pod, container); list != "" {
		return list + "{" + container + "}"
	}
	return implicitContainer + container
}

// containerList is the field of pod's spec that names container: "spec.containers",
// "spec.initContainers" or "spec.ephemeralContainers", or "" when none does (or pod is nil).
func containerList(pod *v1.Pod, container string) string {
	if pod == nil || container == "" {
		return ""
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == container {
			return "spec.containers"
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == container {
			return "spec.initContainers"
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == container {
			return "spec.ephemeralContainers"
		}
	}
	return ""
}

// implicitContainer begins the field path of a container the pod's spec does not name.
const implicitContainer = "implicitly required container "

// Status answers the CRI Status call the kubelet's updateRuntimeUp makes every 5s: nil while the
// runtime answers, an error wrapping ErrRuntimeDown while it is down.
func (r *Runtime) Status() error {
	now := r.clock.Now()
	r.applyDue(now)
	if err := r.checkUp(now); err != nil {
		return fmt.Errorf("runtime status: %w", err)
	}
	return nil
}

// PodName returns the namespace and name the runtime's sandboxes carry for the pod (the CRI's
// sandbox metadata), without a runtime call's side effects: what names a pod the kubelet knows
// from its directory alone; false when the runtime has no record of it.
func (r *Runtime) PodName(uid types.UID) (namespace, name string, ok bool) {
	rec, ok := r.pods[uid]
	if !ok {
		return "", "", false
	}
	return rec.namespace, rec.name, true
}
