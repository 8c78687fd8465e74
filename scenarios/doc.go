// Package scenarios is the scenario library: the scenario files, their golden traces and
// narrations, the lessons index (lessons/index.yaml) and the glossary (lessons/glossary.yaml),
// embedded in the minikubelet binary so that `minikubelet learn`, `explain NAME` and `replay
// NAME` work from any directory.
//
// It has no kubelet counterpart: it is data for the replay engine (sim/replay) and the teaching
// view (sim/teach). docs/scenarios.md describes the file format, docs/teaching.md the lessons.
package scenarios
