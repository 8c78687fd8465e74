package world

import (
	"fmt"
	"net/netip"
)

// maxNodes is how many nodes NodeIP numbers: 10+i must fit in the low 16 bits.
const maxNodes = 1<<16 - 10

// NodeIP is the InternalIP of the simulated fleet's node i (its kubelets' first, then the
// control plane's peer nodes): 10.0.0.0/16 with 10+i as its low 16 bits, so 10.0.0.10 for the
// first node and 10.0.0.255 for node 245, then 10.0.1.0 on. It becomes the node's address and
// its pods' hostIP, which kube-apiserver accepts only as a valid IP.
func NodeIP(i int) (string, error) {
	if i < 0 || i >= maxNodes {
		return "", fmt.Errorf("node index %d: the fleet's addresses number nodes 0 to %d", i, maxNodes-1)
	}
	v := 10 + i
	return netip.AddrFrom4([4]byte{10, 0, byte(v >> 8), byte(v)}).String(), nil
}
