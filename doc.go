// Package minikubelet simulates the Kubernetes kubelet: its pod sources, PodConfig, sync loop, pod
// workers and runtime, its status, probes and node status, and its plugin registration pipeline.
//
// # Organization
//
// The folders at the root are the kubelet, one package per part of it, named as the kubelet names
// them. Pods flow from left to right; the PLEG feeds back:
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
//	sources/staticpod: decodes, defaults and validates a static pod for the file and http sources
//	admission:     the admit handlers HandlePodAdditions runs before a pod gets a worker
//	runtimestate:  is the runtime up, is the PLEG healthy ─▶ syncloop (skip), nodestatus (Ready)
//	nodestatus:    node registration, status heartbeat, lease
//	prober:        one worker per probe (created by podsync) ─▶ results ─▶ syncloop, status, fakeruntime
//	kubecontainer: the container types, the back-off and the restart rule every component shares
//	events:        the reasons of the Kubernetes events the kubelet records
//	metrics:       the kubelet's metric families; metrics/podstartup the pod start SLI
//	kubeletserver: the kubelet's HTTP server on node snapshots
//	volumemanager: the volumes a pod waits for (Secret, ConfigMap, projected, tokens) before its
//	               containers start; volumemanager/objects the ConfigMap and Secret managers
//	kubelet:       the kubelet process, assembled once: sources, PodConfig, the sync side, the plugin
//	               pipeline, behind seams for its world; run wraps runners around it, replay steps it
//	kubelet/config: the kubelet's configuration, decoded from a KubeletConfiguration (v1beta1),
//	               defaulted and validated in one place for --config, the flags and scenario settings
//	kubelet/filewatch: the one inotify instance the file sources and plugin watchers of a process's
//	               nodes share, routed to each by path
//
// plugins holds the second pipeline, which discovers node plugins (docs/plugins.md):
//
//	plugins_registry ─▶ pluginwatcher ─▶ pluginmanager ─┬─ DevicePlugin ─▶ devicemanager ─▶ nodestatus, admission
//	                                                    ├─ CSIPlugin ─▶ csiplugin ─▶ node annotation, CSINode
//	                                                    └─ DRAPlugin ─▶ draplugin ─▶ ResourceSlices
//
// What is not the kubelet lives in three folders, and the kubelet side and the control plane
// import nothing of each other, only api:
//
//	api:          what both sides share through the Kubernetes API: pod defaulting and the QoS class
//	              (apidefaults), pod validation (podvalidation), the pod key (podkey), the event
//	              recorder (eventrecord) and the list-watchers of in-process lists and watches
//	              (listwatch)
//	controlplane: the fake API server (fakeapiserver) and the controllers a node depends on
//	              (controllers: node lifecycle, taint eviction, pod GC, a small scheduler)
//	sim:          the simulator's own machinery: the event trace every component writes to (trace),
//	              the virtual clock (vclock), deterministic replay of scenarios (replay), the world
//	              a replayed kubelet reaches (world: files, the manifest URL, the API server and its
//	              controllers, plugins), the timeline view and lessons (teach), and sample plugins
//	              (sampleplugin)
//
// cmd holds the commands (minikubelet, fleetload); test the test helpers (podtest, the pods tests
// build; benchfloor, the yardstick of the speed benchmarks) and the test modules of their own; and
// manifests and scenarios data: static pods, and scenario files with their golden traces. The
// package scenarios embeds its directory, the scenarios and the lessons, so that the binary carries
// them. docs/examples holds kubeadm's control plane as static pods and a deployment of shards of
// nodes into a cluster.
//
// Every component is a pure core (no goroutines, channels or wall-clock reads) plus a thin runner in
// its run.go. This package holds only what they all share: ErrMissingOption with Missing, the error
// of a constructor whose required option is unset, and Wake and Signal, the runner's wait for its
// core's next wake-up or call (docs/design/003-concurrency-and-constructors.md). Package kubelet
// assembles the cores of one kubelet process; the run command wraps them in runners on the real
// clock, the replay command drives the same assembly on a virtual clock. See
// docs/design/001-architecture.md and docs/design/006-one-kubelet.md.
package minikubelet
