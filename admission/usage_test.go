package admission

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// world is a changing set of active pods, and an Admitter told of every change, as the kubelet's
// pod manager, pod workers and status manager tell it.
type world struct {
	active podSet
	a      *Admitter
	node   *v1.Node
	// version makes every replaced pod a new object, as the pod manager's copies are.
	version int
}

func newWorld(t testing.TB) *world {
	w := &world{active: podSet{}, node: testNode(rl("cpu", "4", "memory", "4Gi", "pods", "12", "example.com/gpu", "3"))}
	a, err := New(Options{
		Node:       func(context.Context) (*v1.Node, error) { return w.node, nil },
		ActivePods: w.active,
		Kill:       func(*v1.Pod, func(*v1.PodStatus)) {},
		Status:     statusLog{},
		Devices:    fakeDevices{ok: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.a = a
	return w
}

// randomPod builds one of a small universe of pods (so that UIDs and ports collide), with random
// requests, scalar resources, sidecars and host ports.
func randomPod(r *rand.Rand, version int) *v1.Pod {
	name := fmt.Sprintf("p%d", r.IntN(16))
	var reqs []string
	if r.IntN(2) == 0 {
		reqs = append(reqs, "cpu", fmt.Sprintf("%dm", 1+r.IntN(1500)))
	}
	if r.IntN(3) == 0 {
		reqs = append(reqs, "memory", fmt.Sprintf("%dMi", 1+r.IntN(1024)))
	}
	if r.IntN(4) == 0 {
		reqs = append(reqs, "example.com/gpu", fmt.Sprint(1+r.IntN(2)))
	}
	if r.IntN(8) == 0 {
		reqs = append(reqs, "ephemeral-storage", "1Gi")
	}
	c := ctr("app", rl(reqs...))
	for range r.IntN(3) {
		p := v1.ContainerPort{ContainerPort: 80, HostPort: int32(8080 + r.IntN(3))}
		p.HostIP = []string{"", "0.0.0.0", "10.0.0.1", "10.0.0.2"}[r.IntN(4)]
		if r.IntN(3) == 0 {
			p.Protocol = v1.ProtocolUDP
		}
		c.Ports = append(c.Ports, p)
	}
	pod := testPod(name, c)
	if r.IntN(5) == 0 {
		sidecar := ctr("sidecar", rl("cpu", "100m"))
		sidecar.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		pod.Spec.InitContainers = []v1.Container{sidecar}
	}
	pod.ResourceVersion = fmt.Sprint(version)
	return pod
}

// step applies one random change (a pod added or replaced, or removed), or admits a random pod
// and checks the answer against a count from scratch.
func (w *world) step(t testing.TB, r *rand.Rand) {
	t.Helper()
	w.version++
	switch op := r.IntN(4); op {
	case 0, 1: // added, or replaced by a new object (an update, or the pod terminating)
		p := randomPod(r, w.version)
		w.active[p.UID] = p
		w.a.PodChanged(p.UID)
	case 2: // removed, or finished: no longer active
		uid := k8stypes.UID(fmt.Sprintf("uid-p%d", r.IntN(16)))
		delete(w.active, uid)
		w.a.PodChanged(uid)
	case 3: // a new pod is checked, with itself in the pod manager or not
		pod := randomPod(r, w.version)
		if r.IntN(2) == 0 {
			w.active[pod.UID] = pod
			w.a.PodChanged(pod.UID)
		}
		w.a.refresh()
		logger := klog.Background()
		got := generalFilter(logger, pod, w.node, w.a.usage.without(pod.UID))
		others := func(yield func(*v1.Pod) bool) {
			for _, p := range w.active {
				if p.UID != pod.UID && !yield(p) {
					return
				}
			}
		}
		want := GeneralFilter(logger, pod, w.node, others)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("failures of %s (-recount +kept):\n%s", pod.Name, diff)
		}
	}
	if err := w.a.Verify(); err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(w.a.usage.uids)), slices.Sorted(func(yield func(string) bool) {
		for uid := range w.active {
			if !yield(string(uid)) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Fatalf("device UIDs = %v, want %v", got, want)
	}
}

// TestUsageEqualsRecount runs random sequences of pods added, replaced, removed and admitted, and
// checks after each step that the counts kept one pod at a time equal a count from scratch, and
// that admission answers as it would from a fresh count.
func TestUsageEqualsRecount(t *testing.T) {
	for seed := range uint64(50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, seed))
			w := newWorld(t)
			for range 300 {
				w.step(t, r)
			}
		})
	}
}

// FuzzUsage is TestUsageEqualsRecount on sequences the fuzzer picks.
func FuzzUsage(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint16(100))
	f.Add(uint64(7), uint64(0), uint16(1000))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, steps uint16) {
		r := rand.New(rand.NewPCG(s1, s2))
		w := newWorld(t)
		for range steps % 500 {
			w.step(t, r)
		}
	})
}

