package kubelet

import (
	"net/http"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/kubelet/allocation"
	"github.com/minikubelet/minikubelet/nodestatus"
	"github.com/minikubelet/minikubelet/plugins/csiplugin"
	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/draplugin"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/volumemanager"
)

// World is everything a kubelet process reaches outside itself: the seams through which `run`
// gives it the machine and the API server, and a replay its simulation of them. Each is nil-able
// where a kubelet can run without it. A restarted kubelet is built again with the same World:
// the runtime, the files, the plugins' sockets and the checkpoint outlive the process.
type World struct {
	// StaticPods is the file system the file source reads staticPodPath from; nil is the disk.
	StaticPods sources.FileSystem
	// ManifestClient makes the http source's requests; nil is a default client.
	ManifestClient *http.Client
	// API is the API server. Nil is a standalone kubelet: no api source, node object, mirror
	// pods, status writes or CSI handler.
	API kubernetes.Interface
	// HeartbeatAPI is the client of the node status and the lease: the kubelet's heartbeat
	// client, which has no rate limit. Nil is API.
	HeartbeatAPI kubernetes.Interface
	// Writes, when set, are clients of an API server in the same process for the kubelet's
	// hottest requests, which then skip client-go and HTTP (a replay: sim/world's NodeWrites;
	// `run` with its embedded API server). Nil sends them through API and HeartbeatAPI, as `run`
	// does with --kubeconfig. API is still required for the rest.
	Writes *Writes
	// Events receives the kubelet's Kubernetes events once they are traced (`run`: client-go's
	// broadcaster; replay: eventrecord.APIRecorder). Nil records none beyond the trace.
	Events record.EventRecorder
	// Plugins is the plugin registry and the plugins behind it; nil runs no plugin pipeline.
	Plugins *PluginWorld
	// Runtime is the container runtime, which outlives the kubelet process: a restarted kubelet
	// finds its containers in it. Nil makes a new one with Options.Latencies.
	Runtime *fakeruntime.Runtime
	// Allocations keeps the allocation manager's checkpoint, allocated_pods_state in the root
	// directory, which outlives the process: a restarted kubelet admits each pod it knew with
	// the resources allocated to it, and a resize pending at the restart stays pending. Nil
	// keeps the allocations in memory only. AllocationsOnDisk makes the file.
	Allocations allocation.Checkpointer
	// PodDirs keeps the volumes mounted in the pods' directories of the root directory, which
	// outlive the process: a restarted kubelet reconstructs them as uncertain and tears down
	// those no pod it has uses. A replay keeps a *PodDirs per node in memory; PodDirsOnDisk is
	// `run`'s, in the root directory. Nil keeps nothing: a new process finds none.
	PodDirs volumemanager.Dirs
	// VolumeFaults are the failures scripted for the volume plugins' SetUp and TearDown, the
	// node's mounter failing under them; they outlive a restart, as the pods' directories do.
	// Nil fails none (`run`).
	VolumeFaults volumemanager.PluginFaults
	// ProbeScript holds the probe outcomes scripted from outside the kubelet; it outlives a
	// restart, as the containers do. Nil leaves the pods' probe annotations and the default,
	// success.
	ProbeScript *prober.Script
	// Objects are the watches of the ConfigMaps and Secrets the pods reference and the service
	// informer, for a driver that steps the kubelet (a replay: sim/world's Objects) or for a
	// fleet's node in `run`, which shares the fleet's (PodWatch.Objects, run by the PodWatch's
	// Run). Nil with an API server is a single node's in `run`: client-go reflectors of its own
	// that Run runs.
	Objects ObjectSource
	// APIWatch simulates the api source's reflector for a driver that steps the kubelet (a
	// replay): New makes its first list and Settle pumps it. Nil in `run`, where Run's reflector
	// feeds the api source.
	APIWatch APIWatch
}

// Writes are the clients of the kubelet's hottest requests, for an API server in the same process:
// each answers and fails as the client-go adapter over API it stands for. A nil field is that
// adapter.
type Writes struct {
	// PodStatus reads pods, patches their status, and deletes them (the status manager).
	PodStatus status.PodStatusClient
	// Mirror creates and deletes mirror pods, and reads the node for their owner reference.
	Mirror podmanager.MirrorAPI
	// Node reads the node (admission, the node status' first read), and writes its status and
	// lease (the heartbeat client's requests, unless Heartbeat is set).
	Node nodestatus.Client
	// Heartbeat, when set, writes the node's status and lease in Node's place: the heartbeat
	// client's requests, where the client they stand for differs from the API client's (`run`:
	// no rate limit, a timeout).
	Heartbeat nodestatus.Client
	// Tokens requests service account tokens (the volume manager's token manager).
	Tokens volumemanager.TokenClient
}

