// Package apf orders the fake API server's requests for its store lock as kube-apiserver's API
// Priority and Fairness (APF) orders requests for its seats, with v1.35's default flow schemas
// and priority levels (k8s.io/apiserver's pkg/apis/flowcontrol/bootstrap): Classify names a
// request's priority level and flow, Queue chooses which waiting request goes next, and Lock is
// a mutex that hands its turns out in Queue's order.
//
// kube-apiserver gives each priority level its own share of the server's concurrency, so that a
// node's lease renewals, its pod status writes and an administrator's creates do not wait in
// one line. The fake API server has one lock over its store instead of etcd and many seats, and
// that lock is what its requests wait for: so the levels take turns at the lock in proportion to
// their nominal concurrency shares, exempt requests go first but, while limited ones wait, take
// no more than ExemptRun turns in a row (Queue), and within a level the flows (flow schema and
// user, APF's ByUser distinguisher, or namespace for the schemas that distinguish by it) take
// turns round-robin.
package apf

import "strings"

// Level is a priority level of v1.35's default configuration. The zero Level is Exempt, so that
// the store's own work (expiry, watches reading the history, start-up) that no request
// classified waits for no limited request, as it waits for no APF seat in kube-apiserver.
type Level uint8

// The priority levels, mandatory (exempt, catch-all) and suggested.
const (
	Exempt Level = iota
	NodeHigh
	System
	LeaderElection
	WorkloadHigh
	WorkloadLow
	GlobalDefault
	CatchAll
	numLevels
)

var levelNames = [numLevels]string{"exempt", "node-high", "system", "leader-election", "workload-high", "workload-low", "global-default", "catch-all"}

// String is the level's PriorityLevelConfiguration name.
func (l Level) String() string {
	if l < numLevels {
		return levelNames[l]
	}
	return "unknown"
}

// shares are the nominal concurrency shares of the limited levels (exempt has none).
var shares = [numLevels]uint64{
	NodeHigh: 40, System: 30, LeaderElection: 10, WorkloadHigh: 40, WorkloadLow: 100, GlobalDefault: 20, CatchAll: 5,
}

// Shares returns l's nominal concurrency shares; 0 for Exempt.
func (l Level) Shares() int {
	if l < numLevels {
		return int(shares[l])
	}
	return 0
}

// Flow is one flow of a level: the flow schema that matched and the distinguisher's value (the
// user's name, or the namespace). Comparable, so that it keys a map without being joined into a
// new string at every request.
type Flow struct {
	Schema, Distinguisher string
}

// Class is where a request waits: its level and its flow in the level. The zero Class is exempt.
type Class struct {
	Level Level
	Flow  Flow
}

// Request is what APF's flow schemas match a resource request on: the user's name and groups,
// the verb, the API group, the resource and subresource (which the schemas' rules name joined,
// "nodes/status"; apart here so that no request joins them into a new string), and the namespace
// ("" for a cluster-scoped object or a request across namespaces).
type Request struct {
	User        string
	Groups      []string
	Verb        string
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
}

// The users and groups the default flow schemas name.
const (
	groupMasters         = "system:masters"
	groupNodes           = "system:nodes"
	groupServiceAccounts = "system:serviceaccounts"
	groupAuthenticated   = "system:authenticated"
	groupUnauthenticated = "system:unauthenticated"
	userControllerMgr    = "system:kube-controller-manager"
	userScheduler        = "system:kube-scheduler"
	kubeSystemSAPrefix   = "system:serviceaccount:kube-system:"
)

// Classify returns r's class: the level and flow of the first default flow schema, in matching
// precedence, that r matches. The probes schema matches only non-resource requests, which take
// no store lock, and is left out.
func Classify(r Request) Class {
	in := func(g string) bool {
		for _, h := range r.Groups {
			if h == g {
				return true
			}
		}
		return false
	}
	byUser := func(schema string, l Level) Class { return Class{Level: l, Flow: Flow{schema, r.User}} }
	byNamespace := func(schema string, l Level) Class { return Class{Level: l, Flow: Flow{schema, r.Namespace}} }
	leases := r.APIGroup == "coordination.k8s.io" && r.Resource == "leases" && r.Subresource == "" && r.Namespace != ""
	nodes := r.APIGroup == "" && r.Resource == "nodes" && (r.Subresource == "" || r.Subresource == "status") && r.Namespace == ""
	switch {
	case in(groupMasters): // exempt, precedence 1
		return Class{Level: Exempt, Flow: Flow{Schema: "exempt"}}
	case (r.User == userControllerMgr || r.User == userScheduler || strings.HasPrefix(r.User, kubeSystemSAPrefix)) &&
		leases && (r.Verb == "get" || r.Verb == "create" || r.Verb == "update"): // precedence 100
		return byUser("system-leader-election", LeaderElection)
	case in(groupNodes) && (leases || nodes): // 400
		return byUser("system-node-high", NodeHigh)
	case in(groupNodes): // 500
		return byUser("system-nodes", System)
	case r.User == userControllerMgr: // 800
		return byNamespace("kube-controller-manager", WorkloadHigh)
	case r.User == userScheduler: // 800
		return byNamespace("kube-scheduler", WorkloadHigh)
	case strings.HasPrefix(r.User, kubeSystemSAPrefix): // 900
		return byNamespace("kube-system-service-accounts", WorkloadHigh)
	case in(groupServiceAccounts): // 9000
		return byUser("service-accounts", WorkloadLow)
	case in(groupAuthenticated) || in(groupUnauthenticated): // 9900
		return byUser("global-default", GlobalDefault)
	default: // catch-all, 10000: a user in neither group, which kube-apiserver's authenticators never make
		return byUser("catch-all", CatchAll)
	}
}
