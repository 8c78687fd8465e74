package fakeruntime

import (
	"errors"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// envHelper fails every environment with err, and records the pod IP it was given.
type envHelper struct {
	err   error
	podIP []string
}

func (h *envHelper) CheckEnvironment(_ *v1.Pod, _ *v1.Container, podIP string, _ []string) error {
	h.podIP = append(h.podIP, podIP)
	return h.err
}

// TestRuntimeHelperEnvironment checks that a container whose environment cannot be made is not
// created (CreateContainerConfigError with the helper's message, before the user check), and
// starts at a later sync once it can; the helper sees the new sandbox's IP.
func TestRuntimeHelperEnvironment(t *testing.T) {
	e := newEnv(t, Latencies{})
	h := &envHelper{err: errors.New(`configmap "app" not found`)}
	e.rt.SetRuntimeHelper(h)
	pod := podtest.New("p")
	_, err := e.sync(pod)
	var se *kubecontainer.StartError
	if !errors.Is(err, kubecontainer.ErrCreateContainerConfig) || !errors.As(err, &se) || se.Message != `configmap "app" not found` {
		t.Fatalf("SyncPod() = %v, want CreateContainerConfigError with the helper's message", err)
	}
	if c := e.status(pod).FindContainerStatusByName("app"); c != nil {
		t.Errorf("app = %+v, want no container", c)
	}
	h.err = nil
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("SyncPod() once the environment resolves = %v", err)
	}
	e.rt.Advance()
	if c := e.status(pod).FindContainerStatusByName("app"); c == nil || c.State != kubecontainer.ContainerStateRunning {
		t.Errorf("app = %+v, want running", c)
	}
	if len(h.podIP) != 2 || h.podIP[0] == "" || h.podIP[0] != h.podIP[1] {
		t.Errorf("pod IPs the helper saw = %q, want the sandbox's, twice", h.podIP)
	}
}

// The pod IPs the runtime reports are its sandbox's IP, the same slice at every status and in the
// hooks' and the environment's view, with no room to append into; none for a host-network pod;
// and the same after the state is read back from a checkpoint.
func TestPodIPsShared(t *testing.T) {
	e := newEnv(t, Latencies{})
	h := &envHelper{}
	e.rt.SetRuntimeHelper(h)
	pod := podtest.New("p")
	host := podtest.New("h")
	host.Spec.HostNetwork = true
	for _, p := range []*v1.Pod{pod, host} {
		if _, err := e.sync(p); err != nil {
			t.Fatalf("SyncPod(%s) = %v", p.Name, err)
		}
	}
	e.rt.Advance()
	first, second := e.status(pod).IPs, e.status(pod).IPs
	if want := []string{sandboxIP(pod.UID)}; !slices.Equal(first, want) {
		t.Fatalf("IPs = %q, want %q", first, want)
	}
	if &first[0] != &second[0] || cap(first) != 1 {
		t.Errorf("two statuses share the IPs' array: %v, capacity %d; want shared, capacity 1", &first[0] == &second[0], cap(first))
	}
	if ips := e.status(host).IPs; ips != nil {
		t.Errorf("host-network pod's IPs = %q, want none", ips)
	}
	if len(h.podIP) != 2 || h.podIP[0] != first[0] || h.podIP[1] != "" {
		t.Errorf("pod IPs the helper saw = %q, want %q and none", h.podIP, first[0])
	}
	restored := e.restored()
	if got := restored.status(pod).IPs; !slices.Equal(got, first) || cap(got) != 1 || &got[0] != &restored.status(pod).IPs[0] {
		t.Errorf("restored IPs = %q (capacity %d), want %q, shared", got, cap(got), first)
	}
}

// TestPodRecordKeepsItsFirstSandbox checks the records a pod's first sandbox and container live
// in: a second sandbox, after a kill, gets a record of its own and leaves the first's alone, and
// the statuses list both, newest first; a checkpoint read back holds the same.
func TestPodRecordKeepsItsFirstSandbox(t *testing.T) {
	e := newEnv(t, Latencies{})
	pod := podtest.New("p")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	e.rt.Advance()
	if _, err := e.rt.KillPod(pod, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.clk.Set(at(time.Minute))
	e.rt.Advance()
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	e.rt.Advance()
	type sb struct {
		ID    string
		State kubecontainer.SandboxState
	}
	want := []sb{{"s-000002", kubecontainer.SandboxReady}, {"s-000001", kubecontainer.SandboxNotReady}}
	check := func(rt *Runtime, what string) {
		t.Helper()
		s, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		var got []sb
		for _, x := range s.Sandboxes {
			got = append(got, sb{x.ID, x.State})
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: sandboxes = %v, want %v", what, got, want)
		}
		if len(s.ContainerStatuses) != 2 || s.ContainerStatuses[0].State != kubecontainer.ContainerStateRunning ||
			s.ContainerStatuses[1].State != kubecontainer.ContainerStateExited {
			t.Errorf("%s: containers = %+v, want a running one over an exited one", what, s.ContainerStatuses)
		}
		rec := rt.pods[pod.UID]
		if rec.sandboxes[0] != &rec.firstSandbox || rec.sandboxes[1] == &rec.firstSandbox {
			t.Errorf("%s: the first sandbox's record is not the pod record's own, or the second's is", what)
		}
	}
	check(e.rt, "after a kill and a new sandbox")
	restored := e.restored()
	check(restored.rt, "read back")
}
