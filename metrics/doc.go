// Package metrics is the kubelet's Prometheus metrics (pkg/kubelet/metrics): the same family
// names, types, labels, stability levels and buckets, built on k8s.io/component-base/metrics as
// the kubelet's are.
//
// The kubelet registers its families once, in the process-wide legacyregistry. A simulator runs
// many kubelets in one process, so here every node owns a Registry: New registers the families
// in a registry of its own, and a node's /metrics serves only that registry.
//
// A Registry is written by its node's cores, from the one goroutine that drives them, through
// small typed methods (ObserveRelist, ObservePodWorker, SetPodCounts, ...), and read by the HTTP
// server from any goroutine; the collectors underneath are safe for that. What every relist
// records in its histograms, its last-seen gauge and its listings, and what every periodic pod
// sync records, waits in a few words of the Registry, under a lock, and reaches its collectors
// before any gather (pending.go; the running pods and containers gauges are set at once): a
// fleet node's relist, every second, then touches those words instead of a dozen cold
// collectors. Every duration comes from the clock the cores run on, so a replay on the virtual
// clock gives the same values every run.
package metrics
