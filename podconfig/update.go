package podconfig

import (
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// Op is what an Update does to its pods. It mirrors the kubelet's kubetypes.PodOperation.
type Op int

// The operations, in the kubelet's v1.35 order. Sources send SET; podStorage emits the others (and
// SET in the snapshot modes). Do not rely on the numbers: the kubelet renumbered them in v1.36.
const (
	SET Op = iota
	ADD
	DELETE
	REMOVE
	UPDATE
	RECONCILE
)

// String returns the kubelet's name for op, or "Op(n)" for a value outside the enum.
func (op Op) String() string {
	switch op {
	case SET:
		return "SET"
	case ADD:
		return "ADD"
	case DELETE:
		return "DELETE"
	case REMOVE:
		return "REMOVE"
	case UPDATE:
		return "UPDATE"
	case RECONCILE:
		return "RECONCILE"
	}
	return "Op(" + strconv.Itoa(int(op)) + ")"
}

// Source names, as the kubelet writes them into the kubernetes.io/config.source annotation.
const (
	FileSource = "file"
	HTTPSource = "http"
	APISource  = "api"
	// AllSource is the source of the snapshot that Sync emits.
	AllSource = "*"
)

// Update is one message between a source, PodConfig and the sync loop: the kubelet's PodUpdate.
type Update struct {
	Pods   []*v1.Pod
	Op     Op
	Source string
}
