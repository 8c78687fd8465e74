// Package pipenet is a net.Listener whose connections are net.Pipe pairs, for tests that serve
// HTTP inside a testing/synctest bubble: a pipe is in memory, so a bubble can wait on it (it
// cannot on a socket), it buffers nothing, so a client that does not read blocks the server's
// next write at once, and its deadlines run on the bubble's clock.
//
// Kubelet counterpart: none; the kubelet's tests use httptest servers on sockets.
package pipenet
