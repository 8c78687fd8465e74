package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// parseNodeIP reads --node-ip as the kubelet does without a cloud provider: one address, or two
// of different families (dual-stack), of which the first is the node's primary address, the one
// simulated. "0.0.0.0" and "::" mean no address, chosen then as without the flag.
func parseNodeIP(s string) (net.IP, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return nil, fmt.Errorf("--node-ip %q: must contain either a single IP or a dual-stack pair of IPs", s)
	}
	var ips []net.IP
	for _, p := range parts {
		ip := net.ParseIP(strings.TrimSpace(p))
		if ip == nil {
			return nil, fmt.Errorf("--node-ip %q: could not parse %q", s, p)
		}
		ips = append(ips, ip)
	}
	if len(ips) == 2 && (ips[0].To4() == nil) == (ips[1].To4() == nil) {
		return nil, fmt.Errorf("--node-ip %q: must contain either a single IP or a dual-stack pair of IPs", s)
	}
	if ips[0].IsUnspecified() {
		return nil, nil
	}
	return ips[0], nil
}

// chooseNodeIP is the node's InternalIP: --node-ip when given, which must be an address of
// this host (loopback ones included, where the kubelet refuses them: run's default is loopback);
// else, against an API server at apiServer, the address of the interface this host reaches it
// through (the kubelet resolves the node's name, then takes the default route's interface:
// simulated names resolve to nothing, and the interface toward the API server is the default
// route's when the server is elsewhere, and the one that works in a network namespace without a
// default route); else (the embedded API server, or none) loopback.
func chooseNodeIP(flag net.IP, apiServer string) (net.IP, error) {
	if flag != nil {
		if !flag.IsLoopback() && !isHostAddress(flag) {
			return nil, fmt.Errorf("node IP: %q not found in the host's network interfaces", flag.String())
		}
		return flag, nil
	}
	if apiServer == "" {
		return net.IPv4(127, 0, 0, 1), nil
	}
	ip, err := addressToward(apiServer)
	if err != nil {
		return nil, fmt.Errorf("can't get ip address of node: %w", err)
	}
	return ip, nil
}

// isHostAddress reports whether ip is the address of one of this host's interfaces.
func isHostAddress(ip net.IP) bool {
	for _, a := range interfaceIPs() {
		if a.Equal(ip) {
			return true
		}
	}
	return false
}

// addressToward is the local address this host sends from to reach the server at rawURL: a UDP
// socket "connected" to it picks the route and so the address, and sends nothing.
func addressToward(rawURL string) (net.IP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the API server URL %q: %v", rawURL, err)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	c, err := net.Dial("udp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, fmt.Errorf("find the route to the API server %s: %w", u.Host, err)
	}
	defer c.Close()
	addr, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok || addr.IP == nil {
		return nil, errors.New("no local address toward the API server")
	}
	return addr.IP, nil
}
