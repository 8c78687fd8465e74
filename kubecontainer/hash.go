package kubecontainer

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
)

// HashContainer is the kubelet's container hash (pkg/kubelet/container HashContainer): FNV-32a
// over the hash dump of the JSON of the container's name and image, and nothing else. The
// kubelet stores it on the runtime container when it creates it and compares it with the spec's
// at every sync; a running container whose hash differs was given a new image and is restarted.
// Resources, env, probes and lifecycle are left out on purpose: v1.35 restarts a container only
// for what a pod update may change and a running container cannot take in place.
func HashContainer(c *v1.Container) uint64 {
	// A map marshals with sorted keys, so the bytes are {"image":...,"name":...} as in the kubelet.
	b, _ := json.Marshal(map[string]string{"name": c.Name, "image": c.Image})
	h := fnv.New32a()
	// The kubelet writes the dump of the byte slice, not the bytes themselves
	// (hashutil.DeepHashObject); the same dump gives the same value.
	fmt.Fprintf(h, "%v", dump.ForHash(b))
	return uint64(h.Sum32())
}
