// Package podconfig merges the updates of every pod source into one stream of pod changes.
//
// It mirrors the kubelet's pkg/kubelet/config: config.go (PodConfig, the mux and podStorage) and the
// PodUpdate and PodOperation types of pkg/kubelet/types. Sources send full SETs; podStorage diffs
// each one against what that source sent before, by UID, and emits REMOVE, ADD, UPDATE, DELETE, the
// first-time empty ADD, then RECONCILE, as the kubelet's Incremental mode does.
package podconfig
