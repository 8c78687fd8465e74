// Package tainteviction is the taint eviction controller of kube-controller-manager
// (pkg/controller/tainteviction, "taint-eviction-controller"): it evicts the pods of a node with
// NoExecute taints they do not tolerate at once, and the pods that tolerate them for a while
// (tolerationSeconds, the smallest of the matching tolerations) when that time is up. Evicting a
// pod gives it the DisruptionTarget condition (reason DeletionByTaintManager, "Taint manager:
// deleting due to NoExecute taint") and deletes it with its own grace period, after a Normal
// TaintManagerEviction event "Marking for deletion Pod <namespace>/<name>". A scheduled eviction
// whose taints go away (the node is Ready again) is cancelled with the event "Cancelling
// deletion of Pod <namespace>/<name>". A deleted node cancels nothing, and a pod deleted and
// created again under its name on a node without NoExecute taints keeps the eviction scheduled
// for its name, which then deletes the new pod, as the real controller's timed worker does.
//
// Controller is a core: one goroutine drives it. The real controller reacts to node and pod
// informer events and keeps timers; here each Sync reads the nodes and pods, compares them with
// what the last pass read (a node's NoExecute taints, a pod's node, UID and tolerations),
// schedules and cancels for what changed as those handlers would, and runs the evictions that
// are due, and NextWake names the next one.
package tainteviction
