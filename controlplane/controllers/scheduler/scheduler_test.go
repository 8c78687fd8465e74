package scheduler_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/scheduler"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func node(name string, mutate func(*v1.Node)) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("110")}
	if mutate != nil {
		mutate(n)
	}
	return n
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []*v1.Node
		pod      func(*v1.Pod)
		wantNode string
		wantMsg  string // the PodScheduled message when unschedulable
	}{
		{name: "fits", nodes: []*v1.Node{node("a", nil)}, wantNode: "a"},
		{name: "least allocated wins", nodes: []*v1.Node{node("a", nil), node("b", func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("8") })},
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
			}, wantNode: "b"},
		{name: "no nodes", wantMsg: "no nodes available to schedule pods"},
		{name: "insufficient cpu", nodes: []*v1.Node{node("a", nil)},
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}
			},
			wantMsg: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
		{name: "node selector", nodes: []*v1.Node{node("a", nil), node("b", func(n *v1.Node) { n.Labels["disk"] = "ssd" })},
			pod: func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }, wantNode: "b"},
		{name: "required affinity unmet", nodes: []*v1.Node{node("a", nil)},
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"z1"}}}}}}}}
			},
			wantMsg: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
		{name: "untolerated taint and unschedulable node",
			nodes: []*v1.Node{
				node("a", func(n *v1.Node) {
					n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
				}),
				node("b", func(n *v1.Node) { n.Spec.Unschedulable = true }),
			},
			wantMsg: "0/2 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."},
		{name: "tolerated taint", nodes: []*v1.Node{node("a", func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
		})},
			pod: func(p *v1.Pod) {
				p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "x", Effect: v1.TaintEffectNoSchedule}}
			}, wantNode: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := vclock.New(vclock.Epoch)
			c := ctrltest.NewClient(t, clk)
			for _, n := range tt.nodes {
				created, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				created.Status = n.Status
				if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
			if tt.pod != nil {
				tt.pod(pod)
			}
			if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			s, err := scheduler.New(scheduler.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(ctx); err != nil {
				t.Fatalf("Sync() = %v", err)
			}
			got, err := c.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var msg string
			var scheduled v1.ConditionStatus
			for _, cond := range got.Status.Conditions {
				if cond.Type == v1.PodScheduled {
					msg, scheduled = cond.Message, cond.Status
				}
			}
			if got.Spec.NodeName != tt.wantNode {
				t.Errorf("spec.nodeName = %q, want %q", got.Spec.NodeName, tt.wantNode)
			}
			if diff := cmp.Diff(tt.wantMsg, msg); diff != "" {
				t.Errorf("PodScheduled message (-want +got):\n%s", diff)
			}
			wantStatus := v1.ConditionFalse
			if tt.wantNode != "" {
				wantStatus = v1.ConditionTrue
			}
			if scheduled != wantStatus {
				t.Errorf("PodScheduled = %q, want %q", scheduled, wantStatus)
			}
		})
	}
}
