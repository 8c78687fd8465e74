package world

import (
	"net/netip"
	"testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func TestNodeIP(t *testing.T) {
	tests := []struct {
		nodes int
		last  string // the address of node nodes-1
	}{
		{nodes: 0},
		{nodes: 1, last: "192.168.0.10"},
		{nodes: 245, last: "192.168.0.254"},
		{nodes: 246, last: "192.168.0.255"},
		{nodes: 247, last: "192.168.1.0"},
		{nodes: 1000, last: "192.168.3.241"},
		{nodes: 5000, last: "192.168.19.145"},
		{nodes: maxNodes, last: "192.168.255.255"},
	}
	for _, tt := range tests {
		seen := map[string]int{}
		for i := range tt.nodes {
			ip, err := NodeIP(i)
			if err != nil {
				t.Fatalf("NodeIP(%d) error = %v", i, err)
			}
			a, err := netip.ParseAddr(ip)
			if err != nil || !a.Is4() {
				t.Fatalf("NodeIP(%d) = %q, not an IPv4 address (%v)", i, ip, err)
			}
			if !netip.MustParsePrefix("192.168.0.0/16").Contains(a) {
				t.Errorf("NodeIP(%d) = %q, outside 192.168.0.0/16", i, ip)
			}
			// A node's address is never a Service's ClusterIP, nor a pod's address.
			for _, other := range []netip.Prefix{fakeapiserver.DefaultServiceCIDR, netip.MustParsePrefix("10.88.0.0/16")} {
				if other.Contains(a) {
					t.Errorf("NodeIP(%d) = %q, inside %v", i, ip, other)
				}
			}
			if j, ok := seen[ip]; ok {
				t.Fatalf("NodeIP(%d) = NodeIP(%d) = %q", i, j, ip)
			}
			seen[ip] = i
			if i == tt.nodes-1 && ip != tt.last {
				t.Errorf("NodeIP(%d) = %q, want %q", i, ip, tt.last)
			}
		}
	}
	// The first 246 nodes are 192.168.0.(10+i).
	for i := range 246 {
		if ip, _ := NodeIP(i); ip != netip.AddrFrom4([4]byte{192, 168, 0, byte(10 + i)}).String() {
			t.Errorf("NodeIP(%d) = %q, want 192.168.0.%d", i, ip, 10+i)
		}
	}
	for _, i := range []int{-1, maxNodes} {
		if ip, err := NodeIP(i); err == nil {
			t.Errorf("NodeIP(%d) = %q, want an error", i, ip)
		}
	}
}
