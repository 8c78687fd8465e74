package apf_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/apf"
)

func TestClassify(t *testing.T) {
	node := []string{"system:nodes", "system:authenticated"}
	admin := []string{"system:masters", "system:authenticated"}
	tests := []struct {
		name string
		req  apf.Request
		want apf.Class
	}{
		{"an administrator's pod create is exempt",
			apf.Request{User: "minikubelet", Groups: admin, Verb: "create", Resource: "pods", Namespace: "default"},
			apf.Class{Level: apf.Exempt, Flow: apf.Flow{Schema: "exempt"}}},
		{"a node's lease update is node-high",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease"},
			apf.Class{Level: apf.NodeHigh, Flow: apf.Flow{Schema: "system-node-high", Distinguisher: "system:node:n1"}}},
		{"a node's status patch is node-high",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "patch", Resource: "nodes", Subresource: "status"},
			apf.Class{Level: apf.NodeHigh, Flow: apf.Flow{Schema: "system-node-high", Distinguisher: "system:node:n1"}}},
		{"a node's node get is node-high",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "get", Resource: "nodes"},
			apf.Class{Level: apf.NodeHigh, Flow: apf.Flow{Schema: "system-node-high", Distinguisher: "system:node:n1"}}},
		{"a node's list of leases across namespaces is system: the lease rule is namespaced only",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "list", APIGroup: "coordination.k8s.io", Resource: "leases"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}},
		{"a node's pod status patch is system",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "patch", Resource: "pods", Subresource: "status", Namespace: "default"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}},
		{"a node's event create is system",
			apf.Request{User: "system:node:n2", Groups: node, Verb: "create", Resource: "events", Namespace: "default"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n2"}}},
		{"a node's nodes/proxy is not the node-high rule's",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "get", Resource: "nodes", Subresource: "proxy"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}},
		{"nodes in another API group are not the node-high rule's",
			apf.Request{User: "system:node:n1", Groups: node, Verb: "get", APIGroup: "metrics.k8s.io", Resource: "nodes"},
			apf.Class{Level: apf.System, Flow: apf.Flow{Schema: "system-nodes", Distinguisher: "system:node:n1"}}},
		{"the controller manager's lease update is leader-election",
			apf.Request{User: "system:kube-controller-manager", Groups: []string{"system:authenticated"}, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"},
			apf.Class{Level: apf.LeaderElection, Flow: apf.Flow{Schema: "system-leader-election", Distinguisher: "system:kube-controller-manager"}}},
		{"the controller manager's lease patch is not leader-election's verb",
			apf.Request{User: "system:kube-controller-manager", Groups: []string{"system:authenticated"}, Verb: "patch", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"},
			apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-controller-manager", Distinguisher: "kube-system"}}},
		{"the controller manager's pod list is workload-high, by namespace",
			apf.Request{User: "system:kube-controller-manager", Groups: []string{"system:authenticated"}, Verb: "list", Resource: "pods"},
			apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-controller-manager", Distinguisher: ""}}},
		{"the scheduler's binding is workload-high",
			apf.Request{User: "system:kube-scheduler", Groups: []string{"system:authenticated"}, Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "default"},
			apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-scheduler", Distinguisher: "default"}}},
		{"a kube-system service account is workload-high",
			apf.Request{User: "system:serviceaccount:kube-system:node-controller", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}, Verb: "patch", Resource: "nodes", Subresource: "status"},
			apf.Class{Level: apf.WorkloadHigh, Flow: apf.Flow{Schema: "kube-system-service-accounts", Distinguisher: ""}}},
		{"another service account is workload-low",
			apf.Request{User: "system:serviceaccount:default:app", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}, Verb: "get", Resource: "configmaps", Namespace: "default"},
			apf.Class{Level: apf.WorkloadLow, Flow: apf.Flow{Schema: "service-accounts", Distinguisher: "system:serviceaccount:default:app"}}},
		{"the anonymous user is global-default",
			apf.Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "create", Resource: "pods", Namespace: "default"},
			apf.Class{Level: apf.GlobalDefault, Flow: apf.Flow{Schema: "global-default", Distinguisher: "system:anonymous"}}},
		{"an authenticated user is global-default",
			apf.Request{User: "jane", Groups: []string{"system:authenticated"}, Verb: "get", Resource: "pods", Namespace: "default"},
			apf.Class{Level: apf.GlobalDefault, Flow: apf.Flow{Schema: "global-default", Distinguisher: "jane"}}},
		{"a user in no group is catch-all",
			apf.Request{User: "nobody", Verb: "get", Resource: "pods", Namespace: "default"},
			apf.Class{Level: apf.CatchAll, Flow: apf.Flow{Schema: "catch-all", Distinguisher: "nobody"}}},
		{"system:masters wins over system:nodes",
			apf.Request{User: "system:node:n1", Groups: []string{"system:nodes", "system:masters"}, Verb: "patch", Resource: "pods", Subresource: "status", Namespace: "default"},
			apf.Class{Level: apf.Exempt, Flow: apf.Flow{Schema: "exempt"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, apf.Classify(tt.req)); diff != "" {
				t.Errorf("Classify(%+v) (-want +got):\n%s", tt.req, diff)
			}
		})
	}
}

func TestLevels(t *testing.T) {
	type level struct {
		Name   string
		Shares int
	}
	var got []level
	for l := apf.Exempt; l <= apf.CatchAll; l++ {
		got = append(got, level{l.String(), l.Shares()})
	}
	// v1.35's default priority levels and their nominal concurrency shares.
	want := []level{
		{"exempt", 0}, {"node-high", 40}, {"system", 30}, {"leader-election", 10}, {"workload-high", 40},
		{"workload-low", 100}, {"global-default", 20}, {"catch-all", 5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
}
