// Package replay replays scripted scenarios against the real minikubelet components on a
// virtual clock.
//
// It has no kubelet counterpart. A scenario file (docs/scenarios.md) configures a node and lists
// steps: file, HTTP and API actions, runtime failures, and expectations. The engine builds every
// core on a vclock.Clock and runs a discrete-event loop: it does all work due at the current
// instant in a fixed order of components, then jumps the clock to the earliest next wake-up
// (docs/design/002-replay.md). The same scenario gives the same trace, byte for byte.
package replay