// TestPortTaken checks the nodeports conflict rule on kept counts, the excluded pod's own ports
// aside.
func TestPortTaken(t *testing.T) {
	withPorts := func(name string, ports ...v1.ContainerPort) *v1.Pod {
		c := ctr("app", nil)
		c.Ports = ports
		return testPod(name, c)
	}
	port := func(ip string, p int32, proto v1.Protocol) v1.ContainerPort {
		return v1.ContainerPort{ContainerPort: 80, HostIP: ip, HostPort: p, Protocol: proto}
	}
	u := usageOf(slices.Values([]*v1.Pod{
		withPorts("a", port("10.0.0.1", 8080, "")),
		withPorts("b", port("", 9090, v1.ProtocolUDP)),
		withPorts("self", port("10.0.0.2", 7070, ""), port("", 6060, "")),
	}))
	o := u.without("uid-self")
	for _, tc := range []struct {
		want hostPort
		used bool
	}{
		{hostPort{"10.0.0.1", "TCP", 8080}, true},
		{hostPort{"10.0.0.2", "TCP", 8080}, false},
		{hostPort{anyAddress, "TCP", 8080}, true},
		{hostPort{anyAddress, "UDP", 8080}, false},
		{hostPort{"10.0.0.3", "UDP", 9090}, true},
		{hostPort{"10.0.0.3", "TCP", 9090}, false},
		// The excluded pod's own ports are free to it.
		{hostPort{"10.0.0.2", "TCP", 7070}, false},
		{hostPort{anyAddress, "TCP", 6060}, false},
	} {
		if got := o.portTaken(tc.want); got != tc.used {
			t.Errorf("portTaken(%v) = %v, want %v", tc.want, got, tc.used)
		}
	}
}

// TestVerifyFindsAMissedChange checks that Verify reports a change the Admitter was not told of.
func TestVerifyFindsAMissedChange(t *testing.T) {
	w := newWorld(t)
	p := testPod("p", ctr("app", rl("cpu", "1")))
	w.active[p.UID] = p
	if err := w.a.Verify(); err != nil {
		t.Fatalf("Verify() after the first count = %v", err)
	}
	delete(w.active, p.UID) // and no PodChanged
	if err := w.a.Verify(); err == nil {
		t.Error("Verify() = nil after a change the Admitter was not told of")
	}
}

// BenchmarkAdmit admits n pods one after another, each added to the active pods as the kubelet
// does, and reports the cost per admission, which must not grow with n.
func BenchmarkAdmit(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			pods := make([]*v1.Pod, n)
			for i := range pods {
				c := ctr("app", rl("cpu", "1m"))
				c.Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: int32(1000 + i)}}
				pods[i] = testPod(fmt.Sprintf("p%05d", i), c)
			}
			node := testNode(rl("cpu", "100", "memory", "4Gi", "pods", fmt.Sprint(n)))
			b.ReportAllocs()
			for b.Loop() {
				active := podSet{}
				a, err := New(Options{
					Node:       func(context.Context) (*v1.Node, error) { return node, nil },
					ActivePods: active,
					Kill:       func(*v1.Pod, func(*v1.PodStatus)) {},
					Status:     statusLog{},
				})
				if err != nil {
					b.Fatal(err)
				}
				for _, p := range pods {
					active[p.UID] = p
					a.PodChanged(p.UID)
					if !a.Admit(context.Background(), p) {
						b.Fatalf("%s rejected", p.Name)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/pod")
		})
	}
}

// TestActivePodsCountTheirActuatedResources: an active pod holds the larger of its allocated
// requests and the resources its status shows the runtime gave it, as the NodeInfo of the
// kubelet's predicate handler counts it: a pod resized down from 1500m to 500m holds 1500m until
// its status shows the resize actuated. The pod being admitted counts its spec only.
func TestActivePodsCountTheirActuatedResources(t *testing.T) {
	node := testNode(rl("cpu", "2", "pods", "110"))
	tests := []struct {
		name     string
		actuated string // the cpu the active pod's status shows; "" for no status resources
		want     bool
	}{
		{"no status resources", "", true},
		{"actuated as allocated", "500m", true},
		{"resize down not yet actuated", "1500m", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			active := testPod("active", ctr("app", rl("cpu", "500m")))
			if tt.actuated != "" {
				active.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app",
					AllocatedResources: rl("cpu", "500m"), Resources: &v1.ResourceRequirements{Requests: rl("cpu", tt.actuated)}}}
			}
			pod := testPod("new", ctr("app", rl("cpu", "1")))
			// The new pod's own status resources, were it to have any, do not count.
			pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Resources: &v1.ResourceRequirements{Requests: rl("cpu", "2")}}}
			h := newHarness(t, node, []*v1.Pod{active}, nil)
			if got := h.a.Admit(context.Background(), pod); got != tt.want {
				t.Errorf("Admit(1 CPU beside a pod actuated at %q of 2 CPUs) = %v, want %v (events %q)", tt.actuated, got, tt.want, h.drain())
			}
		})
	}
}

