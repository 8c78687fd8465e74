package csiplugin

import (
	"context"
	"fmt"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
)

// Dial connects to a unix socket over gRPC, blocking until ready or the timeout.
type Dial func(ctx context.Context, socketPath string, timeout time.Duration) (*grpc.ClientConn, error)

// GRPCDriver calls NodeGetInfo on a driver's endpoint over gRPC.
type GRPCDriver struct{ Dial Dial }

var _ NodeInfoGetter = GRPCDriver{}

// NodeGetInfo dials the endpoint and asks for the node's id, volume limit and topology.
func (d GRPCDriver) NodeGetInfo(ctx context.Context, endpoint string) (NodeInfo, error) {
	conn, err := d.Dial(ctx, endpoint, Timeout)
	if err != nil {
		return NodeInfo{}, err
	}
	defer func() { _ = conn.Close() }()
	resp, err := csi.NewNodeClient(conn).NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		return NodeInfo{}, err
	}
	info := NodeInfo{NodeID: resp.GetNodeId(), MaxVolumesPerNode: resp.GetMaxVolumesPerNode()}
	if t := resp.GetAccessibleTopology(); t != nil {
		info.Topology = t.GetSegments()
	}
	if info.NodeID == "" {
		return NodeInfo{}, fmt.Errorf("node ID is empty in the NodeGetInfo answer of %s", endpoint)
	}
	return info, nil
}
