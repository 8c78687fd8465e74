// Package pleg is the kubelet's generic pod lifecycle event generator and its pod cache.
//
// It mirrors pkg/kubelet/pleg/generic.go (GenericPLEG) and pkg/kubelet/container/cache.go. Relist
// lists every pod from the runtime, compares each container's and sandbox's state with the last
// successful relist, and returns ContainerStarted, ContainerDied and ContainerRemoved events. For
// each pod with changes (or marked for reinspection) it first reads the pod's full status into the
// Cache; if that fails the error is cached, the pod's events are held back and the pod is
// reinspected on the next relist, which then reports the changes again. A pod reinspected with no
// container changes gets a PodSync event. ContainerChanged (a container in the created or unknown
// state) is computed but never returned, as in the kubelet. After every pod, the cache's global
// timestamp moves to the relist's start, which is what pod workers wait on.
//
// State table (old is the last successful relist, new is this one):
//
//	old → new                          events
//	any → running                      ContainerStarted
//	any → exited                       ContainerDied
//	any → unknown (created, unknown)   ContainerChanged (not returned)
//	exited → missing                   ContainerRemoved
//	running or unknown → missing       ContainerDied, ContainerRemoved
//
// Sandboxes count as containers: ready is running and notready is exited.
//
// The PLEG is a core. It has no goroutine and no channel: the caller invokes Relist when NextWake
// says (one period after the previous relist) and routes the returned events itself, so the
// kubelet's full-channel drops cannot happen. Pods come in UID order and, within a pod, events in
// container ID order, where the kubelet uses map order. Healthy reports false once the last
// successful relist is older than the threshold, and the Cache's GetNewerThan never blocks: it
// reports whether the kubelet's call would have returned.
package pleg