// TestFitTakesTheAdmittedPodsShare: the fit measures an admitted pod that is already counted
// among the active pods from the share counted for it, instead of measuring it again, only when
// that share is what PodRequests says of it. Over pods resized (their status reporting other
// resources, a resize infeasible), with sidecars, overhead, pod-level resources, extended
// resources the node has and lacks, and terminating, the failures (each naming the requested
// amount: the node has almost nothing) are those of a fit that measures the pod afresh.
func TestFitTakesTheAdmittedPodsShare(t *testing.T) {
	node := testNode(rl("cpu", "1m", "memory", "1", "ephemeral-storage", "1", "pods", "110", "example.com/gpu", "0"))
	sidecar := func(cpu string) v1.Container {
		c := ctr("sidecar", rl("cpu", cpu))
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		return c
	}
	statusCPU := func(name, allocated, actuated string) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, AllocatedResources: rl("cpu", allocated), Resources: &v1.ResourceRequirements{Requests: rl("cpu", actuated)}}
	}
	tests := []struct {
		name string
		pod  func() *v1.Pod
	}{
		{"cpu and memory", func() *v1.Pod { return testPod("p", ctr("app", rl("cpu", "500m", "memory", "64Mi"))) }},
		{"sidecar, init container and overhead", func() *v1.Pod {
			p := testPod("p", ctr("app", rl("cpu", "300m")))
			p.Spec.InitContainers = []v1.Container{ctr("init", rl("cpu", "1", "ephemeral-storage", "1Gi")), sidecar("200m")}
			p.Spec.Overhead = rl("cpu", "100m", "memory", "10Mi")
			return p
		}},
		{"pod-level resources", func() *v1.Pod {
			p := testPod("p", ctr("app", rl("cpu", "300m")))
			p.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "1Gi")}
			return p
		}},
		{"extended resource the node has", func() *v1.Pod { return testPod("p", ctr("app", rl("cpu", "100m", "example.com/gpu", "1"))) }},
		{"extended resource the node lacks", func() *v1.Pod { return testPod("p", ctr("app", rl("cpu", "100m", "example.com/fpga", "2"))) }},
		{"resized down, not yet actuated", func() *v1.Pod {
			p := testPod("p", ctr("app", rl("cpu", "500m")))
			p.Status.ContainerStatuses = []v1.ContainerStatus{statusCPU("app", "500m", "1500m")}
			return p
		}},
		{"resize infeasible", func() *v1.Pod {
			p := testPod("p", ctr("app", rl("cpu", "3")))
			p.Status.ContainerStatuses = []v1.ContainerStatus{statusCPU("app", "1", "1")}
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
			return p
		}},
		{"sidecar resized", func() *v1.Pod {
			p := testPod("p", ctr("app", rl("cpu", "300m")))
			p.Spec.InitContainers = []v1.Container{sidecar("200m")}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{statusCPU("sidecar", "200m", "700m")}
			return p
		}},
		{"terminating", func() *v1.Pod {
			p := testPod("p", ctr("app", rl("cpu", "250m")))
			p.DeletionTimestamp = &metav1.Time{}
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
			return p
		}},
	}
	logger := klog.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := tt.pod()
			own := usageOf(slices.Values([]*v1.Pod{pod}))
			got := generalFilter(logger, pod, node, own.without(pod.UID))
			want := GeneralFilter(logger, pod, node, slices.Values([]*v1.Pod(nil)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("failures with the pod's own share counted (-measured afresh +own share):\n%s", diff)
			}
			if len(want) == 0 {
				t.Errorf("no failure: the node should be too small for the pod")
			}
		})
	}
}

// TestSharesSummedIntoOneListAsFresh: a usage sums every pod's requests into one list it reuses;
// each share is what summing into a new list gives, over random pods (sidecars, extended
// resources, host ports) some of them with an overhead, pod-level requests, init containers and
// container statuses that report other resources, whatever came before.
func TestSharesSummedIntoOneListAsFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 22))
	u := newUsage(false)
	for i := range 2000 {
		pod := randomPod(r, i)
		if r.IntN(4) == 0 {
			pod.Spec.Overhead = rl("cpu", "10m", "memory", "1Mi")
		}
		if r.IntN(5) == 0 {
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", fmt.Sprintf("%dm", 1+r.IntN(3000)))}
		}
		if r.IntN(4) == 0 {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, ctr("init", rl("memory", fmt.Sprintf("%dMi", 1+r.IntN(2048)), "example.com/gpu", "1")))
		}
		if r.IntN(3) == 0 {
			pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app",
				AllocatedResources: rl("cpu", fmt.Sprintf("%dm", 1+r.IntN(1500))),
				Resources:          &v1.ResourceRequirements{Requests: rl("cpu", fmt.Sprintf("%dm", 1+r.IntN(1500)), "memory", "300Mi")}}}
		}
		u.set(pod)
		want := amountsOf(activeRequests(pod, nil))
		if got := u.pods[pod.UID].requests; got.String() != want.String() {
			t.Fatalf("pod %d: share summed into the reused list = %s, into a new one = %s", i, got, want)
		}
	}
}
