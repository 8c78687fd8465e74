// Package events holds the reasons of the Kubernetes events the simulated kubelet records: the
// kubelet's pkg/kubelet/events.
//
// Events come from where the kubelet records them. The runtime (package fakeruntime, kuberuntime in
// the kubelet) records Pulling, Pulled, Created, Started, Killing, BackOff, Failed and
// ErrImageNeverPull at the virtual instant each step happens; the pod sync functions (package
// podsync) record FailedKillPod. Each takes an event recorder in its options: in run mode the
// assembly gives them client-go's record.EventRecorder, which writes core/v1 Events to the API
// server; replay records none, because client-go's broadcaster is asynchronous and would make the
// trace order depend on goroutine scheduling.
//
// The trace never drives events: a consumer that needs to know that something happened gets an
// explicit sink, never a string match on trace words.
package events
