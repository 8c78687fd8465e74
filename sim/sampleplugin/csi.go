package sampleplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// CSIOptions configure a CSI sample: a driver and its registrar.
type CSIOptions struct {
	// RootDir is the kubelet's root directory: the driver listens in plugins/<driver>/csi.sock, the
	// registrar in plugins_registry/<driver>-reg.sock. Required.
	RootDir string
	// Driver is the CSI driver name, such as example.csi.k8s.io. Required.
	Driver string
	// NodeID is what NodeGetInfo reports; empty uses the host name.
	NodeID string
	// MaxVolumesPerNode is NodeGetInfo's volume limit; 0 reports none.
	MaxVolumesPerNode int64
	// Topology is NodeGetInfo's accessible topology; nil reports none.
	Topology map[string]string
}

// CSI is a CSI driver that answers the Identity and Node calls registration needs, with a
// registrar in front of it in node-driver-registrar's shape.
type CSI struct {
	opts CSIOptions
	// registered receives the kubelet's registration status.
	registered chan *registerapi.RegistrationStatus
}

// NewCSI returns a CSI sample; nothing listens before Run.
func NewCSI(opts CSIOptions) (*CSI, error) {
	if opts.RootDir == "" || opts.Driver == "" {
		return nil, errors.New("new sample CSI driver: options RootDir and Driver are required")
	}
	if opts.NodeID == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("new sample CSI driver: node id: %w", err)
		}
		opts.NodeID = host
	}
	return &CSI{opts: opts, registered: make(chan *registerapi.RegistrationStatus, 1)}, nil
}

// Endpoint is the driver's socket, which the registrar reports to the kubelet.
func (c *CSI) Endpoint() string {
	return filepath.Join(c.opts.RootDir, "plugins", c.opts.Driver, "csi.sock")
}

// RegistrationSocket is the registrar's socket in plugins_registry.
func (c *CSI) RegistrationSocket() string {
	return filepath.Join(c.opts.RootDir, "plugins_registry", c.opts.Driver+"-reg.sock")
}

// Run serves the driver and the registrar until ctx is done. Like node-driver-registrar it exits
// with an error when the kubelet reports a failed registration, and removes its registration
// socket on the way out, which makes the kubelet deregister the driver.
func (c *CSI) Run(ctx context.Context) error {
	stopDriver, err := serveOn(c.Endpoint(), func(s *grpc.Server) {
		csi.RegisterIdentityServer(s, identity{name: c.opts.Driver})
		csi.RegisterNodeServer(s, node{opts: c.opts})
	})
	if err != nil {
		return err
	}
	defer stopDriver()

	name, err := driverName(ctx, c.Endpoint())
	if err != nil {
		return err
	}
	stopRegistrar, err := serveOn(c.RegistrationSocket(), func(s *grpc.Server) {
		registerapi.RegisterRegistrationServer(s, registrar{name: name, endpoint: c.Endpoint(), status: c.registered})
	})
	if err != nil {
		return err
	}
	defer stopRegistrar()
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-c.registered:
			if !s.PluginRegistered {
				return fmt.Errorf("registration of %s failed: %s", name, s.Error)
			}
		}
	}
}

// serveOn listens on a fresh unix socket (removing a stale one) and serves a gRPC server there.
// stop ends the server once its RPCs in flight are answered, which removes the socket.
func serveOn(path string, register func(*grpc.Server)) (stop func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, err
	}
	s := grpc.NewServer()
	register(s)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(l) }()
	// GracefulStop lets an RPC in flight (the kubelet's notification) get its answer.
	return func() { s.GracefulStop(); <-done }, nil
}

// driverName asks the driver for its name, as node-driver-registrar does with its --timeout (1s
// by default) per attempt.
func driverName(ctx context.Context, endpoint string) (string, error) {
	conn, err := grpc.NewClient("unix://"+endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := csi.NewIdentityClient(conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return "", fmt.Errorf("GetPluginInfo at %s: %w", endpoint, err)
	}
	return info.GetName(), nil
}

// registrar serves the pluginregistration v1 API for one CSI driver.
type registrar struct {
	registerapi.UnimplementedRegistrationServer
	name, endpoint string
	status         chan<- *registerapi.RegistrationStatus
}

func (r registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: r.name, Endpoint: r.endpoint, SupportedVersions: []string{"1.0.0"}}, nil
}

func (r registrar) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	select {
	case r.status <- s:
	default:
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

type identity struct {
	csi.UnimplementedIdentityServer
	name string
}

func (i identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: i.name, VendorVersion: "0.1.0"}, nil
}

func (identity) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{}, nil
}

func (identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

type node struct {
	csi.UnimplementedNodeServer
	opts CSIOptions
}

func (n node) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	resp := &csi.NodeGetInfoResponse{NodeId: n.opts.NodeID, MaxVolumesPerNode: n.opts.MaxVolumesPerNode}
	if n.opts.Topology != nil {
		resp.AccessibleTopology = &csi.Topology{Segments: n.opts.Topology}
	}
	return resp, nil
}

func (node) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}
