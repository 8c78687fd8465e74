package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/api/podintern"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// entry is one stored version of an object. Its fields are immutable once stored: handlers copy
// obj before changing it, and raw is shared by every response and watch event that carries it.
type entry struct {
	obj runtime.Object // with TypeMeta and resourceVersion set
	// raw is obj encoded as JSON, or nil for an object of a resource whose encodings the store
	// does not keep (events: many, written once and seldom read back; pods, see
	// resource.encodesOnDemand) and for a version that only the watch history holds (lean);
	// encoded makes it again.
	raw []byte
	// size is the encoding's length, kept when raw is not: the watch history's bound counts it.
	size int
	// sum is a hash of the encoding (encodingSum), kept when summed by a current version that
	// keeps no raw but whose next write compares its own encoding with it (a pod's): sameEncoding
	// tells most writes apart by it without encoding the stored object again.
	sum    uint64
	summed bool
	// protoOf is the stored entry whose protobuf encoding this one, a write's answer that keeps
	// the JSON the stored entry does not (resource.encodesOnDemand), makes and shares: a pod
	// status write answered in protobuf and the watch event that carries it encode it once.
	protoOf *entry
	// keepsNone marks an entry that keeps no encoding of any kind, not even the protobuf one its
	// readers make (an event's): see protoEncoding.
	keepsNone bool
	// pb is obj in the protobuf envelope, made by the first answer or watch event that needs it
	// and shared by the others while they read it (sharedEncoding), as kube-apiserver's watch
	// cache encodes an event's object once per media type however many watchers it goes to.
	// Empty until then; an object nobody reads in protobuf costs nothing more. Only the current
	// version of an object shares it (see superseded), and an entry that keeps no encoding of any
	// kind (keepsNone) shares none either.
	pb sharedEncoding
	// js is obj encoded as JSON for a summed entry (a pod's current version), made by the first
	// JSON answer, list or watch event that reads it and shared by the others while they read
	// it, as pb is: a JSON reader encodes a version once however many read it at once, while a
	// version nobody reads as JSON (a replay fleet's pods) keeps only its size and sum. Dropped,
	// as pb is, once the version is superseded: the history's byte bound counts JSON it does not
	// keep. Only its envelope is used.
	js sharedEncoding
	// superseded is set once a later write replaced or deleted this version (or at once for a
	// deletion's own entry): from then on only the watch history holds it, whose byte bound
	// counts JSON, so it drops pb and its protobuf is made again for each reader.
	superseded atomic.Bool
}

func newEntry(obj runtime.Object, raw []byte) *entry {
	return &entry{obj: obj, raw: raw, size: len(raw)}
}

// summedEntry is the stored entry of obj, encoded as raw, for a resource whose current versions
// keep only the encoding's length and hash (resource.encodesOnDemand).
func summedEntry(obj runtime.Object, raw []byte) *entry {
	return &entry{obj: obj, size: len(raw), sum: encodingSum(raw), summed: true}
}

// encodingSeed seeds encodingSum. Its value, random in each process, decides nothing that can be
// observed: a sum only ever rules out equal encodings, and equal sums are checked byte by byte.
var encodingSeed = maphash.MakeSeed()

// encodingSum is the hash of an encoding that an entry keeping no raw keeps (entry.sum).
func encodingSum(raw []byte) uint64 { return maphash.Bytes(encodingSeed, raw) }

// sameEncoding reports whether raw is e's encoding, byte for byte: an update's check that it
// changes anything. A summed entry is encoded again only when the lengths and sums leave the
// question open, that is when the bytes are (all but certainly) equal: an update that changes
// nothing, which the kubelet's own checks make rare. An entry that keeps neither raw nor a sum
// (an event's) is always encoded again: its size may be that of other bytes than its encoding
// (an event loaded from a data directory counts the bytes on disk, which may spell the same
// value otherwise), so a length that differs proves nothing.
func (e *entry) sameEncoding(raw []byte) bool {
	if e.raw != nil {
		return bytes.Equal(raw, e.raw)
	}
	if e.summed && (len(raw) != e.size || encodingSum(raw) != e.sum) {
		return false
	}
	return bytes.Equal(raw, e.encodedForWrite())
}

// protoEncoding is an object in the protobuf envelope, and where in it the object's own message
// starts, which a list's items are made of (protoListBody).
type protoEncoding struct {
	envelope []byte
	// message is the offset of the object's message in envelope, 0 if not known.
	message int
}

func (e *entry) meta() metav1.Object { return mustMeta(e.obj) }

