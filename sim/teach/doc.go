// Package teach turns a trace into something a learner can follow: a self-contained HTML timeline
// of a replay (swimlanes per component, pod worker and container, with every event's cause chain),
// the same view live from a running node over server-sent events, a narrated explanation of a
// scenario step by step, the curriculum that groups the scenarios into lessons, and the glossary
// of the kubelet's words the lessons and the timeline link to. The lessons, the scenarios and the
// glossary are built into the binary (package scenarios); a file path still names a scenario.
//
// It has no kubelet counterpart: the kubelet only logs. Everything here reads trace events and
// their causes (docs/trace.md, "Causes"); nothing here drives a component.
package teach
