package podconfig

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// EventRecorder receives the Kubernetes events Storage records. client-go's record.EventRecorder
// satisfies it.
type EventRecorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{})
}

// StorageOptions configures a Storage.
type StorageOptions struct {
	// Mode selects which updates a merge emits. The zero value is Incremental.
	Mode Mode
	// Clock stamps the kubernetes.io/config.seen annotation of new pods. Required.
	Clock clock.PassiveClock
	// Tracer receives an event for every emitted update and every rejected input. Required; use
	// trace.Discard when nobody listens.
	Tracer trace.Tracer
	// Recorder receives the Warning event for a pod dropped as a duplicate. Nil drops the events.
	Recorder EventRecorder
}

// Errors returned by NewStorage and New for invalid options.
var (
	// ErrUnknownMode means StorageOptions.Mode is not one of the modes.
	ErrUnknownMode = errors.New("unknown notification mode")
	// ErrNoClock means StorageOptions.Clock is nil.
	ErrNoClock = errors.New("clock is required")
	// ErrNoTracer means StorageOptions.Tracer is nil.
	ErrNoTracer = errors.New("tracer is required")
)

// validate checks the options up front, so that Merge never meets a bad mode or a nil clock.
func (o StorageOptions) validate() error {
	if !o.Mode.valid() {
		return fmt.Errorf("mode %v: %w", o.Mode, ErrUnknownMode)
	}
	if o.Clock == nil {
		return ErrNoClock
	}
	if o.Tracer == nil {
		return ErrNoTracer
	}
	return nil
}

// seenTimeFormat is the kubelet's RFC3339NanoFixed: always nine fractional digits.
const seenTimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Storage is the kubelet's podStorage: the pods of every source, keyed by UID within each source,
// and the diff that turns each incoming Update into the updates the sync loop sees.
//
// Storage is not safe for concurrent use; Config serialises calls to it. The pods a source sends
// are read-only: Storage never writes to them. Where the kubelet stores a source's object and
// annotates it in place, Storage keeps the object the source sent last and its own annotations
// beside it (storedPod), with the metadata the kubelet's object keeps from the first object once
// a newer one came (docs/design/008-shared-pods.md). Every pod it returns is a copy, as the
// kubelet's copyPods makes: the sync side holds those, and the sources' objects stay the sources'.
// Unlike the kubelet's deep copies, a copy shares the managed fields' encodings with the source's
// object, which nobody writes, and copies of one pod share the metadata and spec of generations
// whose status alone changed (copyOut).
type Storage struct {
	opts StorageOptions
	// pods maps a source name to that source's pods by UID.
	pods map[string]map[types.UID]*storedPod
	// seen holds every source that has sent at least one SET.
	seen sets.Set[string]
	// sources holds every configured source (Register); it only grows.
	sources sets.Set[string]
	// names holds, per source, filterDuplicates' map, empty between two calls.
	names map[string]*nameSet
	// lastSet holds, per source, the objects of its last merge when that was a SET that stored
	// each of them (followsLastSet).
	lastSet map[string][]*v1.Pod
}

// followsLastSet reports whether pods, a SET from source, can be merged in place: the source's
// last merge was a SET that stored each of its objects (no nil entry, no duplicate name or UID),
// and pods has, at each position, the same object or another object with the same UID, name and
// namespace. Such a SET keeps the source's UIDs and full names, so that it filters no duplicate,
// adds and removes nothing, and compares only the objects that are new.
func (s *Storage) followsLastSet(source string, pods []*v1.Pod) bool {
	last, ok := s.lastSet[source]
	if !ok || len(last) != len(pods) {
		return false
	}
	for i, p := range pods {
		if p == last[i] {
			continue
		}
		if p == nil || p.UID != last[i].UID || p.Name != last[i].Name || p.Namespace != last[i].Namespace {
			return false
		}
	}
	return true
}

// mergeInPlace merges pods, a SET that follows the source's last SET (followsLastSet), into the
// source's stored pods as updatePods would: the objects received last time for their UID are
// unchanged, each other one is compared with the stored pod.
func (s *Storage) mergeInPlace(source string, pods []*v1.Pod, c *changes) {
	last, stored := s.lastSet[source], s.pods[source]
	for i, ref := range pods {
		if ref == last[i] {
			continue // the object sent last for its UID
		}
		last[i] = ref
		existing := stored[ref.UID]
		c.note(existing.checkAndUpdate(ref), existing)
	}
}

// NewStorage returns an empty Storage, or an error naming the first invalid option.
func NewStorage(opts StorageOptions) (*Storage, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("invalid pod config options: %w", err)
	}
	return &Storage{
		opts:    opts,
		pods:    make(map[string]map[types.UID]*storedPod),
		lastSet: make(map[string][]*v1.Pod),
		seen:    sets.New[string](),
		sources: sets.New[string](),
	}, nil
}