// encoded returns obj encoded as JSON for a reader: raw, or for an entry that does not keep it,
// the encoding made again, which a summed entry that is still current keeps (js) for the next
// reader. obj does not change once stored and encoding/json's output depends on the value alone
// (struct fields in order, map keys sorted), so it is the same bytes every time: the ones the
// write that stored it encoded. Two first readers at once may both encode it; one is kept.
func (e *entry) encoded() []byte {
	if e.raw != nil {
		return e.raw
	}
	if !e.summed {
		return e.encodeAgain()
	}
	if kept, ok := e.js.load(); ok {
		return kept.envelope
	}
	raw := e.encodeAgain()
	if e.superseded.Load() {
		return raw
	}
	return e.keepJSON(raw)
}

// keepJSON shares raw as the current version's JSON with later readers, unless another reader
// shared its own first, and returns the encoding to answer with. The caller saw e current; a
// supersede since then is undone here.
func (e *entry) keepJSON(raw []byte) []byte {
	enc, held := e.js.keep(protoEncoding{envelope: raw})
	if held != nil && e.superseded.Load() {
		// supersede ran between the caller's check and the swap: undo the swap. supersede sets
		// the flag before it clears js, so one of the two clears what the other left.
		e.js.unkeep(held)
	}
	return enc.envelope
}

// encodedForWrite is obj encoded as JSON for a write that reads the version it replaces (the
// no-op check, a JSON or merge patch's original): the kept encoding if there is one, else made
// again and not kept, since the write most often supersedes the version at once, and one that
// does not (a write that changes nothing, rare) is no reader the encoding would be kept for.
func (e *entry) encodedForWrite() []byte {
	if e.raw != nil {
		return e.raw
	}
	if kept, ok := e.js.load(); ok {
		return kept.envelope
	}
	return e.encodeAgain()
}

// encodeAgain encodes obj as JSON.
func (e *entry) encodeAgain() []byte {
	raw, err := json.Marshal(e.obj)
	if err != nil {
		// The write that stored obj encoded it; the same value cannot fail now.
		panic(fmt.Sprintf("encode stored %T %s again: %v", e.obj, e.meta().GetName(), err))
	}
	return raw
}

// protobuf is the entry's object in the protobuf envelope. Two first readers at once may both
// encode it; the encodings are the same and one is kept.
func (e *entry) protobuf() ([]byte, error) {
	enc, err := e.protoEncoding()
	if err != nil {
		return nil, err
	}
	return enc.envelope, nil
}

// protoMessage is the entry's object's own protobuf message, without the envelope: what a list's
// items are.
func (e *entry) protoMessage() ([]byte, error) {
	enc, err := e.protoEncoding()
	if err != nil {
		return nil, err
	}
	if enc.message == 0 {
		m, ok := e.obj.(interface{ Marshal() ([]byte, error) })
		if !ok {
			return nil, fmt.Errorf("%T has no protobuf encoding", e.obj)
		}
		return m.Marshal()
	}
	return enc.envelope[enc.message : len(enc.envelope)-len(envelopeTail)], nil
}

func (e *entry) protoEncoding() (protoEncoding, error) {
	if e.protoOf != nil {
		return e.protoOf.protoEncoding()
	}
	if enc, ok := e.pb.load(); ok {
		return enc, nil
	}
	raw, err := encodeProtobuf(e.obj)
	if err != nil {
		return protoEncoding{}, err
	}
	enc := protoEncoding{envelope: raw, message: messageOffset(raw, e.obj)}
	if e.keepsNone || e.superseded.Load() {
		// An event's entry keeps no encoding at all, and a superseded one keeps none beyond
		// the history's bound. A pod's current version shares its protobuf encoding though it
		// keeps no raw: the wire's watchers read protobuf, and it shares its JSON (js) only
		// once a JSON reader made it.
		return enc, nil
	}
	enc, held := e.pb.keep(enc)
	if held != nil && e.superseded.Load() {
		// supersede ran between the caller's check and the swap: undo the swap. supersede sets
		// the flag before it clears pb, so one of the two clears what the other left.
		e.pb.unkeep(held)
	}
	return enc, nil
}

// supersede marks e replaced by a later write and drops its protobuf encoding and the JSON a
// reader made of it. The caller holds the store's lock.
func (e *entry) supersede() {
	e.superseded.Store(true)
	e.pb.drop()
	e.js.drop()
}

