package metrics

import (
	"math"
	"sync"

	dto "github.com/prometheus/client_model/go"
	compbasemetrics "k8s.io/component-base/metrics"
)

// pending holds what a node's relists recorded since the registry was last read: the relist
// interval and duration, the last-seen time, and the two listings' operations (count and
// duration); and the pod workers' periodic syncs' durations. A node relists every second, and in
// a fleet the prometheus objects those go to (two histograms and a gauge, a counter and a
// histogram for each listing, each object several cache lines) are cold by the node's next
// settle, after the other nodes' settles; a relist records into these few words, beside the rest
// of the Registry, instead. They reach the collectors before anything gathers the registry
// (Gatherer, Handler, Value), and a histogram's run of one value is handed over before a
// different value is observed, so each collector sees the same observations in the same order as
// when they were recorded at once: the same buckets, counts and sums.
//
// mu guards the pending values and the children kept with them: the node's goroutine records,
// and a gather (the kubelet server's, on another goroutine in run) hands them over.
type pending struct {
	mu sync.Mutex
	// interval and duration are kubelet_pleg_relist_interval_seconds and
	// kubelet_pleg_relist_duration_seconds.
	interval, duration sameValues
	// lastSeen is kubelet_pleg_last_seen_seconds' value, set when seen is true.
	lastSeen float64
	seen     bool
	// listings are list_podsandbox and list_containers, which every relist's listing records.
	listings [2]pendingOp
	// syncs are kubelet_pod_worker_duration_seconds' sync series, which every pod's periodic
	// sync records (its count is nil: the family is a histogram alone).
	syncs pendingOp
}

// sameValues are n observations of the value v, not yet made.
type sameValues struct {
	v float64
	n uint64
}

// pendingOp is one operation's observations not yet made: n calls, each of duration v seconds,
// none failed. count and duration are the operation's children, created at its first call (as
// WithLabelValues would create them then); count is nil for an operation counted by its
// histogram alone.
type pendingOp struct {
	sameValues
	count    compbasemetrics.CounterMetric
	duration compbasemetrics.ObserverMetric
}

// listingSlot is the pending slot of a listing operation, or -1 for the others, which are
// recorded at once.
func listingSlot(operation string) int {
	switch operation {
	case "list_podsandbox":
		return 0
	case "list_containers":
		return 1
	}
	return -1
}

// add records one observation of v, first handing the pending run to h when v is another value.
// The caller holds the lock.
func (s *sameValues) add(v float64, h compbasemetrics.ObserverMetric) {
	if s.n > 0 && math.Float64bits(s.v) != math.Float64bits(v) {
		s.flush(h)
	}
	s.v = v
	s.n++
}

// flush observes the pending run into h. The caller holds the lock.
func (s *sameValues) flush(h compbasemetrics.ObserverMetric) {
	for range s.n {
		h.Observe(s.v)
	}
	s.n = 0
}

// add records one call of d seconds, first handing the pending calls over when they took another
// time. The caller holds the lock.
func (o *pendingOp) add(d float64) {
	if o.n > 0 && math.Float64bits(o.v) != math.Float64bits(d) {
		o.flush()
	}
	o.v = d
	o.n++
}

// flush hands an operation's pending calls to its children. The caller holds the lock.
func (o *pendingOp) flush() {
	if o.n == 0 {
		return
	}
	if o.count != nil {
		o.count.Add(float64(o.n))
	}
	o.sameValues.flush(o.duration)
}

// flushPending hands every pending observation to its collector, before a gather reads them.
func (r *Registry) flushPending() {
	p := &r.pending
	p.mu.Lock()
	defer p.mu.Unlock()
	p.interval.flush(r.f.plegRelistInterval)
	p.duration.flush(r.f.plegRelistDuration)
	if p.seen {
		r.f.plegLastSeen.Set(p.lastSeen)
		p.seen = false
	}
	for i := range p.listings {
		p.listings[i].flush()
	}
	p.syncs.flush()
}

// flushingRegistry is a node's registry as its readers gather it: the pending observations
// first.
type flushingRegistry struct {
	compbasemetrics.KubeRegistry
	r *Registry
}

// Gather hands the pending observations over, then gathers.
func (f flushingRegistry) Gather() ([]*dto.MetricFamily, error) {
	f.r.flushPending()
	return f.KubeRegistry.Gather()
}
