// Package trace is the single event stream every minikubelet component writes to.
//
// It has no kubelet counterpart: the kubelet only logs. Logs explain; the trace is data. An Event
// is emitted at state transitions and boundary crossings (a source update, a runtime call, an API
// write), stamped with the time since the start on the component's clock, and rendered either as
// aligned text for people or as JSON lines for machines. docs/trace.md is the contract for both
// forms.
package trace