// lean returns e without its encoding, superseded: what the watch history keeps of a version no
// write reads any more. Its encoding is made again (encoded) for a watch that lags or a list at
// an older resource version, which gives the same bytes. An entry that keeps no encoding is its
// own lean form.
func (e *entry) lean() *entry {
	if e.raw == nil && e.superseded.Load() {
		return e
	}
	l := &entry{obj: e.obj, size: e.size}
	l.superseded.Store(true)
	return l
}

// retire puts prev, the version a write just replaced, in its lean form in the history's event
// that wrote it, if the history still holds that event, and returns that form for the new
// event's prev. From then on only the history and readers that took prev before the write hold
// its encoding: the readers keep theirs as long as they read it; the history, bounded by
// historyBytes of encodings it counts but no longer keeps, keeps the decoded object alone, most
// of which (the spec, the metadata's maps) the next version shares. The caller holds the store's
// lock.
func (b *bucket) retire(prev *entry) *entry {
	lean := prev.lean()
	if lean == prev {
		return prev
	}
	rv, err := strconv.ParseUint(prev.meta().GetResourceVersion(), 10, 64)
	if err != nil {
		return lean
	}
	// The event that wrote prev carries prev's resource version; the history is in order of it.
	i := sort.Search(len(b.history), func(i int) bool { return b.history[i].rv >= rv })
	if i < len(b.history) && b.history[i].cur == prev {
		b.history[i].cur = lean
	}
	return lean
}

// event is one write as a watch sees it. prev is the state before a MODIFIED or DELETED write,
// so that a watch with a selector can turn an update that enters or leaves the selection into
// ADDED or DELETED, as the real server's watch cache does.
type event struct {
	typ  watch.EventType
	rv   uint64
	cur  *entry
	prev *entry
}

// bucket holds one resource's objects and its watch history.
type bucket struct {
	objects map[string]*entry // by namespace/name
	sorted  []string          // keys of objects in order; nil when it must be rebuilt
	history []event           // oldest first, at most store.historySize long
	// compacted is the resource version of the newest event dropped from history: a watch
	// resuming from an older version cannot be served and gets 410 Gone.
	compacted uint64
	// historyBytes is the encoded size of history's objects, at most store.historyBytes.
	historyBytes int64
	// expiry lists the writes of a resource whose objects expire (events); nil for the others.
	expiry *expiryQueue
	// changed wakes the watches of this resource at its next write. One per resource, not one
	// for the store: a fleet's thousands of Service, ConfigMap and Node watches are not all
	// woken, each to take the store's lock and find nothing, by every pod write.
	changed *broadcaster
}

// store is the object store shared by all handlers. Unlike the project's other cores, which one
// goroutine drives without locks, it is truly shared: net/http serves every request, watches
// included, on a goroutine of its own, and all of them read and write the store at once. So it is
// the documented exception and keeps one mutex, mu, taken by every method and by locked.
type store struct {
	historySize  int
	historyBytes int64
	resources    []*resource
	tracer       trace.Tracer // receives the pod writes' events; nil when the store has none
	order        traceOrder
	now          func() time.Time
	disk         *disk // nil when objects live only in memory

	// expiresAt is the earliest time an item of the expiry queues comes due (nil when they are
	// empty), and terminating is set while a namespace may be terminating: every request checks
	// both, and takes mu to expire objects or finalize namespaces only when one says there may be
	// work. Both change only under mu.
	expiresAt   atomic.Pointer[time.Time]
	terminating atomic.Bool

	// mu guards everything below. Its waiters take turns as kube-apiserver's API Priority and
	// Fairness would order their requests (internal/apf): a node's writes do not hold an
	// administrator's creates back, and one node's writes do not crowd out another's. Work
	// that no request classified (expiry, watches reading the history, start-up) is exempt.
	mu apf.Lock
	// traces are the trace events of the pod writes made since the lock was last taken, in
	// resource-version order; unlock emits them once it released the lock (traceOrder).
	traces *[]trace.Event
	// traceBatches counts the non-empty batches of traces cut at an unlock.
	traceBatches uint64
	rv           uint64
	rand         *rand.Rand
	buckets      map[string]*bucket
	// epoch counts CloseWatches calls; a watch that started in an older epoch ends.
	epoch uint64
	// intern makes the stored pods and events share the strings and the managed fields'
	// encodings that many of them repeat (podintern.Table.StoredPod, StoredEvent), and the
	// other typed objects their managed fields' encodings (StoredFields): the field
	// manager encodes every entry anew at every write, and a fleet's pods of one template, the
	// versions of one pod in the watch history, and the kubelets' events keep equal copies of
	// them otherwise. Objects loaded from the data directory, decoded anew, are interned too.
	intern *podintern.Table
	// keepHistoryEncodings keeps each version's JSON in the watch history after a later write
	// replaced it, as the store did before versions retired to their lean form, and the JSON of
	// the current versions of a resource that encodes on demand (pods); a test compares what
	// the two serve.
	keepHistoryEncodings bool
}