// Register adds source to the configured sources that SeenAllSources waits for. It is the
// bookkeeping half of the kubelet's PodConfig.Channel. An empty name panics, as the kubelet's does.
func (s *Storage) Register(source string) {
	if source == "" {
		panic("podconfig: Channel given an empty name")
	}
	s.sources.Insert(source)
}

// SeenAllSources reports whether every configured source is in seen (the sources the caller has
// read an update from) and has sent this Storage at least one SET. With no configured sources it
// is true; on a nil Storage it is false, as in the kubelet.
func (s *Storage) SeenAllSources(seen sets.Set[string]) bool {
	if s == nil {
		return false
	}
	// A walk, not a sorted list: the sync loop asks at every housekeeping tick.
	for source := range s.sources {
		if !seen.Has(source) || !s.seen.Has(source) {
			return false
		}
	}
	return true
}

// Sync returns a SET from AllSource carrying a copy of every pod of every source. The kubelet sends
// its pods in map order; here they are ordered by source, then namespace/name, then UID.
func (s *Storage) Sync() Update {
	u := Update{Op: SET, Source: AllSource, Pods: s.mergedState()}
	s.traceUpdate(u, "podStorage.sync")
	return u
}

// mergedState returns copies (copyOut) of every stored pod in a fixed order: source, namespace,
// name, UID.
func (s *Storage) mergedState() []*v1.Pod {
	n := 0
	for _, pods := range s.pods {
		n += len(pods)
	}
	out := make([]*v1.Pod, 0, n)
	var stored []*storedPod
	for _, source := range sortedKeys(s.pods) {
		stored = stored[:0]
		for _, p := range s.pods[source] {
			stored = append(stored, p)
		}
		sortStored(stored)
		for _, p := range stored {
			out = append(out, s.copyOut(source, p))
		}
	}
	return out
}

// changes are the five lists one merge produces. They point at stored pods (or, for a UID sent
// twice in one SET, at a pod that was stored and then replaced) and are copied only when the
// merge emits them, so every emitted pod shows its state at the end of the merge, as in the kubelet.
type changes struct {
	adds, updates, deletes, removes, reconciles []*storedPod
}

// note records the stored pod under what checkAndUpdate found it to be; unchanged is no change.
func (c *changes) note(o outcome, existing *storedPod) {
	switch o {
	case update:
		c.updates = append(c.updates, existing)
	case reconcile:
		c.reconciles = append(c.reconciles, existing)
	case gracefulDelete:
		c.deletes = append(c.deletes, existing)
	}
}

// Merge applies u, sent by source, and returns the updates the kubelet's podStorage would emit for
// it, in emission order for the mode (Incremental: REMOVE, ADD, UPDATE, DELETE, the first-time
// empty ADD, RECONCILE). It never modifies u or its pods, and every returned pod is a copy with a
// status of its own (copyOut says what it shares).
// A source must not change an object after sending it (send a new one instead): an object
// received again is taken as unchanged without being compared.
//
// ADD, UPDATE and DELETE inputs are handled alike and merged into what source already has; REMOVE
// drops pods by UID; SET replaces everything source has and marks it seen. An unknown Op changes
// nothing and emits nothing. Pods removed by a SET are ordered by namespace/name, then UID (the
// kubelet's order is random).
func (s *Storage) Merge(source string, u Update) []Update {
	seenBefore := s.seen.Has(source)
	if u.Op == SET && seenBefore && s.followsLastSet(source, u.Pods) {
		// The objects of the source's last SET, some perhaps replaced by newer objects of the
		// same pods: the file source sends the very same SET every 20s, the api source one with
		// a new object after a watch event. A full merge would build the same map again.
		var c changes
		s.mergeInPlace(source, u.Pods, &c)
		return s.emit(source, false, &c)
	}
	delete(s.lastSet, source)
	pods := s.pods[source]
	if pods == nil {
		pods = make(map[types.UID]*storedPod)
	}
	var c changes
	switch u.Op {
	case ADD, UPDATE, DELETE:
		s.updatePods(source, u.Pods, pods, pods, &c)
	case REMOVE:
		for _, ref := range u.Pods {
			if ref == nil {
				continue
			}
			if existing, ok := pods[ref.UID]; ok {
				delete(pods, ref.UID)
				c.removes = append(c.removes, existing)
			}
		}
	case SET:
		s.seen.Insert(source)
		old := pods
		pods = make(map[types.UID]*storedPod, len(u.Pods))
		s.updatePods(source, u.Pods, old, pods, &c)
		for uid, existing := range old {
			if _, ok := pods[uid]; !ok {
				c.removes = append(c.removes, existing)
			}
		}
		sortStored(c.removes)
		if len(pods) == len(u.Pods) {
			// No nil entry, no duplicate name or UID: each of the SET's objects is stored, and
			// is the object sent last for its UID.
			s.lastSet[source] = slices.Clone(u.Pods)
		}
	default:
		s.opts.Tracer.Emit(trace.Event{
			Component: trace.PodConfig,
			Event:     trace.KindError,
			Op:        u.Op.String(),
			Source:    source,
			Reason:    "InvalidOp",
			Message:   "received invalid update type " + u.Op.String(),
			Func:      "podStorage.merge",
		})
		return nil
	}
	s.pods[source] = pods
	firstSet := !seenBefore && s.seen.Has(source)
	return s.emit(source, firstSet, &c)
}

