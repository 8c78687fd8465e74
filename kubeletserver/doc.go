// Package kubeletserver is the kubelet's HTTP server (pkg/kubelet/server) for simulated nodes:
// /healthz with the kubelet's checks, /pods, /runningpods/, /configz, /metrics,
// /metrics/resource, /stats/summary and /containerLogs, plus exec, attach, port-forward and run,
// which answer that the simulated runtime does not support them.
//
// The server never touches a node's cores: they belong to the goroutine that drives them. That
// goroutine calls Capture after each pass and publishes the result on the node's Board; handlers
// read the latest Snapshot, which nothing mutates. A follower of a container log waits on the
// Board for the next snapshot.
//
// One node is served by NodeHandler at the kubelet's paths. Many nodes share one listener through
// Fleet, as KWOK's server does: /nodes/{node}/... reaches one node's paths, the pod-scoped paths
// (/containerLogs, /exec, ...) find the node that runs the pod, and /discovery/prometheus lists
// every node's /metrics for Prometheus' HTTP service discovery.
package kubeletserver
