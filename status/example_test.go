package status_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/status"
)

func ExampleGetPhase() {
	pod := &v1.Pod{Spec: v1.PodSpec{
		RestartPolicy: v1.RestartPolicyNever,
		Containers:    []v1.Container{{Name: "job"}},
	}}
	done := []v1.ContainerStatus{{Name: "job", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0}}}}
	fmt.Println(status.GetPhase(pod, done, false, true))
	// Output: Succeeded
}

func ExampleGeneratePodStatus() {
	clk := vclock.New(vclock.Epoch)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "app", Image: "nginx"}}},
	}
	runtime := &kubecontainer.PodStatus{
		Sandboxes: []kubecontainer.SandboxStatus{{ID: "sb", State: kubecontainer.SandboxReady}},
		ContainerStatuses: []kubecontainer.ContainerStatus{{
			ID: "c1", Name: "app", Image: "nginx", ImageRef: "fake://nginx", State: kubecontainer.ContainerStateExited, ExitCode: 1, RestartCount: 2,
		}},
	}
	reasons := map[string]status.Reason{"app": {Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container=app pod=web_default"}}
	s := status.GeneratePodStatus(pod, pod.Status, runtime, false, clk.Now(), status.GenerateOptions{Reasons: reasons})
	cs := s.ContainerStatuses[0]
	fmt.Println(s.Phase, cs.State.Waiting.Reason, cs.LastTerminationState.Terminated.Reason, cs.RestartCount)
	// Output: Running CrashLoopBackOff Error 2
}

func ExampleManager() {
	clk := vclock.New(vclock.Epoch)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
		Status:     v1.PodStatus{Phase: v1.PodPending},
	}
	client := fake.NewClientset(pod.DeepCopy())
	m, err := status.New(status.Options{
		Client: status.ClientsetAdapter{Client: client},
		Clock:  clk,
		Tracer: trace.Func(func(e trace.Event) { fmt.Println(e.Event, e.Pod, e.To, e.Func) }),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning})
	if at, ok := m.NextWake(); ok && !at.After(clk.Now()) {
		_ = m.Step(context.Background())
	}
	// Output:
	// set default/web Running SetPodStatus
	// patch default/web Running syncPod
}
