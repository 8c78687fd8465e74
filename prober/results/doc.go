// Package results is the kubelet's probe results cache: pkg/kubelet/prober/results.
//
// The kubelet keeps three of these managers (liveness, readiness, startup), each a map from a
// container ID to the last thresholded result its probe worker set, plus a channel that receives
// an Update whenever a value changes. Here the cache has no channel: Set reports whether the value
// changed, and the prober core collects the updates and hands them to the sync loop, in the order
// they happened.
package results
