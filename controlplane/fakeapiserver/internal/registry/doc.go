// Package registry holds the registry strategies of the fake API server's kinds that take more
// than their metadata: how a create and an update default, allocate, validate and print a
// Service, Endpoints, an EndpointSlice, a ResourceSlice and a Namespace. Each is a Strategy the
// server copies into its row of the resource table; the server keeps the names, verbs and
// subresources the kind is served under, the store, admission and the namespace lifecycle.
//
// Its counterparts are kube-apiserver's pkg/registry packages: core/service (strategy.go, and the
// cluster IP and node port allocations of storage/alloc.go with the ipallocator and portallocator
// they use), core/endpoint, discovery/endpointslice, resource/resourceslice and core/namespace,
// with the checks of pkg/apis/core/validation, pkg/apis/discovery/validation and
// pkg/apis/resource/validation they run, and the columns of pkg/printers/internalversion.
//
// The allocations read the stored Services and draw from the store's random source through
// Store, a small interface the server implements; the caller holds the store's lock. Nothing here
// starts a goroutine or reads a clock: a cell's age is computed from the now it is given.
package registry
