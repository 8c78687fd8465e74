// Package podconfig merges the updates of every pod source into one stream of pod changes.
//
// It mirrors the kubelet's pkg/kubelet/config: config.go (PodConfig, the mux and podStorage) and the
// PodUpdate and PodOperation types of pkg/kubelet/types, on the v1.35 line. Sources send full SETs;
// podStorage diffs each one against what that source sent before, by UID, and emits REMOVE, ADD,
// UPDATE, DELETE, the first-time empty ADD, then RECONCILE, as the kubelet's Incremental mode does.
//
// # Core and runner
//
// Storage is the core, the kubelet's podStorage: Merge(source, update) returns the updates to emit,
// in order, and Sync returns the snapshot the kubelet's Sync sends. It has no goroutines or
// channels and reads the time (for the kubernetes.io/config.seen annotation) from the clock in its
// options. The scenario engine calls it directly.
//
// Config is the runner, the kubelet's PodConfig with its mux: one unbuffered channel per source
// (Channel), one listener goroutine per source started by Run, and a 50-slot output (Updates). A
// whole merge and the delivery of its updates happen under one turn, so the updates of one merge are
// never interleaved with another's, and a full output blocks merging and then the sources, as in
// the kubelet.
//
// # What is compared
//
// A pod already stored is UPDATEd when its spec, labels, deletion timestamp, deletion grace period
// or non-local annotations change (reflect.DeepEqual semantics: nil and empty differ, except for
// annotations), DELETEd when that change carries a deletion timestamp, and RECONCILEd when only its
// status changed. The local annotations (config.source, config.mirror, config.seen) are ignored and
// survive updates. Nothing else in the metadata is compared.
//
// # Differences from the kubelet
//
//   - Storage keeps the sender's object read-only, with the annotations it sets kept beside it
//     (and, once a newer object came, the metadata the kubelet's stored object keeps from the
//     first one); the kubelet stores the sender's first object and annotates it in place, then
//     assigns a newer object's fields to it. What is emitted has the same values:
//     a copy of each pod, the sync side's own, as the kubelet's copyPods makes; but a pod whose
//     status alone changed since its last copy (a RECONCILE) gets a new Pod with a status of its
//     own that shares that copy's metadata and spec, where the kubelet deep-copies them again;
//     and every copy shares the managed fields' encodings (FieldsV1) with the source's object
//     (docs/design/008-shared-pods.md).
//   - Where the kubelet's order comes from a map (pods a SET removed, the pods of a snapshot), pods
//     are ordered by namespace, then name, then UID; snapshots list sources in name order.
//   - The zero Mode is Incremental rather than an invalid value, and an unknown Mode is an error
//     from NewStorage rather than a panic on the first merge.
//   - Config starts its listeners in Run, so every source must call Channel before Run.
//   - Nil pods in an update are skipped.
package podconfig