// PluginWorld is the plugin registry and what answers behind its sockets: the kubelet's
// plugins_registry and device-plugins directories, the dialers of both APIs, the CSI drivers, the
// DRA drivers' plugins, and the device manager's checkpoint store. PluginsOnDisk makes the real ones.
type PluginWorld struct {
	// Registry is the plugin registry directory the watcher watches. Required.
	Registry string
	// DevicePlugins is the device plugin directory: kubelet.sock, and the directory a
	// Register request names its endpoint in. Required.
	DevicePlugins string
	// FS is the file system the watcher reads the registry through. Required.
	FS pluginwatcher.FS
	// Dialer connects to registration sockets. Required.
	Dialer pluginmanager.Dialer
	// Devices connects to device plugins' endpoints. Required.
	Devices devicemanager.Connector
	// CSI answers NodeGetInfo for CSI drivers. Required with an API server.
	CSI csiplugin.NodeInfoGetter
	// DRA connects to DRA drivers' plugins. Required.
	DRA draplugin.Connector
	// Checkpoint stores the device manager's checkpoint; it outlives the process. Required.
	Checkpoint devicemanager.Checkpointer
	// NewID names each socket the watcher finds: a random UUID on disk, a counter in a replay.
	// Required.
	NewID func() string
}

// The kubelet's directories under its root directory (pkg/kubelet/config/defaults.go and the
// device plugin API's DevicePluginPath).
const (
	PluginsRegistryDir = "plugins_registry"
	DevicePluginsDir   = "device-plugins"
)

// PluginsOnDisk is the plugin world of a kubelet whose root directory is root: the registry and
// the device plugin directory under it, unix sockets dialed over gRPC, the checkpoint file.
func PluginsOnDisk(root string) *PluginWorld {
	devices := filepath.Join(root, DevicePluginsDir)
	return &PluginWorld{
		Registry:      filepath.Join(root, PluginsRegistryDir),
		DevicePlugins: devices,
		FS:            pluginwatcher.OS{},
		Dialer:        pluginmanager.GRPCDialer{},
		Devices:       devicemanager.GRPC{Dial: pluginmanager.DialUnix},
		CSI:           csiplugin.GRPCDriver{Dial: pluginmanager.DialUnix},
		DRA:           draplugin.GRPC{},
		Checkpoint:    devicemanager.FileCheckpoint{Path: filepath.Join(devices, devicemanager.CheckpointFile)},
		NewID:         func() string { return string(uuid.NewUUID()) },
	}
}

// PodDirsOnDisk is the pods' volume directories of a kubelet whose root directory is root
// (<root>/pods/<uid>/volumes/<plugin dir>/<volume name>); logger receives what cannot be read or
// removed there.
func PodDirsOnDisk(root string, logger klog.Logger) *volumemanager.DiskDirs {
	return &volumemanager.DiskDirs{Root: root, Logger: logger}
}

// AllocationsOnDisk is the allocation checkpoint of a kubelet whose root directory is root.
func AllocationsOnDisk(root string) allocation.FileCheckpoint {
	return allocation.FileCheckpoint{Path: filepath.Join(root, allocation.CheckpointFile)}
}

// APIWatch is a stepping driver's simulation of the api source's reflector over the node's pods.
// It hands the source what the API server holds and what changed; the source's updates are
// queued for PodConfig.
type APIWatch interface {
	// List is the reflector's first list, made when the kubelet is built. An API server that
	// does not answer leaves the list to a later Pump.
	List(src *sources.API) []podconfig.Update
	// Pump hands src every change since the last call (a relist when the watch's history is
	// gone, or the list List could not make), and returns src's updates; none while the API
	// server does not answer.
	Pump(src *sources.API) []podconfig.Update
	// Pending reports whether a Pump now would hand src anything: what lets a stepping driver
	// leave a kubelet with nothing due alone.
	Pending() bool
}

// eventsRecorder is the process's one event recorder: it traces every Kubernetes event, then
// hands it to the world's.
func eventsRecorder(opts Options) (*eventrecord.Tracing, error) {
	return eventrecord.NewTracing(opts.World.Events, opts.Tracer)
}

// PodDirs is the volumes kept in the pods' directories (volumemanager.PodDirs); its zero value
// holds none.
type PodDirs = volumemanager.PodDirs

// VolumeFaults scripts failures of the volume plugins' SetUp and TearDown per pod and volume
// (volumemanager.Faults); its zero value scripts none.
type VolumeFaults = volumemanager.Faults

// VolumeOperation is an operation VolumeFaults can make fail (volumemanager.Operation):
// VolumeSetUp or VolumeTearDown.
type VolumeOperation = volumemanager.Operation

// The operations VolumeFaults can make fail.
const (
	VolumeSetUp    = volumemanager.OpSetUp
	VolumeTearDown = volumemanager.OpTearDown
)

// VolumeOperations lists the operations VolumeFaults can make fail (volumemanager.Operations,
// which hands out a copy, the caller's to change).
func VolumeOperations() []VolumeOperation { return volumemanager.Operations() }
