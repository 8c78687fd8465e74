package admission

import (
	"reflect"
	"slices"
	"testing"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

func rl(pairs ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[v1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func ctr(name string, requests v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Image: "busybox", Resources: v1.ResourceRequirements{Requests: requests}}
}

func testPod(name string, containers ...v1.Container) *v1.Pod {
	return podtest.New(name, podtest.Node("node-1"), podtest.Containers(containers...))
}

func testNode(allocatable v1.ResourceList) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1", "disk": "ssd"}},
		Status:     v1.NodeStatus{Allocatable: allocatable},
	}
}

// TestPodRequestsSidecarsAndOverhead checks the reference's worked example: init A 1 CPU, sidecar
// S 200m, init B 500m, main 300m + 300m, overhead 100m: max(1000, 200, 700, 800) + 100 = 1100m.
func TestPodRequestsSidecarsAndOverhead(t *testing.T) {
	sidecar := ctr("s", rl("cpu", "200m"))
	sidecar.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	pod := testPod("p", ctr("m1", rl("cpu", "300m")), ctr("m2", rl("cpu", "300m")))
	pod.Spec.InitContainers = []v1.Container{ctr("a", rl("cpu", "1")), sidecar, ctr("b", rl("cpu", "500m"))}
	pod.Spec.Overhead = rl("cpu", "100m")
	got := PodRequests(pod)[v1.ResourceCPU]
	if got.MilliValue() != 1100 {
		t.Errorf("cpu request = %dm, want 1100m", got.MilliValue())
	}
	// Without the big init container, the main containers and the sidecar (800m) win.
	pod.Spec.InitContainers = pod.Spec.InitContainers[1:]
	if got := PodRequests(pod)[v1.ResourceCPU]; got.MilliValue() != 900 {
		t.Errorf("cpu request = %dm, want 900m", got.MilliValue())
	}
}

func TestGeneralFilter(t *testing.T) {
	alloc := rl("cpu", "4", "memory", "1Gi", "ephemeral-storage", "10Gi", "pods", "3", "example.com/gpu", "1")
	big := testPod("big", ctr("app", rl("cpu", "3")))
	withPort := func(name string, ip string, port int32) *v1.Pod {
		c := ctr("app", nil)
		c.Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: port, HostIP: ip}}
		return testPod(name, c)
	}
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		node   *v1.Node
		others []*v1.Pod
		want   []string // reason: message
	}{
		{name: "fits", pod: testPod("p", ctr("app", rl("cpu", "1"))), others: []*v1.Pod{big}},
		{name: "out of cpu", pod: testPod("p", ctr("app", rl("cpu", "1500m"))), others: []*v1.Pod{big},
			want: []string{"OutOfcpu: Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000"}},
		{name: "out of memory and pods, pods first", pod: testPod("p", ctr("app", rl("memory", "2Gi"))),
			others: []*v1.Pod{big, testPod("a"), testPod("b")},
			want: []string{"OutOfpods: Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
				"OutOfmemory: Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824"}},
		{name: "limits do not count", pod: func() *v1.Pod {
			p := testPod("p", ctr("app", nil))
			p.Spec.Containers[0].Resources.Limits = rl("cpu", "8")
			return p
		}()},
		{name: "extended resource", pod: testPod("p", ctr("app", rl("example.com/gpu", "2"))),
			want: []string{"OutOfexample.com/gpu: Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"}},
		{name: "extended resource the node lacks is dropped", pod: testPod("p", ctr("app", rl("example.com/fpga", "2")))},
		{name: "node selector", pod: func() *v1.Pod {
			p := testPod("p", ctr("app", nil))
			p.Spec.NodeSelector = map[string]string{"disk": "hdd"}
			return p
		}(), want: []string{"NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"}},
		{name: "required node affinity matches", pod: func() *v1.Pod {
			p := testPod("p", ctr("app", nil))
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd", "nvme"}}}}},
			}}}
			return p
		}()},
		{name: "node name", pod: func() *v1.Pod { p := testPod("p"); p.Spec.NodeName = "node-2"; return p }(),
			want: []string{"NodeName: Predicate NodeName failed: node(s) didn't match the requested node name"}},
		{name: "host port taken on all addresses", pod: withPort("p", "10.0.0.1", 8080), others: []*v1.Pod{withPort("q", "", 8080)},
			want: []string{"NodePorts: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"}},
		{name: "host port on another address", pod: withPort("p", "10.0.0.1", 8080), others: []*v1.Pod{withPort("q", "10.0.0.2", 8080)}},
		{name: "NoExecute taint", pod: testPod("p"), node: func() *v1.Node {
			n := testNode(alloc)
			n.Spec.Taints = []v1.Taint{{Key: "maintenance", Effect: v1.TaintEffectNoExecute}, {Key: "ignored", Effect: v1.TaintEffectNoSchedule}}
			return n
		}(), want: []string{"TaintToleration: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"}},
		{name: "NoExecute taint, static pod", pod: func() *v1.Pod {
			p := testPod("p")
			p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
			return p
		}(), node: func() *v1.Node {
			n := testNode(alloc)
			n.Spec.Taints = []v1.Taint{{Key: "maintenance", Effect: v1.TaintEffectNoExecute}}
			return n
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := tc.node
			if node == nil {
				node = testNode(alloc)
			}
			var got []string
			for _, f := range GeneralFilter(klog.Background(), tc.pod, node, slices.Values(tc.others)) {
				got = append(got, f.Reason()+": "+f.Message())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
		})
	}
}

