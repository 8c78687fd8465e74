package housekeeping

// Versioned is a component that numbers its changes: two calls of Version that return the same
// number have, between them, the same answers to everything housekeeping asks of it, and the
// clean-ups housekeeping asks of it would find nothing new. The pod manager, the pod workers, the
// status manager and the prober manager have it.
type Versioned interface {
	Version() uint64
}

// VersionedRuntime is a runtime that numbers its states, as the fake runtime's StateVersion does:
// two calls that return the same number have, between them, the same listing.
type VersionedRuntime interface {
	StateVersion() uint64
}

// components are the change numbers of the pod manager, the pod workers, the status manager and
// the prober (zero without one).
type components struct {
	pods, workers, status, prober uint64
}

// stamp is what a pass that did nothing saw: the components' numbers before it (which it did not
// move) and the runtime's number of the listing it read.
type stamp struct {
	components components
	runtime    uint64
}

// versionReader reads the change numbers of the components a pass reads.
//
// A pass is a function of what it reads: the pod manager's pods and mirror pods, what the
// workers answer, the runtime's listing, the status manager's phases and statuses, the prober's
// workers. When none of their numbers moved since a pass that traced nothing, found no orphaned
// worker (which SyncKnownPods drives again at every pass) and moved no number itself, the next
// pass would read the same, do nothing and set the same pod counts: it is skipped, but for the
// runtime listing (its error, its operation metrics) and the crash-loop back-off's collection,
// which depends on the time alone. A change is never missed, as every change moves a number.
type versionReader struct {
	pods, workers, status, prober Versioned
	rt                            VersionedRuntime
}

// newVersionReader returns the reader of opts' components, or nil when one of them has no
// numbers: a pass then always runs in full.
func newVersionReader(opts Options) *versionReader {
	var r versionReader
	var ok [4]bool
	r.pods, ok[0] = opts.Pods.(Versioned)
	r.workers, ok[1] = opts.Workers.(Versioned)
	r.status, ok[2] = opts.Status.(Versioned)
	r.rt, ok[3] = opts.Runtime.(VersionedRuntime)
	if opts.Prober != nil {
		v, isVersioned := opts.Prober.(Versioned)
		if !isVersioned {
			return nil
		}
		r.prober = v
	}
	for _, o := range ok {
		if !o {
			return nil
		}
	}
	return &r
}

// read returns the components' numbers now.
func (r *versionReader) read() components {
	c := components{pods: r.pods.Version(), workers: r.workers.Version(), status: r.status.Version()}
	if r.prober != nil {
		c.prober = r.prober.Version()
	}
	return c
}

// runtime returns the runtime's state number now.
func (r *versionReader) runtime() uint64 { return r.rt.StateVersion() }
