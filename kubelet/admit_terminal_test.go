package kubelet

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// A pod is terminal for admission (the kubelet's isAdmittedPodTerminal) by its API phase or the
// status manager's: a pod whose API status shows Failed, while the kubelet's own status still
// says Running and its termination was not requested, is not active, and does not count against
// a new pod.
func TestAPITerminalPhaseMakesAPodInactive(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, noFileSource: true})
	e.settle()
	withCPU := func(name, cpu string, phase v1.PodPhase) *v1.Pod {
		p := staticPod(name, types.UID("uid-"+name), v1.RestartPolicyAlways)
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
		p.Status.Phase = phase
		return p
	}
	e.apiPods(withCPU("big", "3", v1.PodRunning))
	if !e.run(time.Minute, func() bool { return e.phase("uid-big") == v1.PodRunning }) {
		t.Fatal("big not Running")
	}
	e.apiPods(withCPU("big", "3", v1.PodFailed)) // someone else wrote Failed into its API status
	e.runFor(time.Second)
	if e.k.Sync.Workers.IsPodTerminationRequested("uid-big") {
		t.Fatal("termination requested: the premise does not hold")
	}
	t.Logf("big: status manager phase %s", e.phase("uid-big"))
	e.apiPods(withCPU("big", "3", v1.PodFailed), withCPU("new", "2", v1.PodPending))
	if !e.run(time.Minute, func() bool { return e.phase("uid-new") == v1.PodRunning || e.phase("uid-new") == v1.PodFailed }) {
		t.Fatalf("new neither admitted and Running nor rejected (phase %q)", e.phase("uid-new"))
	}
	if got := e.phase("uid-new"); got != v1.PodRunning {
		t.Errorf("new is %s, want Running: big counted as active although its API phase is Failed", got)
	}
}
