// Package kubeletserver is the kubelet's HTTP server (pkg/kubelet/server) for simulated nodes:
// /healthz with the kubelet's checks, /pods, /runningpods/, /configz, /metrics,
// /metrics/resource, /stats/summary and /containerLogs, plus exec, attach, port-forward and run,
// which answer that the simulated runtime does not support them.
//
// The server never touches a node's cores: they belong to the goroutine that drives them. A
// handler asks the node's Board for a Snapshot, which nothing mutates: the latest if it is fresh,
// otherwise one the driving goroutine captures between its passes when the Board asks it, as the
// kubelet's handlers read the live state when a request comes. A follower of a container log
// registers with the Board, so that the driver publishes after its passes, and waits for the next
// snapshot.
//
// One node is served by NodeHandler at the kubelet's paths, each node on its own listener. With
// an Auth, every request is first authenticated and authorized as the kubelet's auth filter does
// (pkg/kubelet/server/auth.go and cmd/kubelet/app/auth.go): a client certificate, a bearer token
// through a TokenReview, or anonymous; then AlwaysAllow, or a SubjectAccessReview of the
// subresource of nodes/<node> the path maps to (AttributesFor).
package kubeletserver
