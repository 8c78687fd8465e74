// Package eventrecord records Kubernetes events for both sides of the simulator: a recorder that
// traces each event as it records it, and replay's APIRecorder, which writes them to the API
// server synchronously on the replay's clock.
//
// Kubelet counterpart: client-go's tools/record (EventRecorder and its broadcaster's sink), which
// the kubelet and the controllers record through; the APIRecorder keeps its event naming,
// aggregation of repeated events into a count, and PATCH of an existing event, without the
// broadcaster's goroutines.
package eventrecord
