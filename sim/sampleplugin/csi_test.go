package sampleplugin

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// The registrar answers GetInfo as node-driver-registrar does, the driver answers NodeGetInfo,
// and a failed registration status ends Run with an error and removes the registration socket.
func TestCSIRegistrar(t *testing.T) {
	root, err := os.MkdirTemp("", "csi")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	c, err := NewCSI(CSIOptions{RootDir: root, Driver: "example.csi.k8s.io", NodeID: "n1", MaxVolumesPerNode: 4, Topology: map[string]string{"zone": "z1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	reg := dial(t, c.RegistrationSocket())
	defer reg.Close()
	info, err := registerapi.NewRegistrationClient(reg).GetInfo(ctx, &registerapi.InfoRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registerapi.CSIPlugin || info.Name != "example.csi.k8s.io" || info.Endpoint != c.Endpoint() || strings.Join(info.SupportedVersions, ",") != "1.0.0" {
		t.Errorf("GetInfo = %v", info)
	}
	drv := dial(t, info.Endpoint)
	defer drv.Close()
	ni, err := csi.NewNodeClient(drv).NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ni.NodeId != "n1" || ni.MaxVolumesPerNode != 4 || ni.AccessibleTopology.Segments["zone"] != "z1" {
		t.Errorf("NodeGetInfo = %v", ni)
	}
	if _, err := registerapi.NewRegistrationClient(reg).NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: false, Error: "no"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "registration of example.csi.k8s.io failed: no") {
		t.Errorf("Run() = %v, want the failed registration", err)
	}
	if _, err := os.Stat(c.RegistrationSocket()); !os.IsNotExist(err) {
		t.Errorf("registration socket left behind: %v", err)
	}
}
