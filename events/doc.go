// Package events holds the reasons of the Kubernetes events the simulated kubelet records: the
// kubelet's pkg/kubelet/events.
//
// Events come from where the kubelet records them. The runtime (package fakeruntime, kuberuntime in
// the kubelet) records Pulling, Pulled, Created, Started, Killing, BackOff, Failed and
// ErrImageNeverPull at the virtual instant each step happens, about the container (its field
// path, spec.containers{name}), and SandboxChanged and FailedCreatePodSandBox about the pod; the
// pod sync functions (package podsync) record FailedKillPod; PodConfig records FailedValidation.
// Each takes an event recorder in its options, and they all record through Tracing, which traces
// every event (component "events") before handing it on: in run mode to client-go's
// record.EventRecorder, whose
// broadcaster writes core/v1 Events to the API server from its own goroutine; in replay to
// APIRecorder, which applies client-go's event correlator (aggregation, counts, spam filter) and
// writes the Events synchronously on the virtual clock, so that a replay writes the same Events
// every time.
//
// The trace never drives events: a consumer that needs to know that something happened gets an
// explicit sink, never a string match on trace words.
package events
