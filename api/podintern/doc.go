// Package podintern makes decoded pods share the strings, and the managed fields' encodings,
// that many pods repeat, so that a fleet's thousands of pods of one template keep one copy of
// each instead of one per pod and per version.
//
// The kubelet has no counterpart: its reflector keeps each pod as decoded. Interning changes no
// value, only where the bytes live, so nothing a node shows changes. It lives in the shared API
// layer because both sides decode pods: the kubelet side's api source (sources) and the fake API
// server's store (controlplane/fakeapiserver).
package podintern
