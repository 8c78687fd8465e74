package kubelet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/admission"
	"github.com/minikubelet/minikubelet/fakeruntime"
)

// oneGoroutineUnderRace is why a test that settles a node from the test's goroutine on the
// virtual clock (the API server in process, without sockets), and takes tens of seconds under
// -race, skips there: the race detector needs a second goroutine to find anything, and the tests
// of Run and the fleet's runner, which start them, run under it; the plain suite runs this one.
const oneGoroutineUnderRace = "settles a node on the test's goroutine, nothing for the race detector"

// TestAdmissionCountsEqualRecount drives a whole node through random sequences of static pods
// added, changed and removed, API pods created and deleted, containers that exit (so that pods
// finish) and pods rejected or preempted for lack of room, and checks at every instant that the
// counts admission keeps of the active pods, from the changes the pod manager, the pod workers and
// the status manager report, equal a count from scratch of the kubelet's GetActivePods.
func TestAdmissionCountsEqualRecount(t *testing.T) {
	if raceEnabled {
		t.Skip(oneGoroutineUnderRace)
	}
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			e := newEnv(t, envOptions{discard: true, maxPods: 8})
			// A second admitter, wired as the node's own, whose counts the test can read.
			check, err := newAdmitter(e.opts, &e.k.Sync, record.NewFakeRecorder(100), nil)
			if err != nil {
				t.Fatal(err)
			}
			verify := func() bool {
				if err := check.Verify(); err != nil {
					t.Fatalf("at %v: %v", e.now(), err)
				}
				return false
			}
			static := map[string]*v1.Pod{}
			var apiPods []string
			for step := range 60 {
				switch r.IntN(4) {
				case 0: // a static pod added or changed (a new UID), or removed
					name := fmt.Sprintf("s%d", r.IntN(5))
					if _, ok := static[name]; ok && r.IntN(3) == 0 {
						delete(static, name)
					} else {
						static[name] = randomAdmitPod(r, name, types.UID(fmt.Sprintf("%s-%d", name, step)), true)
					}
					var pods []*v1.Pod
					for _, p := range static {
						pods = append(pods, p)
					}
					e.setFile(pods...)
				case 1, 2: // an API pod created
					name := fmt.Sprintf("a%d", step)
					pod := randomAdmitPod(r, name, "", false)
					if _, err := e.client.CoreV1().Pods("default").Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					apiPods = append(apiPods, name)
				case 3: // an API pod deleted
					if len(apiPods) == 0 {
						continue
					}
					i := r.IntN(len(apiPods))
					err := e.client.CoreV1().Pods("default").Delete(e.ctx, apiPods[i], metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](int64(r.IntN(3)))})
					if err != nil && !apierrors.IsNotFound(err) {
						t.Fatal(err)
					}
					apiPods = append(apiPods[:i], apiPods[i+1:]...)
				}
				e.run(time.Duration(r.IntN(8))*time.Second, verify)
			}
			e.run(2*time.Minute, verify)
		})
	}
}

// randomAdmitPod builds a pod with a random cpu request (the node has 4 cpus), sometimes a host
// port, a container that sometimes exits, and a restart policy that lets it finish. A static pod
// is critical and may preempt API pods.
func randomAdmitPod(r *rand.Rand, name string, uid types.UID, isStatic bool) *v1.Pod {
	var pod *v1.Pod
	if isStatic {
		pod = staticPod(name, uid, v1.RestartPolicyAlways)
	} else {
		pod = &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       v1.PodSpec{NodeName: testNode, Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
	}
	c := &pod.Spec.Containers[0]
	if r.IntN(3) > 0 {
		c.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 100*(1+r.IntN(15))))}
	}
	if r.IntN(4) == 0 {
		c.Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: int32(8080 + r.IntN(2))}}
	}
	if r.IntN(2) == 0 {
		pod.Spec.RestartPolicy = []v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyOnFailure}[r.IntN(2)]
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[fakeruntime.AnnotationExitAfter+"app"] = fmt.Sprintf("%ds", 1+r.IntN(10))
	}
	return pod
}

// TestAdditionsSkipAdmissionForFinishedAndTerminatingPods: HandlePodAdditions asks the admit
// handlers only about a pod that has not finished and whose termination was not requested; the
// others go to their pod workers unadmitted and unallocated. The handlers here refuse every pod
// (the node cannot be read), so only the pod that is asked is refused.
func TestAdditionsSkipAdmissionForFinishedAndTerminatingPods(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, discard: true})
	refuseAll, err := admission.New(admission.Options{
		Node:       func(context.Context) (*v1.Node, error) { return nil, errors.New("no node") },
		ActivePods: activePods{&e.k.Sync},
		Kill:       func(*v1.Pod, func(*v1.PodStatus)) { t.Error("a pod was preempted") },
		Status:     e.k.Sync.Status,
	})
	if err != nil {
		t.Fatal(err)
	}
	terminating := types.UID("uid-terminating")
	a := allocatingAdmitter{admitter: refuseAll, alloc: e.k.Sync.Allocation, terminationRequested: func(uid types.UID) bool { return uid == terminating }}
	tests := []struct {
		name  string
		uid   types.UID
		phase v1.PodPhase
		want  bool
	}{
		{"succeeded", "uid-succeeded", v1.PodSucceeded, true},
		{"failed", "uid-failed", v1.PodFailed, true},
		{"terminating", terminating, v1.PodRunning, true},
		{"pending", "uid-pending", v1.PodPending, false},
	}
	for _, tt := range tests {
		pod := staticPod(tt.name, tt.uid, v1.RestartPolicyAlways)
		pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}
		pod.Status.Phase = tt.phase
		if got := a.Admit(e.ctx, pod); got != tt.want {
			t.Errorf("Admit(%s pod) = %v, want %v", tt.name, got, tt.want)
		}
		// An allocation, had one been made, would stand in for the spec's larger request.
		wider := pod.DeepCopy()
		wider.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1")
		if _, allocated := e.k.Sync.Allocation.UpdatePodFromAllocation(wider); allocated {
			t.Errorf("the %s pod was allocated", tt.name)
		}
	}
}
