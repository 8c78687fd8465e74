// Package kubelet assembles one kubelet process from its cores, once, for every driver.
//
// It mirrors the kubelet's RunKubelet and NewMainKubelet: the container manager's device manager
// (pkg/kubelet/cm), the pod sources registered in the kubelet's order with PodConfig
// (makePodSourceConfig: file, http, api), the sync side (pod manager, container runtime, PLEG and
// pod cache, work queue, pod workers, status manager, mirror client, pod sync functions,
// housekeeping, runtime state, node status, admit handlers, prober, the volume manager with its
// token manager (volumes.go), sync loop; the ConfigMap and Secret managers and the environment
// maker that is the runtime's helper, objects.go), the plugin
// manager with its watcher and its CSI and device plugin handlers
// (initializeRuntimeDependentModules), the metrics registry and the kubelet server's view. New
// builds them in that order and wires each to the small interfaces the others declare; nothing
// else constructs them.
//
// Everything the process reaches outside itself is a seam of World: the static pod file system,
// the manifest URL's HTTP client, the API server, where Kubernetes events go, the plugin registry
// and what answers behind its sockets (dialers, the device plugin Connector, the CSI driver, the
// checkpoint store), the container runtime and the scripted probe outcomes, which outlive the
// process. Drivers differ only in the world they give and in how they drive:
//
//	run     World from the OS, an API client and client-go's broadcaster; Run wraps the cores in
//	        their runners on the real clock (sources, PodConfig's mux, the ConfigMap and Secret
//	        reflectors and the service informer, the sync loop, the device manager's
//	        kubelet.sock, the plugin manager and watcher). A fleet is N of them sharing one pod
//	        watch (PodWatch, with the node informer, the service informer and the ConfigMap and
//	        Secret reflectors beside it: World.Objects) and one file watch (filewatch.Shared,
//	        RunOptions.FileWatch).
//	replay  World from package world's simulation (its object watches read the in-process API
//	        server); Settle and NextWake step every core on a virtual clock, in a fixed order.
//
// A kubelet restart is New again with the same World: only what the world keeps survives (the
// runtime's containers, the files, the plugins' sockets, the device checkpoint), and the new
// process reads it back as a kubelet does.
//
// Its configuration is one config.Config (package kubelet/config), taken whole, as `run --config`
// and a scenario's settings make it; the crash-loop back-off and the image pull slots are derived
// from it here.
//
// It also traces the start-up (startup.go), the kubelet component of the trace: NewMainKubelet
// and makePodSourceConfig as New builds the process, createAndInitKubelet's BirthCry, then
// Kubelet.Run's steps up to syncLoop and the runtime-dependent modules, when Run starts or a
// stepping driver's first Settle; the runtime's first answer to updateRuntimeUp starts the
// runtime-dependent modules, as the kubelet's oneTimeInitializer does.
//
// Beyond the start-up's order, it only wires: no behaviour lives here. Where two components need
// each other (the pod workers call the sync functions, which write to the status manager and
// wait on the volume manager, both of which ask the pod workers about a pod's state) the
// cycle is broken here with a value that reaches the pod workers, or the volume manager, once they
// exist.
package kubelet
