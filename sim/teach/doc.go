// Package teach turns a trace into something a learner can follow: a self-contained HTML timeline
// of a replay (swimlanes per component, pod worker and container, with every event's cause chain),
// the same view live from a running node over server-sent events, a narrated explanation of a
// scenario step by step, and the curriculum that groups the scenarios into lessons.
//
// It has no kubelet counterpart: the kubelet only logs. Everything here reads trace events and
// their causes (docs/trace.md, "Causes"); nothing here drives a component.
package teach
