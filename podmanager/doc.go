// Package podmanager holds the kubelet's desired pod set: every pod from config, with static pods
// and their mirror pods linked by full name.
//
// It mirrors the kubelet's pkg/kubelet/pod/pod_manager.go (basicManager). The sync loop adds,
// updates and removes pods as config changes; housekeeping reads the whole set; the pod workers'
// callers resolve a pod to its mirror pod and back. A mirror pod is never run: it is the API
// object that shows a static pod's status, and the manager translates its UID to the static
// pod's.
//
// Manager is a core: it is driven by one goroutine and is not safe for concurrent use. It keeps
// the very pods it is given, as the kubelet's pod manager does, and never changes one (an update
// replaces it): the pods handed to it and the pods it returns are read-only, shared with the pod
// workers and everyone else who got them from PodConfig (docs/design/008-shared-pods.md). A copy
// on every store was a third copy of each pod; a copy on every read made housekeeping, which reads
// every pod every 2s, the most expensive step of a replay. Lists come back sorted by namespace and name, and orphaned mirror
// full names sorted, so that what reaches the trace is the same on every run.
package podmanager
