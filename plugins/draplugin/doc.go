// Package draplugin is the kubelet's DRA handler as far as registration goes: the DRAPlugin
// handler of the plugin manager, which keeps each driver's plugins and their connections, and
// deletes the node's ResourceSlices of a driver that has had no connected plugin for 30 seconds.
// Every v1.35 kubelet has it: the DynamicResourceAllocation gate is GA and locked on.
//
// It mirrors pkg/kubelet/cm/dra/plugin (DRAPluginManager, monitoredPlugin) and the parts of
// pkg/kubelet/cm/dra/manager.go that start it:
//
//	start            the node's ResourceSlices of every driver are deleted (the last kubelet's
//	                 drivers have not registered again yet)
//	ValidatePlugin   the plugin's supported versions must name a service the kubelet calls:
//	                 v1.DRAPlugin or v1beta1.DRAPlugin; the first of its list that does is chosen
//	RegisterPlugin   validate again; an endpoint the driver already has a plugin on is refused;
//	                 make the connection (not connected yet), add the plugin, sync, connect
//	connection up    sync: the driver is usable, a pending wipe is cancelled
//	connection down  sync: no plugin of the driver connected, a wipe is due in 30s
//	DeRegisterPlugin forget the plugin, sync, close its connection
//	wipe             DELETE resourceslices?fieldSelector=spec.driver=D,spec.nodeName=N; a
//	                 failure is retried after 1s, 2s, 4s ... (up to 20% more), 9 attempts
//
// A driver may have several plugins (a new one registering while the old one runs): it is
// usable while one of them is connected, and only then do its slices stay.
//
// Manager is the core: no goroutine, no lock, time from its Clock. Handler (handler.go) is the
// handler the plugin manager calls, shared in `run` by the plugin manager's operations, the
// connections' reports and the Runner, so its lock guards the Manager. The Connector is the
// world: GRPC (grpc.go) in `run`, the simulated plugins in a replay. Runner (run.go) carries out
// the wipes on the real clock; a replay calls Advance when NextWake says.
//
// Claims are not modelled: the kubelet's NodePrepareResources and NodeUnprepareResources, its
// claim info cache and checkpoint, CDI devices and the health stream (ResourceHealthStatus is
// alpha and off in v1.35) have no counterpart here.
package draplugin
