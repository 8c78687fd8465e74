// Package node assembles one simulated kubelet's sync side from its cores.
//
// It mirrors the part of the kubelet's NewMainKubelet that builds the pod manager, the container
// runtime, the PLEG and pod cache, the work queue, the pod workers, the status manager, the
// mirror client and the sync loop, and nothing else: it starts no goroutine. The run command
// wraps the result in runners on the real clock; the scenario engine drives it on a virtual one.
// Both build it here, so the two modes cannot drift apart.
package node
