// Package controllers runs the control-plane controllers a node depends on, beside the fake API
// server: the node lifecycle controller and the taint eviction controller of
// kube-controller-manager (package nodelifecycle and tainteviction, the real
// pkg/controller/nodelifecycle and pkg/controller/tainteviction), its pod garbage collector
// (package podgc, pkg/controller/podgc) and a small kube-scheduler (package scheduler,
// pkg/scheduler).
//
// Each controller is a core on an injected clock with two methods, Sync and NextWake: Sync does
// what is due at the clock's now and reacts to what it reads from the API server; NextWake says
// when it next wants to run even if nothing changes. The cores read and write through small
// interfaces they declare; Client here implements all of them over client-go, reading either
// straight from the API server (replay, where the server answers in-process, and lists pods and
// nodes and gets leases without encoding them: Client.Direct) or from informer caches (run and
// apiserver, whose pods, nodes and leases informers list and watch the embedded server in
// process: RunnerOptions.Pods, Nodes and Leases). Replay's reads also give the cores feeds of
// what changed between passes (Client.Changes), so that node lifecycle's taint pass, taint
// eviction and the scheduler look at what changed rather than at every node and pod, as the real
// controllers react to their informers' events; their periodic passes (node lifecycle's health
// check, the pod collector's) still read everything at their periods. Objects read in process are the server's
// stored objects, shared read-only: the cores copy a pod or a node before they change it, and
// never change a lease. Runner is the thin runner: one goroutine that syncs every core when
// its wake-up is due or when an informer saw a change, so the cores never run at once, as replay
// runs them.
//
// Names lists the controllers `--controllers` may switch: nodelifecycle (with the taint
// eviction controller, which kube-controller-manager ran inside it before v1.29), podgc and
// scheduler.
package controllers