// emit turns the changes of one merge into updates for the configured mode and traces each one.
func (s *Storage) emit(source string, firstSet bool, c *changes) []Update {
	var out []Update
	add := func(op Op, pods []*storedPod) {
		out = append(out, Update{Op: op, Source: source, Pods: s.copyPods(source, pods)})
	}
	snapshot := func() {
		out = append(out, Update{Op: SET, Source: source, Pods: s.mergedState()})
	}
	switch s.opts.Mode {
	case Incremental:
		if len(c.removes) > 0 {
			add(REMOVE, c.removes)
		}
		if len(c.adds) > 0 {
			add(ADD, c.adds)
		}
		if len(c.updates) > 0 {
			add(UPDATE, c.updates)
		}
		if len(c.deletes) > 0 {
			add(DELETE, c.deletes)
		}
		// The first SET of a source always reaches the kubelet, even when it changed nothing
		// visible, because reading any update from a source is how the kubelet learns the
		// source is ready.
		if firstSet && len(c.adds) == 0 && len(c.updates) == 0 && len(c.deletes) == 0 {
			add(ADD, nil)
		}
		if len(c.reconciles) > 0 {
			add(RECONCILE, c.reconciles)
		}
	case SnapshotAndUpdates:
		if len(c.removes) > 0 || len(c.adds) > 0 || firstSet {
			snapshot()
		}
		if len(c.updates) > 0 {
			add(UPDATE, c.updates)
		}
		if len(c.deletes) > 0 {
			add(DELETE, c.deletes)
		}
	case Snapshot:
		if len(c.updates) > 0 || len(c.deletes) > 0 || len(c.adds) > 0 || len(c.removes) > 0 || firstSet {
			snapshot()
		}
	}
	for _, u := range out {
		s.traceUpdate(u, "podStorage.merge")
	}
	return out
}

// traceUpdate records one emitted update. A single-pod update also names the pod's UID, so that a
// static pod replaced under the same name (REMOVE then ADD with a new UID) is visible in the trace.
func (s *Storage) traceUpdate(u Update, fn string) {
	names := make([]string, len(u.Pods))
	for i, p := range u.Pods {
		names[i] = podkey.Of(p)
	}
	e := trace.Event{
		Component: trace.PodConfig,
		Event:     trace.KindUpdate,
		Op:        u.Op.String(),
		Source:    u.Source,
		Pods:      names,
		Func:      fn,
	}
	if len(u.Pods) == 1 {
		e.UID = string(u.Pods[0].UID)
	}
	s.opts.Tracer.Emit(e)
}

// copyPods copies (copyOut) pods of source into a slice that is never nil: the kubelet's empty
// ADD carries an empty, not a nil, list.
func (s *Storage) copyPods(source string, pods []*storedPod) []*v1.Pod {
	out := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		out[i] = s.copyOut(source, p)
	}
	return out
}

// copyOut returns the copy of p, a pod of source, that a merge emits: the kubelet's copyPods, a
// deep copy (storedPod.deepCopy: the managed fields' encodings are shared). The copy is the sync
// side's, and no longer the source's. What the sync side holds is read-only by contract
// (docs/design/008-shared-pods.md), so a pod whose metadata and spec did not change since its
// last copy, one whose status alone changed (a RECONCILE after each of the kubelet's own status
// writes), gets a new Pod that shares the last copy's metadata and spec and has a copy of its own
// of the status: the same values as a deep copy, without a second copy of them for every
// generation of the pod the sync side still holds (the pod workers and the volume manager keep
// the one they were handed, the pod manager the newest).
func (s *Storage) copyOut(source string, p *storedPod) *v1.Pod {
	if s.pods[source][p.ref.UID] != p {
		// Not the stored pod (removed, or replaced within the merge): nothing to share or keep.
		return p.deepCopy(source)
	}
	var out *v1.Pod
	if p.copy != nil {
		out = &v1.Pod{TypeMeta: p.copy.TypeMeta, ObjectMeta: p.copy.ObjectMeta, Spec: p.copy.Spec}
		p.ref.Status.DeepCopyInto(&out.Status)
	} else {
		out = p.deepCopy(source)
	}
	p.copy = out
	return out
}

// sortStored orders stored pods by namespace, name and UID, the stable order used wherever the
// kubelet's order comes from a map.
func sortStored(pods []*storedPod) {
	slices.SortFunc(pods, func(a, b *storedPod) int {
		am, bm := a.objectMeta(), b.objectMeta()
		return cmp.Or(
			cmp.Compare(am.Namespace, bm.Namespace),
			cmp.Compare(am.Name, bm.Name),
			cmp.Compare(am.UID, bm.UID),
		)
	})
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
