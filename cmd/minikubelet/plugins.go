package main

import (
	"context"
	"os"
	"path/filepath"

	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/metrics"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/plugins/csiplugin"
	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
)

// The kubelet's directories under its root directory (pkg/kubelet/config/defaults.go and the
// device plugin API's DevicePluginPath).
const (
	pluginsRegistryDir = "plugins_registry"
	devicePluginsDir   = "device-plugins"
)

// defaultRootDir is where `run` keeps its sockets and checkpoints unless --root-dir says
// otherwise: the kubelet's /var/lib/kubelet needs root, so minikubelet uses the user's state
// directory ($XDG_STATE_HOME, else ~/.local/state).
func defaultRootDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "minikubelet")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "minikubelet")
}

// startPlugins builds the plugin registration pipeline under cfg.RootDir, as the kubelet's
// container manager and initializeRuntimeDependentModules do: the device manager (kubelet.sock
// and its DevicePlugin handler), the CSI handler when there is an API server, the plugin manager
// and its watcher. It returns the device manager for the node status and pod admission; nil when
// cfg.RootDir is empty.
func startPlugins(ctx context.Context, cfg *runConfig, g *group, d kubeletDeps, client kubernetes.Interface, reg *metrics.Registry) (kubelet.Devices, error) {
	if cfg.RootDir == "" {
		return nil, nil
	}
	devDir := filepath.Join(cfg.RootDir, devicePluginsDir)
	dm, err := devicemanager.New(devicemanager.Options{
		Clock: d.clock, Tracer: d.tracer,
		Checkpoint: devicemanager.FileCheckpoint{Path: filepath.Join(devDir, devicemanager.CheckpointFile)},
	})
	if err != nil {
		return nil, err
	}
	devices, err := devicemanager.NewHandler(devicemanager.HandlerOptions{Manager: dm, Connector: devicemanager.GRPC{Dial: pluginmanager.DialUnix}, Dir: devDir, Tracer: d.tracer})
	if err != nil {
		return nil, err
	}
	server, err := devicemanager.NewServer(devicemanager.ServerOptions{Handler: devices, Dir: devDir})
	if err != nil {
		return nil, err
	}
	pm, err := pluginmanager.New(pluginmanager.Options{Clock: d.clock, Tracer: d.tracer, NewID: func() string { return string(uuid.NewUUID()) }})
	if err != nil {
		return nil, err
	}
	pm.AddHandler(registerapi.DevicePlugin, devices)
	if client != nil {
		csi, err := csiplugin.New(csiplugin.Options{
			Nodes:  csiplugin.APINodeInfo{Client: client, NodeName: cfg.NodeName},
			Driver: csiplugin.GRPCDriver{Dial: pluginmanager.DialUnix},
			Tracer: d.tracer,
		})
		if err != nil {
			return nil, err
		}
		pm.AddHandler(registerapi.CSIPlugin, csi)
	}
	runner, err := pluginmanager.NewRunner(pluginmanager.RunnerOptions{Manager: pm, Clock: d.clock, Dialer: pluginmanager.GRPCDialer{}, Tracer: d.tracer,
		Metrics: reg.SetTotalPlugins})
	if err != nil {
		return nil, err
	}
	registry := filepath.Join(cfg.RootDir, pluginsRegistryDir)
	w, err := pluginwatcher.New(pluginwatcher.Options{Dir: registry, FS: pluginwatcher.OS{}, Desired: pm.Desired(), Tracer: d.tracer})
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).Info("Starting plugin registration", "rootDir", cfg.RootDir, "pluginsRegistry", registry, "devicePlugins", devDir)
	g.Go(ctx, "device manager", server.Run)
	g.Go(ctx, "plugin manager", runner.Run)
	g.Go(ctx, "plugin watcher", func(ctx context.Context) error {
		if err := pluginwatcher.Run(ctx, w, runner.Lock, nil); err != nil {
			// The kubelet logs a failed watcher start and goes on without plugins.
			klog.FromContext(ctx).Error(err, "The plugin watcher failed to start")
		}
		return nil
	})
	return devices, nil
}
