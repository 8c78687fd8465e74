// Package pluginmanager is the kubelet's plugin manager: the desired and actual states of the
// world of plugin registration sockets, the reconciler that compares them every second, and the
// operation executor that registers and unregisters one socket at a time.
//
// It mirrors pkg/kubelet/pluginmanager: cache (DesiredStateOfWorld, ActualStateOfWorld),
// reconciler (reconcile), operationexecutor (OperationExecutor, OperationGenerator) and
// pkg/util/goroutinemap with its exponential back-off. The watcher that fills the desired state
// is package pluginwatcher.
//
//	socket created ─▶ DSW add (fresh id) ─▶ reconcile (every 1s, unregister first)
//	     │                                      │
//	     │             ┌────────────────────────┘ one operation per socket path
//	     ▼             ▼
//	socket removed   register: dial, GetInfo (1s), handler by type, endpoint default,
//	─▶ DSW remove      ValidatePlugin, ASW add, RegisterPlugin, NotifyRegistrationStatus
//	                 unregister: ASW remove, DeRegisterPlugin (no call to the plugin)
//
//	a failed operation: back-off 500ms, doubling, at most 2m2s, until one succeeds
//
// Manager is a core: no goroutine, no lock, no clock reads but through its Clock. Reconcile
// starts operations and returns them; the caller runs each (RunOperation) and reports the result
// with Finish. The runner (run.go) runs operations on goroutines as the kubelet does; replay runs
// them at once, after the pass that started them.
package pluginmanager
