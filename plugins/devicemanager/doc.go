// Package devicemanager is the kubelet's device manager: it takes device plugins in, turns their
// ListAndWatch streams into the node's capacity and allocatable for their extended resources,
// allocates devices to containers and keeps a checkpoint of both.
//
// It mirrors pkg/kubelet/cm/devicemanager (manager.go, endpoint.go, checkpoint, and the
// registration server and client of plugin/v1beta1), before the per-socket endpoints of 1.37:
// one endpoint per resource name.
//
//	Register on kubelet.sock, or a DevicePlugin socket in plugins_registry (pluginmanager)
//	  ─▶ validate (version v1beta1, extended resource name) ─▶ dial, GetDevicePluginOptions
//	  ─▶ PluginConnected ─▶ ListAndWatch: each message replaces the healthy/unhealthy sets
//	        capacity = healthy + unhealthy, allocatable = healthy (node status, every 10s)
//	  stream ends ─▶ PluginDisconnected: every device unhealthy, endpoint stopped
//	        for 5 minutes capacity stays, allocatable 0; then the resource is removed (0)
//
// Manager is a core: no goroutine, no lock; it reads time from its Clock and calls plugins
// through the small Plugin interface. Handler (handler.go) is the registration side both paths
// share, the plugin manager's DevicePlugin handler and kubelet.sock's Register: validate,
// connect through a Connector, ask for the options, record the endpoint, watch the devices. The
// Connector is the world: GRPC (grpc.go) dials unix sockets and streams ListAndWatch on a
// goroutine per plugin in `run`; a replay's simulated plugins answer in memory. Server
// (server.go) is the runner: the manager's Start (the checkpoint read back) and the kubelet.sock
// gRPC server.
package devicemanager