// dropByACopy is dropMissingExtendedResources as the kubelet's removeMissingExtendedResources
// does it, and as it was here: always on a copy, each container's requests in a list of its own.
func dropByACopy(pod *v1.Pod, allocatable amounts) (_ *v1.Pod, dropped bool) {
	pod = pod.DeepCopy()
	filter := func(containers []v1.Container) {
		for i := range containers {
			kept := v1.ResourceList{}
			for name, q := range containers[i].Resources.Requests {
				if isExtended(name) {
					if _, ok := allocatable.scalar[name]; !ok {
						dropped = true
						continue
					}
				}
				kept[name] = q
			}
			containers[i].Resources.Requests = kept
		}
	}
	filter(pod.Spec.Containers)
	filter(pod.Spec.InitContainers)
	return pod, dropped
}

// TestExtendedRequestsDroppedAsByACopy checks that dropMissingExtendedResources, which copies a
// pod only when it drops a request, hands the fit a pod with the same spec and requests as the
// copy the kubelet always makes, says alike whether it dropped one, returns the pod itself when it
// did not, and never writes to the pod.
func TestExtendedRequestsDroppedAsByACopy(t *testing.T) {
	allocatable := amountsOf(rl("cpu", "4", "memory", "1Gi", "pods", "110", "example.com/gpu", "1"))
	sidecar := func(c v1.Container) v1.Container {
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		return c
	}
	withInit := func(p *v1.Pod, init ...v1.Container) *v1.Pod {
		p.Spec.InitContainers = init
		return p
	}
	tests := []struct {
		name        string
		pod         *v1.Pod
		wantDropped bool
	}{
		{"no container", testPod("p"), false},
		{"no requests", testPod("p", ctr("app", nil)), false},
		{"empty requests", testPod("p", ctr("app", v1.ResourceList{})), false},
		{"cpu and memory", testPod("p", ctr("app", rl("cpu", "500m", "memory", "64Mi"))), false},
		{"hugepages and the kubernetes.io namespace are not extended", testPod("p", ctr("app", rl("hugepages-2Mi", "2Mi", "kubernetes.io/foo", "1"))), false},
		{"requests. prefix is not extended", testPod("p", ctr("app", rl("requests.example.com/x", "1"))), false},
		{"extended resource the node has", testPod("p", ctr("app", rl("cpu", "100m", "example.com/gpu", "1"))), false},
		{"extended resource the node lacks", testPod("p", ctr("app", rl("cpu", "100m", "example.com/fpga", "2"))), true},
		{"lacking in the second container", testPod("p", ctr("a", rl("cpu", "1")), ctr("b", rl("example.com/fpga", "1", "memory", "1Mi"))), true},
		{"lacking in an init container", withInit(testPod("p", ctr("app", rl("cpu", "1"))), ctr("init", rl("example.com/fpga", "1"))), true},
		{"lacking in a sidecar", withInit(testPod("p", ctr("app", nil)), sidecar(ctr("side", rl("example.com/fpga", "1", "cpu", "200m")))), true},
		{"init containers with what the node has", withInit(testPod("p", ctr("app", nil)), ctr("init", rl("example.com/gpu", "1")), sidecar(ctr("side", rl("cpu", "1")))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pod.DeepCopy()
			want, wantDropped := dropByACopy(tt.pod, allocatable)
			got, dropped := dropMissingExtendedResources(tt.pod, allocatable)
			if dropped != wantDropped || dropped != tt.wantDropped {
				t.Errorf("dropped = %t, the copy's %t, want %t", dropped, wantDropped, tt.wantDropped)
			}
			if !dropped && got != tt.pod {
				t.Errorf("nothing dropped, but the pod returned is a copy")
			}
			if !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
				t.Errorf("spec differs from the copy's (-copy +got):\n%s", cmp.Diff(want.Spec, got.Spec))
			}
			if gotReq, wantReq := amountsOf(PodRequests(got)), amountsOf(PodRequests(want)); !reflect.DeepEqual(gotReq, wantReq) {
				t.Errorf("requests = %+v, the copy's %+v", gotReq, wantReq)
			}
			if diff := cmp.Diff(before, tt.pod); diff != "" {
				t.Errorf("the pod was written to (-before +after):\n%s", diff)
			}
		})
	}
}
