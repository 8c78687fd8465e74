package podvalidation

import "strconv"

// Subset names a set of pod checks: which ones run, and how a shared one is worded.
type Subset int

const (
	// APIServer is the fake API server's subset: object metadata (name, namespace, labels),
	// container names, images and port numbers, the restart and DNS policies, the active deadline
	// and the node name.
	APIServer Subset = iota
	// StaticPod is the kubelet's subset for static pods: everything APIServer checks, with the API
	// server's full object metadata rules, plus volumes, volume mounts, container policies, ports,
	// resources and probes, sidecar rules, host-network ports, the DNS config, the termination
	// grace period and the ban on ephemeral containers at creation.
	StaticPod
)

// String returns the subset's name, or "Subset(n)" for a value outside the enum.
func (s Subset) String() string {
	switch s {
	case APIServer:
		return "APIServer"
	case StaticPod:
		return "StaticPod"
	}
	return "Subset(" + strconv.Itoa(int(s)) + ")"
}