// internFields shares the managed fields' encodings of a typed object of a kind the table has no
// more to share of (a node's and a lease's, written at every heartbeat and renewal).
func (st *store) internFields(obj any) {
	if o, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if om, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok && len(om.ManagedFields) > 0 {
			om.ManagedFields = st.intern.StoredFields(om.ManagedFields)
		}
	}
}

// storeOptions configures a store.
type storeOptions struct {
	historySize  int
	historyBytes int64
	rand         *rand.Rand
	now          func() time.Time // when writes happen, for objects that expire
	tracer       trace.Tracer     // receives the pod writes' trace events (traceLater)
}

func newStore(o storeOptions) *store {
	st := &store{
		historySize: o.historySize, historyBytes: o.historyBytes, now: o.now, rand: o.rand, tracer: o.tracer,
		resources: resources(), buckets: map[string]*bucket{}, intern: podintern.New(),
	}
	for _, res := range st.resources {
		if res.view {
			continue // its objects live in another resource's bucket
		}
		b := &bucket{objects: map[string]*entry{}, changed: newBroadcaster()}
		if res.name == "events" {
			b.expiry = &expiryQueue{ttl: EventTTL}
		}
		st.buckets[res.name] = b
	}
	return st
}

func (st *store) currentRV() uint64 {
	st.lock()
	defer st.unlock()
	return st.rv
}

// lock takes mu for the store's own work, which is exempt and which no client gives up on: it
// waits with a context that never ends, so it always gets the lock.
func (st *store) lock() {
	_ = st.mu.Lock(context.Background(), apf.Class{})
}

// locked runs fn with the store locked, so that a read-check-write sequence is atomic, as
// exempt work: the store's own, or a request's that no class names.
func (st *store) locked(fn func() error) error {
	st.lock()
	defer st.unlock()
	return fn()
}

// lockedAs is locked for a request of class c, which waits for the lock in c's turn, made with
// ctx: if ctx ends while the request waits, fn never runs and the error is a
// *queueCancelledError (priority.go), as kube-apiserver ejects such a request from its queue.
func (st *store) lockedAs(ctx context.Context, c apf.Class, fn func() error) error {
	if err := st.mu.Lock(ctx, c); err != nil {
		return &queueCancelledError{err: err}
	}
	defer st.unlock()
	return fn()
}

// traceLater records ev, the trace event of a pod write just committed, for unlock to emit. The
// caller holds mu.
func (st *store) traceLater(ev trace.Event) {
	if st.traces == nil {
		st.traces = traceBatches.Get().(*[]trace.Event)
	}
	*st.traces = append(*st.traces, ev)
}

// unlock releases mu, then emits the trace events of the writes made under it and waits until
// the events of every write made before it released mu are out (traceOrder): a holder of the
// lock does not wait for the trace recorder's lock, and what a goroutine saw under the lock is in
// the trace before anything it does next.
func (st *store) unlock() {
	batch := st.traces
	st.traces = nil
	var ticket uint64
	if batch != nil {
		st.traceBatches++
		ticket = st.traceBatches
	}
	through := st.traceBatches
	st.mu.Unlock()
	st.order.emit(st.tracer, ticket, batch, through)
}

func objectKey(namespace, name string) string { return namespace + "/" + name }

// get returns the stored entry. The caller holds mu.
func (st *store) get(res *resource, namespace, name string) (*entry, bool) {
	e, ok := st.buckets[res.name].objects[objectKey(namespace, name)]
	return e, ok
}

// list returns the entries in namespace ("" for all) in key order, and the current resource
// version. The caller holds mu.
func (st *store) list(res *resource, namespace string) []*entry {
	b := st.buckets[res.name]
	if b.sorted == nil {
		b.sorted = make([]string, 0, len(b.objects))
		for k := range b.objects {
			b.sorted = append(b.sorted, k)
		}
		sort.Strings(b.sorted)
	}
	out := make([]*entry, 0, len(b.sorted))
	for _, k := range b.sorted {
		e := b.objects[k]
		if namespace != "" && e.meta().GetNamespace() != namespace {
			continue
		}
		out = append(out, e)
	}
	return out
}

