package podconfig

import "strconv"

// Mode is how Storage turns the changes of one merge into updates. It mirrors the kubelet's
// PodConfigNotificationMode on the v1.35 line. The kubelet always runs in Incremental; the two
// snapshot modes exist because the v1.35 PodConfig still offers them and its tests exercise them.
//
// Unlike the kubelet, whose zero value is the invalid PodConfigNotificationUnknown, the zero value
// here is Incremental, so an options struct left empty gets what the kubelet uses.
type Mode int

// The modes.
const (
	// Incremental emits REMOVE, ADD, UPDATE, DELETE, the first-time empty ADD and RECONCILE.
	Incremental Mode = iota
	// Snapshot emits one SET of every source's pods whenever anything but a status changed.
	Snapshot
	// SnapshotAndUpdates emits a SET of every source's pods when pods came or went, then UPDATE
	// and DELETE; status-only changes are dropped.
	SnapshotAndUpdates
)

// String returns the mode's name, or "Mode(n)" for a value outside the enum.
func (m Mode) String() string {
	switch m {
	case Incremental:
		return "Incremental"
	case Snapshot:
		return "Snapshot"
	case SnapshotAndUpdates:
		return "SnapshotAndUpdates"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// valid reports whether m is one of the modes.
func (m Mode) valid() bool {
	return m >= Incremental && m <= SnapshotAndUpdates
}
