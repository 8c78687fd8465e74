package main

import (
	"net"

	"k8s.io/klog/v2"
)

// exposed reports whether a listener's address is reachable from outside this machine: any
// address that is not loopback, the unspecified 0.0.0.0 and :: included.
func exposed(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || !tcp.IP.IsLoopback()
}

// warnIfExposed says loudly that the fake API server, which has no authentication,
// authorization or TLS, listens where other machines can reach it.
func warnIfExposed(logger klog.Logger, addr net.Addr) {
	if !exposed(addr) {
		return
	}
	logger.Info("WARNING: the fake API server has no authentication, authorization or TLS, and listens on a non-loopback address: anyone who can reach it can read and change every object, and create pods in any namespace",
		"address", addr.String())
}
