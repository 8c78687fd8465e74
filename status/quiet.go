package status

// VersionedPods is a PodManager that numbers its changes: two calls of Version that return the
// same number have, between them, the same pods, mirror pods and UID translations. The kubelet's
// pod manager has it; with it a full batch that can prove nothing changed since a full batch that
// wrote nothing writes nothing without looking at every status.
type VersionedPods interface {
	Version() uint64
}

// quietBatch is what a full batch that wrote nothing read: the change numbers of the cached
// statuses, of the versions written and of the pod manager.
//
// A full batch decides each status from the status (its version, whether its pod finished), the
// version last written for its API object, and the pod manager's copies (the mirror pod, the API
// status to reconcile with, a deletion). None of those moved since a full batch that picked
// nothing when the three numbers did not: that batch's decisions would all be the same no, and
// its clean-up of forgotten versions finds nothing new. A pending batch is never skipped: it
// follows a status change, which moves the first number.
type quietBatch struct {
	ok                      bool
	statuses, written, pods uint64
}

// podsVersion returns the pod manager's change number, and false if it has none.
func (m *Manager) podsVersion() (uint64, bool) {
	v, ok := m.pods.(VersionedPods)
	if !ok {
		return 0, false
	}
	return v.Version(), true
}

// quietFull reports whether a full batch now would read what the last full batch that wrote
// nothing read.
func (m *Manager) quietFull() bool {
	if !m.quiet.ok {
		return false
	}
	pods, _ := m.podsVersion()
	return m.quiet == quietBatch{ok: true, statuses: m.version, written: m.written, pods: pods}
}

// recordFull remembers what a full batch read, if it picked nothing and the pod manager numbers
// its changes.
func (m *Manager) recordFull(picked int) {
	pods, ok := m.podsVersion()
	m.quiet = quietBatch{ok: ok && picked == 0, statuses: m.version, written: m.written, pods: pods}
}
