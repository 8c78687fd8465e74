package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/sim/sampleplugin"
)

// newPluginCommand is `minikubelet plugin`: sample node plugins that register with a running
// `minikubelet run` (or a real kubelet) sharing the same --root-dir.
func newPluginCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Run a sample node plugin that registers with the kubelet under --root-dir",
		Long: `plugin runs a sample node plugin over the real gRPC APIs: a device plugin or a CSI driver
with a registrar. It creates its registration socket in <root-dir>/plugins_registry, where a
"minikubelet run" with the same --root-dir finds it, registers it and traces each step
(docs/plugins.md). It runs until SIGINT or SIGTERM and removes its sockets.`,
		Example: `  minikubelet plugin device --resource example.com/gpu --count 4
  minikubelet plugin csi --driver csi.example.com --node-id node-1`,
	}
	cmd.AddCommand(newDevicePluginCommand(), newCSIPluginCommand())
	return cmd
}

func newDevicePluginCommand() *cobra.Command {
	var (
		rootDir, res   string
		count          int
		unhealthyAfter time.Duration
		preferred      bool
	)
	cmd := &cobra.Command{
		Use:   "device",
		Short: "A device plugin (deviceplugin v1beta1) that registers on kubelet.sock",
		Long: `device serves a device plugin (deviceplugin v1beta1) for one extended resource with --count
devices, registers it on <root-dir>/device-plugins/kubelet.sock and streams its devices
(ListAndWatch); with --unhealthy-after, every device turns unhealthy after that long.`,
		Example: `  minikubelet plugin device --resource example.com/gpu --count 2 --unhealthy-after 1m`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rootDir, err := filepath.Abs(rootDir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			p, err := sampleplugin.NewDevice(sampleplugin.DeviceOptions{
				Dir: filepath.Join(rootDir, kubelet.DevicePluginsDir), Resource: res, Count: count, PreferredAllocation: preferred,
			})
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			ctx := cmd.Context()
			if unhealthyAfter > 0 {
				t := time.AfterFunc(unhealthyAfter, func() {
					klog.FromContext(ctx).Info("Marking every device unhealthy", "resource", res)
					_ = p.SetHealth(false)
				})
				defer t.Stop()
			}
			klog.FromContext(ctx).Info("Serving device plugin", "resource", res, "count", count, "endpoint", p.Endpoint())
			return p.Run(ctx)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&rootDir, "root-dir", defaultRootDir(), "the kubelet's root directory; kubelet.sock is in its device-plugins")
	fs.StringVar(&res, "resource", "example.com/gpu", "the extended resource name")
	fs.IntVar(&count, "count", 4, "how many devices")
	fs.DurationVar(&unhealthyAfter, "unhealthy-after", 0, "mark every device unhealthy after this long (0: never)")
	fs.BoolVar(&preferred, "preferred-allocation", false, "offer GetPreferredAllocation")
	return cmd
}

func newCSIPluginCommand() *cobra.Command {
	var (
		rootDir, driver, nodeID string
		maxVolumes              int64
		topology                []string
	)
	cmd := &cobra.Command{
		Use:   "csi",
		Short: "A CSI driver with a registrar in node-driver-registrar's shape in plugins_registry",
		Long: `csi serves a CSI driver's identity and node services and a registrar socket in
<root-dir>/plugins_registry, as node-driver-registrar does; the kubelet's CSI handler writes the
driver into the node's annotation and its CSINode (--node-id, --max-volumes-per-node, --topology).`,
		Example: `  minikubelet plugin csi --driver csi.example.com --node-id node-1 --topology topology.example.com/zone=a`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			segments, err := parseTopology(topology)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			rootDir, err := filepath.Abs(rootDir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			p, err := sampleplugin.NewCSI(sampleplugin.CSIOptions{
				RootDir: rootDir, Driver: driver, NodeID: nodeID, MaxVolumesPerNode: maxVolumes, Topology: segments,
			})
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			klog.FromContext(cmd.Context()).Info("Serving CSI driver", "driver", driver, "endpoint", p.Endpoint(), "registration", p.RegistrationSocket())
			return p.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&rootDir, "root-dir", defaultRootDir(), "the kubelet's root directory; the registrar listens in its plugins_registry")
	fs.StringVar(&driver, "driver", "example.csi.k8s.io", "the CSI driver name")
	fs.StringVar(&nodeID, "node-id", "", "the node id NodeGetInfo reports (default: the host name)")
	fs.Int64Var(&maxVolumes, "max-volumes-per-node", 0, "the volume limit NodeGetInfo reports (0: none)")
	fs.StringSliceVar(&topology, "topology", nil, "accessible topology segments as key=value")
	return cmd
}

// parseTopology parses key=value segments.
func parseTopology(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--topology %q: want key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
