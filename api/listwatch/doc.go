// Package listwatch holds the list-watcher that the informers and reflectors of both sides take,
// and adapts functions to it: Interface is a kind's List and Watch as its typed client has them,
// Funcs a list and a watch given as two functions, InNamespace one over a namespace of a list
// and a watch that take it.
//
// Funcs is client-go's cache.ListWatch (its ListFunc and WatchFunc) typed by the kind's list
// type, and InNamespace its NewFilteredListWatchFromClient's namespace, for lists and watches
// that are functions rather than a REST client: the embedded API server's in-process ones
// (fakeapiserver.Direct's ListPods and WatchPods, ListNodes and WatchNodes, ListLeases and
// WatchLeases), which the kubelet side's pod watch and the controllers' informers both use. The
// controllers' RunnerOptions take an Interface per kind, and `run` hands them its in-process
// lists and watches as one: it lives in the shared API layer so that neither side imports the
// other for it.
package listwatch
