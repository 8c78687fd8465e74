package csiplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// AnnotationKeyNodeID is the Node annotation that maps driver names to their node ids.
const AnnotationKeyNodeID = "csi.volume.kubernetes.io/nodeid"

// APINodeInfo is the node info manager over the API server.
type APINodeInfo struct {
	Client   kubernetes.Interface
	NodeName string
}

var _ NodeInfoManager = APINodeInfo{}

// InstallCSIDriver writes the driver's node id into the node annotation, its topology into the
// node labels, and the driver into the CSINode, creating that if needed.
func (m APINodeInfo) InstallCSIDriver(ctx context.Context, driverName string, info NodeInfo) error {
	node, err := m.updateNode(ctx, func(n *v1.Node) (bool, error) {
		ids, err := nodeIDs(n)
		if err != nil {
			return false, err
		}
		changed := ids[driverName] != info.NodeID
		ids[driverName] = info.NodeID
		if err := setNodeIDs(n, ids); err != nil {
			return false, err
		}
		for k, v := range info.Topology {
			if old, ok := n.Labels[k]; ok && old != v {
				return false, fmt.Errorf("topology label %q of node %s is %q, driver %s reports %q", k, n.Name, old, driverName, v)
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

// UninstallCSIDriver removes the driver from the CSINode and from the node annotation.
func (m APINodeInfo) UninstallCSIDriver(ctx context.Context, driverName string) error {
	err := m.updateCSINode(ctx, nil, func(drivers []storagev1.CSINodeDriver) []storagev1.CSINodeDriver {
		return slices.DeleteFunc(drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == driverName })
	})
	if err != nil {
		return err
	}
	_, err = m.updateNode(ctx, func(n *v1.Node) (bool, error) {
		ids, err := nodeIDs(n)
		if err != nil {
			return false, err
		}
		if _, ok := ids[driverName]; !ok {
			return false, nil
		}
		delete(ids, driverName)
		return true, setNodeIDs(n, ids)
	})
	return err
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

// updateNode applies change to the node and writes it when it changed, retrying on conflicts.
func (m APINodeInfo) updateNode(ctx context.Context, change func(*v1.Node) (bool, error)) (*v1.Node, error) {
	var out *v1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := m.Client.CoreV1().Nodes().Get(ctx, m.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed, err := change(n)
		if err != nil || !changed {
			out = n
			return err
		}
		out, err = m.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update node %s: %w", m.NodeName, err)
	}
	return out, nil
}

// updateCSINode applies change to the CSINode's drivers, creating the CSINode (owned by node)
// when it does not exist and node is given.
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
			_, err = api.Create(ctx, cn, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
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
