package csiplugin

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	nodeutil "k8s.io/component-helpers/node/util"

	"github.com/minikubelet/minikubelet/nodestatus"
)

// AnnotationKeyNodeID is the Node annotation that maps driver names to their node ids.
const AnnotationKeyNodeID = "csi.volume.kubernetes.io/nodeid"

// APINodeInfo is the node info manager over the API server.
type APINodeInfo struct {
	Client   kubernetes.Interface
	NodeName string
}

var _ NodeInfoManager = APINodeInfo{}

// InstallCSIDriver removes the driver's attach limit from the node's capacity and allocatable,
// writes the driver's node id into the node annotation and its topology into the node labels, and
// the driver into the CSINode, creating that if needed.
func (m APINodeInfo) InstallCSIDriver(ctx context.Context, driverName string, info NodeInfo) error {
	node, err := m.updateNode(ctx, func(n *v1.Node) (bool, error) {
		ids, err := nodeIDs(n)
		if err != nil {
			return false, err
		}
		changed := removeAttachLimit(n, driverName)
		changed = ids[driverName] != info.NodeID || changed
		ids[driverName] = info.NodeID
		if err := setNodeIDs(n, ids); err != nil {
			return false, err
		}
		for k, v := range info.Topology {
			if old, ok := n.Labels[k]; ok && old != v {
				return false, fmt.Errorf("detected topology value collision: driver reported %q:%q but existing label is %q:%q", k, v, k, old)
			}
			if _, ok := n.Labels[k]; !ok {
				if n.Labels == nil {
					n.Labels = map[string]string{}
				}
				n.Labels[k] = v
				changed = true
			}
		}
		return changed, nil
	})
	if err != nil {
		return err
	}
	entry := storagev1.CSINodeDriver{Name: driverName, NodeID: info.NodeID, TopologyKeys: slices.Sorted(maps.Keys(info.Topology))}
	if info.MaxVolumesPerNode > 0 {
		n := int32(info.MaxVolumesPerNode)
		entry.Allocatable = &storagev1.VolumeNodeResources{Count: &n}
	}
	return m.updateCSINode(ctx, node, func(drivers []storagev1.CSINodeDriver) []storagev1.CSINodeDriver {
		out := slices.DeleteFunc(drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == driverName })
		return append(out, entry)
	})
}

// UninstallCSIDriver removes the driver from the CSINode, and its attach limit and node id from
// the node.
func (m APINodeInfo) UninstallCSIDriver(ctx context.Context, driverName string) error {
	err := m.updateCSINode(ctx, nil, func(drivers []storagev1.CSINodeDriver) []storagev1.CSINodeDriver {
		return slices.DeleteFunc(drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == driverName })
	})
	if err != nil {
		return err
	}
	_, err = m.updateNode(ctx, func(n *v1.Node) (bool, error) {
		changed := removeAttachLimit(n, driverName)
		ids, err := nodeIDs(n)
		if err != nil {
			return false, err
		}
		if _, ok := ids[driverName]; !ok {
			return changed, nil
		}
		delete(ids, driverName)
		return true, setNodeIDs(n, ids)
	})
	return err
}

// attachLimitPrefix starts the node resource through which kubelets before v1.32 published a CSI
// driver's volume limit (volumeutil.CSIAttachLimitPrefix).
const attachLimitPrefix = "attachable-volumes-csi-"

// AttachLimitKey is the node resource of a driver's volume limit, as kubelets before v1.32 named
// it (volumeutil.GetCSIAttachLimitKey): the prefix and the driver's name, or, when that would
// reach 63 characters, the name's first 23 characters and 16 hex digits of its SHA-1.
func AttachLimitKey(driverName string) v1.ResourceName {
	if len(attachLimitPrefix)+len(driverName) >= 63 {
		sum := sha1.Sum([]byte(driverName))
		return v1.ResourceName(attachLimitPrefix + driverName[:23] + hex.EncodeToString(sum[:])[:16])
	}
	return v1.ResourceName(attachLimitPrefix + driverName)
}

// removeAttachLimit is the nodeinfomanager's removeMaxAttachLimit, which v1.35 still runs at every
// install and uninstall: the volume limit lives in the CSINode now, and the node resource an
// older kubelet left is deleted from capacity and allocatable. It reports whether it removed one.
func removeAttachLimit(n *v1.Node, driverName string) bool {
	key := AttachLimitKey(driverName)
	_, inCapacity := n.Status.Capacity[key]
	_, inAllocatable := n.Status.Allocatable[key]
	if !inCapacity && !inAllocatable {
		return false
	}
	delete(n.Status.Capacity, key)
	if len(n.Status.Capacity) == 0 {
		n.Status.Capacity = nil
	}
	delete(n.Status.Allocatable, key)
	if len(n.Status.Allocatable) == 0 {
		n.Status.Allocatable = nil
	}
	return true
}

func nodeIDs(n *v1.Node) (map[string]string, error) {
	ids := map[string]string{}
	if s, ok := n.Annotations[AnnotationKeyNodeID]; ok && s != "" {
		if err := json.Unmarshal([]byte(s), &ids); err != nil {
			return nil, fmt.Errorf("annotation %s of node %s: %w", AnnotationKeyNodeID, n.Name, err)
		}
	}
	return ids, nil
}

func setNodeIDs(n *v1.Node, ids map[string]string) error {
	if len(ids) == 0 {
		delete(n.Annotations, AnnotationKeyNodeID)
		return nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[AnnotationKeyNodeID] = string(b)
	return nil
}

// updateNode applies change to a copy of the node and, when it changed, writes the difference
// with a strategic merge patch of nodes/status, as the nodeinfomanager's tryUpdateNode does
// (nodeutil.PatchNodeStatus: the status, and the labels and annotations with it); it retries on
// conflicts.
func (m APINodeInfo) updateNode(ctx context.Context, change func(*v1.Node) (bool, error)) (*v1.Node, error) {
	var out *v1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		orig, err := m.Client.CoreV1().Nodes().Get(ctx, m.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n := orig.DeepCopy()
		changed, err := change(n)
		if err != nil || !changed {
			out = orig
			return err
		}
		out, _, err = nodeutil.PatchNodeStatus(m.Client.CoreV1(), types.NodeName(m.NodeName), orig, n)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update node %s: %w", m.NodeName, err)
	}
	return out, nil
}

// updateCSINode applies change to the CSINode's drivers, creating the CSINode (owned by node)
// when it does not exist and node is given. An install (node given) also writes the
// migrated-plugins annotation, as the kubelet's node info manager does whenever it creates the
// CSINode or installs a driver into it.
func (m APINodeInfo) updateCSINode(ctx context.Context, node *v1.Node, change func([]storagev1.CSINodeDriver) []storagev1.CSINodeDriver) error {
	api := m.Client.StorageV1().CSINodes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cn, err := api.Get(ctx, m.NodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if node == nil {
				return nil
			}
			cn = &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{
				Name:            m.NodeName,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
			}}
			cn.Spec.Drivers = change(nil)
			nodestatus.SetMigrationAnnotation(cn)
			_, err = api.Create(ctx, cn, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if node != nil {
			nodestatus.SetMigrationAnnotation(cn)
		}
		cn.Spec.Drivers = change(cn.Spec.Drivers)
		_, err = api.Update(ctx, cn, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("update CSINode %s: %w", m.NodeName, err)
	}
	return nil
}
