// Package minikubelet simulates the Kubernetes kubelet's pod-config and pod-sync machinery.
//
// # Organization
//
// The package list is the pipeline. Pods flow from left to right; the PLEG feeds back and the fake
// API server sits on the side:
//
//	manifests ─▶ sources ─▶ podconfig ─▶ syncloop ─▶ podmanager
//	                                        │  │
//	                 housekeeping ◀─────────┘  ▼
//	                                   podworkers (workqueue) ─▶ podsync ─▶ fakeruntime
//	                                           ▲                    │            │
//	                                           │                    ▼            │
//	                                           │                 status          │
//	                                           └────────── pleg ◀────────────────┘
//
//	   runtimestate: is the runtime up, is the PLEG healthy  ─▶ syncloop (skip), nodestatus (Ready)
//	   nodestatus:   node registration, status heartbeat, lease
//	   prober:       one worker per probe (created by podsync) ─▶ results ─▶ syncloop (probe syncs),
//	                 status (started, ready, Ready), fakeruntime (liveness and startup kills)
//
// The second pipeline discovers node plugins (docs/plugins.md):
//
//	plugins_registry ─▶ pluginwatcher ─▶ pluginmanager ─┬─ DevicePlugin ─▶ devicemanager ─▶ nodestatus, admission
//	                                                    └─ CSIPlugin ─▶ csiplugin ─▶ node annotation, CSINode
//
//	manifest:      decodes, defaults and validates a static pod for the file and http sources
//	fakeapiserver: the API server the api source watches and mirror pods live in
//	scenario:      drives every core synchronously on a vclock for deterministic replay
//	trace:         the one event stream every component writes to
//	kubelet:       builds one node's sync side and wires it; nothing else constructs its siblings
//	sampleplugin:  sample device plugin and CSI driver for the plugin command
//
// Every component is a pure core (no goroutines, channels or wall-clock reads) plus a thin runner in
// its run.go. The run command wraps the cores in runners on the real clock; the replay command drives
// the same cores on a virtual clock. See docs/design/001-architecture.md.
package minikubelet
