// Package kubelet assembles one simulated kubelet's sync side from its cores.
//
// It mirrors the part of the kubelet's NewMainKubelet that builds the pod manager, the container
// runtime, the PLEG and pod cache, the work queue, the pod workers, the status manager, the
// mirror client, the pod sync functions, housekeeping, the runtime state, the node status, the
// admit handlers and the sync loop, and wires each to the small interfaces the others declare.
// Nothing else constructs its siblings, and it starts no goroutine. The run command wraps the result in runners on the real
// clock; the scenario engine drives it on a virtual one. Both build it here, so the two modes
// cannot drift apart.
//
// Its configuration is one config.Config (package kubelet/config), taken whole, as
// `run --config` and a scenario's settings make it; the crash-loop back-off and the image pull
// slots are derived from it here.
//
// It only wires: no behaviour lives here. Where two components need each other (the pod workers
// call the sync functions, which write to the status manager, which asks the pod workers whether a
// pod may still run containers) the cycle is broken here with a function that reaches the pod
// workers once they exist.
package kubelet
