// Package sources turns static pod manifests into the full SETs the kubelet's pod sources send.
//
// It mirrors the kubelet's pkg/kubelet/config: file.go and file_linux.go (the manifest directory or
// file and its inotify watch), http.go (the manifest URL) and apiserver.go (pods bound to the node
// in the API server). The file and http sources read at most 10 MiB of a manifest, as common.go's
// maxConfigLength says, and hand the bytes to package staticpod, which decodes, defaults and
// validates them as common.go does. Every source sends podconfig.Update values with Op SET that
// carry the source's whole desired state; podconfig diffs them.
//
// Each source is a pure core plus a runner:
//
//	File   Relist, HandleEvent, NextWake    FileRunner: ticker + a share of the process's file watch + retry
//	HTTP   Poll, NextWake                   HTTPRunner: sliding-period poll loop + log throttling
//	API    store changes → full SETs        APIRunner: list-watch of the API server (api.go)
//
// The cores read files and make HTTP requests, because those are inputs, but they never start
// goroutines or read the wall clock. In replay the engine calls them directly and hands the file
// source the watch events fsnotify would have produced. Every constructor takes an options struct
// and returns an error wrapping ErrMissingOption when a required one (the clock, the tracer, the
// core a runner drives) is unset; there is no real-clock default. Each core is driven by one
// goroutine and has no lock; the API runner's store adapter is called only from the reflector's
// goroutine.
//
// Deliberate differences from the kubelet, all listed in docs/fidelity.md:
//   - Pods inside a file SET are sorted by namespace/name; the kubelet's order comes from map
//     iteration and is random.
//   - An HTTP body that is neither a Pod nor a PodList is quoted in the error only up to 1 KiB.
//
// The decoder's own differences (UIDs, defaulting and validation subsets) are listed in package
// manifest.
package sources
