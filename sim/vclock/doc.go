// Package vclock is the virtual clock used by scenario replay.
//
// It has no kubelet counterpart: the kubelet always runs on the wall clock. A Clock only moves when
// the scenario engine sets it, so everything that reads it sees the same instant until the engine
// decides that all work due at that instant is done.
package vclock