// commit stores obj (or removes it for watch.Deleted) under a new resource version, records the
// watch event and wakes the watches of res. obj must be a fresh copy the caller gives away. The
// caller holds mu.
func (st *store) commit(res *resource, typ watch.EventType, obj runtime.Object, prev *entry) (*entry, error) {
	return st.commitEncoded(res, typ, obj, prev, nil)
}

// commitEncoded is commit of an object whose encoding the caller already made with the
// resource version it had then (an update's check that it changes anything): the new version is
// put in its place instead of encoding the object again, when withRV finds it. The caller gives
// encoded's bytes away with obj: they become the stored encoding, rewritten in place when the
// new version is as long as the old one (spliceRV).
func (st *store) commitEncoded(res *resource, typ watch.EventType, obj runtime.Object, prev *entry, encoded *entry) (*entry, error) {
	m := mustMeta(obj)
	before := m.GetResourceVersion()
	st.rv++
	m.SetResourceVersion(formatRV(st.rv))
	obj.GetObjectKind().SetGroupVersionKind(res.gvk())
	var raw []byte
	if encoded != nil && encoded.obj == obj && metadataFirst(obj) {
		raw = spliceRV(encoded.encoded(), before, m.GetResourceVersion())
	}
	if raw == nil {
		var err error
		if raw, err = json.Marshal(obj); err != nil {
			st.rv--
			return nil, fmt.Errorf("encode %s %s: %w", res.kind, m.GetName(), err)
		}
	}
	if typ != watch.Deleted {
		// Here, before the entry is stored, the object is still the caller's alone.
		switch o := obj.(type) {
		case *corev1.Pod:
			st.intern.StoredPod(o)
		case *corev1.Event:
			st.intern.StoredEvent(o)
		default:
			st.internFields(o)
		}
	}
	e := newEntry(obj, raw)
	b := st.buckets[res.name]
	stored := e
	switch {
	case typ == watch.Deleted:
	case b.expiry != nil:
		// An event is written once (a repeat patches its count) and read back only by a list or
		// watch of events, which none of a fleet's components make: its encoding is made again
		// for those rather than kept beside the object for the hour it lives. The caller's entry
		// keeps it for the write's own response.
		stored = &entry{obj: obj, size: len(raw), keepsNone: true}
	case res.encodesOnDemand && !st.keepHistoryEncodings:
		// The caller's entry keeps the encoding for the write's own response; the stored one
		// keeps its length and hash for the next write's comparison.
		stored = summedEntry(obj, raw)
		e.protoOf = stored
	}
	key := objectKey(m.GetNamespace(), m.GetName())
	if cur := b.objects[key]; prev != nil && cur != nil && cur != prev && cur.obj == prev.obj {
		// prev is the entry an earlier commit gave its caller (a pod's deletion that removes
		// it at once, after the write that marked it), which for a resource whose stored
		// entries keep less than the caller's is not the stored one: the stored one is what
		// the write supersedes and retires.
		prev = cur
	}
	if st.disk != nil {
		onDisk := raw
		if typ == watch.Deleted {
			onDisk = nil
		}
		if err := st.disk.write(res, key, onDisk, st.rv); err != nil {
			st.rv--
			return nil, err
		}
	}
	if typ == watch.Deleted {
		delete(b.objects, key)
		b.sorted = nil
	} else {
		if _, ok := b.objects[key]; !ok {
			b.sorted = nil
		}
		b.objects[key] = stored
	}
	if b.expiry != nil && typ != watch.Deleted {
		st.pushExpiry(b, key, st.rv)
	}
	if ns, ok := obj.(*corev1.Namespace); ok && typ != watch.Deleted && ns.Status.Phase == corev1.NamespaceTerminating {
		st.terminating.Store(true)
	}
	if prev != nil {
		prev.supersede()
		if !st.keepHistoryEncodings {
			prev = b.retire(prev)
		}
	}
	if typ == watch.Deleted {
		// Never a current version: the history keeps it without its encoding from the start.
		// The caller's entry keeps it for the write's own response.
		if st.keepHistoryEncodings {
			stored.supersede()
		} else {
			stored = e.lean()
		}
	}
	ev := event{typ: typ, rv: st.rv, cur: stored, prev: prev}
	b.history = append(b.history, ev)
	b.historyBytes += ev.size()
	if len(b.history) > st.historySize {
		b.dropOldest()
	}
	b.trimHistory(st.historyBytes)
	b.changed.fire()
	return e, nil
}

