// Package replay replays scripted scenarios against the real minikubelet components on a
// virtual clock.
//
// It has no kubelet counterpart. A scenario file (docs/scenarios.md) configures one or more nodes
// and lists steps: file, HTTP and API actions, runtime failures, and expectations. Each kind of
// step is a type of its own, decoded, validated and applied by itself (step.go and the step_*.go
// files of each family). The engine builds each node's kubelet with package kubelet's New over the
// simulated world of package world, on a vclock.Clock, and runs a discrete-event loop: it settles
// every kubelet and the control plane at the current instant in a fixed order, then jumps the clock
// to the earliest next wake-up (docs/design/002-replay.md). It builds no core of the kubelet itself.
// The same scenario gives the same trace, byte for byte.
package replay
