// Package listwatch adapts functions to the list-watchers that the informers and reflectors of
// both sides take: Funcs is a list and a watch given as two functions, InNamespace one over a
// namespace of a list and a watch that take it.
//
// It is client-go's cache.ListWatch (its ListFunc and WatchFunc) typed by the kind's list type,
// and its NewFilteredListWatchFromClient's namespace, for lists and watches that are functions
// rather than a REST client: the embedded API server's in-process ones
// (fakeapiserver.Direct's ListPods and WatchPods, ListNodes and WatchNodes, ListLeases and
// WatchLeases), which the kubelet side's pod watch and the controllers' informers both use. It
// lives in the shared API layer so that neither side imports the other for it.
package listwatch
