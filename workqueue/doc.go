// Package workqueue is the kubelet's timestamped work queue: the set of pod UIDs the sync loop
// should sync again, each with the instant it becomes due.
//
// It mirrors pkg/kubelet/util/queue (basicWorkQueue). Pod workers put a UID back with a delay
// after each sync (a resync, an error retry, a back-off expiry), and the sync loop's one-second
// ticker takes every due UID with GetWork. Enqueue overwrites an earlier entry for the same UID,
// even one that was due sooner, and GetWork returns only UIDs due strictly before now, so a UID
// queued with delay 0 is returned only once the clock has moved on. The one deliberate difference
// is order: the kubelet returns due UIDs in map order, Queue returns them sorted so that replays
// are deterministic.
package workqueue