// since returns the events of res newer than rv, at most max of them, and the channel that is
// closed at res's next write. expired reports that events after rv were already dropped; closed
// reports that CloseWatches was called after the watch started in epoch.
func (st *store) since(res *resource, rv uint64, max int, epoch uint64) (evs []event, expired, closed bool, next <-chan struct{}) {
	st.lock()
	defer st.unlock()
	if st.epoch != epoch {
		return nil, false, true, nil
	}
	b := st.buckets[res.name]
	if rv < b.compacted {
		return nil, true, false, nil
	}
	i := sort.Search(len(b.history), func(i int) bool { return b.history[i].rv > rv })
	j := min(len(b.history), i+max)
	evs = append([]event(nil), b.history[i:j]...)
	return evs, false, false, b.changed.wait()
}

// closeWatches ends every open watch at its next read. The caller holds mu.
func (st *store) closeWatches() {
	st.epoch++
	for _, b := range st.buckets {
		b.changed.fire()
	}
}

// newUID returns a random RFC 4122 version 4 UUID drawn from the store's source. The caller
// holds mu.
func (st *store) newUID() types.UID {
	var b [16]byte
	_, _ = st.rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	// 8-4-4-4-12 hexadecimal digits, written in place: fmt would box each of the five parts.
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return types.UID(out[:])
}

// nameSuffix returns the 5 characters kube-apiserver appends to a generateName prefix, drawn
// from the same alphabet (no vowels, no look-alike digits). The caller holds mu.
func (st *store) nameSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[st.rand.Intn(len(alphabet))]
	}
	return string(b)
}

// mustMeta returns obj's object metadata; an object without it is a bug of the server.
func mustMeta(obj runtime.Object) metav1.Object { return registry.MustMeta(obj) }

// currentEpoch returns the CloseWatches count, for in-process readers of the history.
func (st *store) currentEpoch() uint64 {
	st.lock()
	defer st.unlock()
	return st.epoch
}

// metadataFirst reports whether obj is a typed object whose encoding starts with its kind,
// apiVersion and metadata, in the order of its fields, as every API type's does; not an
// unstructured object, whose keys are encoded in sorted order.
func metadataFirst(obj runtime.Object) bool {
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	t = t.Elem()
	return t.NumField() >= 2 && t.Field(0).Type == reflect.TypeFor[metav1.TypeMeta]() &&
		t.Field(1).Type == reflect.TypeFor[metav1.ObjectMeta]() && strings.Split(t.Field(1).Tag.Get("json"), ",")[0] == "metadata"
}

// withRV returns raw, a typed object (metadataFirst) encoded as JSON whose
// metadata.resourceVersion is from, with to in its place, or nil if from is empty or not where it
// should be. from must be the metadata's version: an object without one may carry the key
// further on (an event's involved object). The first key named resourceVersion in such an encoding is the metadata's: the
// object's kind and apiVersion come first, then its metadata, whose keys before resourceVersion
// (name, generateName, namespace, selfLink, uid) hold strings, in which a quote is escaped and so
// cannot end a key.
func withRV(raw []byte, from, to string) []byte {
	i := rvAt(raw, from)
	if i < 0 {
		return nil
	}
	out := make([]byte, 0, len(raw)-len(from)+len(to))
	out = append(out, raw[:i]...)
	out = append(out, to...)
	return append(out, raw[i+len(from):]...)
}

// spliceRV is withRV of raw that the caller gives away: a new version as long as from (nearly
// every write once the store's versions have as many digits as the object's last one) is
// written over from in raw itself, which it returns, rather than into a copy. An update's
// encoding is made for its check that it changes anything and then stored with its new
// version: one copy of the object's encoding a write fewer (a kubelet's status patch, a node's
// heartbeat, a lease's renewal).
func spliceRV(raw []byte, from, to string) []byte {
	if len(from) != len(to) {
		return withRV(raw, from, to)
	}
	i := rvAt(raw, from)
	if i < 0 {
		return nil
	}
	copy(raw[i:], to)
	return raw
}

// rvAt is where in raw the metadata's resourceVersion, from, starts, or -1 (withRV's rules).
func rvAt(raw []byte, from string) int {
	const key = `"resourceVersion":"`
	if from == "" {
		return -1
	}
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return -1
	}
	i += len(key)
	rest := raw[i:]
	if len(rest) <= len(from) || string(rest[:len(from)]) != from || rest[len(from)] != '"' {
		return -1
	}
	return i
}
