package world

import (
	"fmt"
	"net/netip"
)

// maxNodes is how many nodes NodeIP numbers: 10+i must fit in the low 16 bits.
const maxNodes = 1<<16 - 10

// NodeIP is the InternalIP of the simulated fleet's node i (its kubelets' first, then the
// control plane's peer nodes): 192.168.0.0/16 with 10+i as its low 16 bits, so 192.168.0.10 for
// the first node and 192.168.0.255 for node 245, then 192.168.1.0 on. It becomes the node's
// address and its pods' hostIP, which kube-apiserver accepts only as a valid IP.
//
// The range is disjoint from the fake API server's service range (DefaultServiceCIDR,
// 10.0.0.0/24, kube-apiserver's default --service-cluster-ip-range) and from the fake runtime's
// pod addresses (10.88.0.0/16): in a real cluster the node, service and pod networks do not
// overlap, so no node or hostIP may equal a Service's ClusterIP.
func NodeIP(i int) (string, error) {
	if i < 0 || i >= maxNodes {
		return "", fmt.Errorf("node index %d: the fleet's addresses number nodes 0 to %d", i, maxNodes-1)
	}
	v := 10 + i
	return netip.AddrFrom4([4]byte{192, 168, byte(v >> 8), byte(v)}).String(), nil
}
