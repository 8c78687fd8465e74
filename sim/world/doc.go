// Package world simulates what a replayed kubelet reaches outside its process, behind the seams of
// kubelet.World: the static pod directory in memory, the manifest URL's scripted answers, the
// node's connection to the API server (which can go down), the api source's watch over it and the
// node's hottest writes through it (NodeWrites, which call the API server in process while the
// connection is up), and the plugins behind the registry's sockets with the device manager's
// checkpoint store. Around the
// nodes is the Cluster: the fake API server served in process, the controllers beside it and the
// peer nodes. The kubelet's own code runs unchanged against it; only the machine and the network
// are replaced.
//
// It has no kubelet counterpart: it stands for the files, servers, sockets and processes around a
// kubelet. Everything outlives a kubelet restart, as the machine does. It is driven from one
// goroutine on a virtual clock, and answers deterministically.
package world
