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

// warnIfExposed says loudly that the fake API server listens where other machines can reach it
// without authentication (--no-auth). A token without TLS is refused earlier, by validate.
func warnIfExposed(logger klog.Logger, addr net.Addr, sv serving) {
	if !exposed(addr) || sv.token != "" {
		return
	}
	logger.Info("WARNING: the fake API server has no authentication and listens on a non-loopback address: anyone who can reach it can read and change every object, and create pods in any namespace",
		"address", addr.String(), "tls", sv.caData != nil)
}
