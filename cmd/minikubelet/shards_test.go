package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/kubelet/allocation"
)

// TestShardsShareOneAPIServer runs three processes of ten nodes each (two under -race) against one
// `minikubelet apiserver`, as docs/examples/deploy/'s StatefulSet runs shards against a cluster: every node
// registers under its shard's prefix and turns Ready. A shard killed and started again takes its
// nodes back: it adopts the Node objects and renews their leases, and no node is duplicated. The
// API server's node proxy reaches a shard's node at its own endpoint.
func TestShardsShareOneAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four processes")
	}
	t.Parallel()
	const shards = 3
	// Under -race every process is built with the detector; two nodes a shard run a fleet's nodes
	// side by side as ten do, and the plain suite runs ten.
	perShard := 10
	if raceEnabled {
		perShard = 2
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 4*waitTimeout)
	defer cancel()
	_, kubeconfig, err := startAPIServer(t, ctx, dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shard := func(i int) *process {
		return startProcess(t, "run", "--kubeconfig", kubeconfig, "--nodes", fmt.Sprint(perShard),
			"--node-name-prefix", fmt.Sprintf("shard-%d", i), "--port", "0", "--trace-format", "json",
			"--root-dir", filepath.Join(dir, fmt.Sprint("root-", i)))
	}
	procs := make([]*process, shards)
	for i := range procs {
		procs[i] = shard(i)
	}
	readyNodes := func() (map[string]bool, error) {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		ready := map[string]bool{}
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					ready[n.Name] = true
				}
			}
		}
		return ready, nil
	}
	var ready map[string]bool
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		ready, err = readyNodes()
		return err == nil && len(ready) == shards*perShard, nil
	}); err != nil {
		t.Fatalf("%d of %d nodes Ready: %v", len(ready), shards*perShard, err)
	}
	for i := range shards {
		for j := range perShard {
			if name := fmt.Sprintf("shard-%d-%d", i, j); !ready[name] {
				t.Errorf("node %s is not Ready", name)
			}
		}
	}

	// The API server's node proxy reaches a shard's node: it calls the node with the client
	// certificate its authority signed, which the node (in Webhook mode, as --kubeconfig gives)
	// authenticates against the kubeconfig's authority and authorizes with a SubjectAccessReview.
	proxied := fmt.Sprintf("shard-2-%d", min(3, perShard-1))
	if b, err := client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/" + proxied + "/proxy/healthz").DoRaw(ctx); err != nil || string(b) != "ok" {
		t.Errorf("%s's healthz through the node proxy = %q, %v; want ok", proxied, b, err)
	}

	// A pod runs on shard 1's first node; the runtime's state file holds its container before
	// the crash.
	node := "shard-1-0"
	stateFile := filepath.Join(dir, "root-1", node, runtimeStateFile)
	web := runPodOn(ctx, t, client, "web", node)
	waitForContainerSaved(ctx, t, stateFile, web.Status.ContainerStatuses[0].ContainerID)
	// The allocation manager's checkpoint beside it holds web's allocation within a second.
	allocations := filepath.Join(dir, "root-1", node, allocation.CheckpointFile)
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(allocations)
		return err == nil && strings.Contains(string(b), string(web.UID)), nil
	}); err != nil {
		t.Errorf("%s does not hold web's allocation: %v", allocations, err)
	}

	// Shard 1 crashes and comes back.
	procs[1].kill()
	restarted := time.Now()
	procs[1] = shard(1)
	leases := client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	renewedSince := func(l *coordinationv1.Lease, t time.Time) bool {
		return l.Spec.RenewTime != nil && !l.Spec.RenewTime.Time.Before(t.Truncate(time.Microsecond))
	}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		for j := range perShard {
			l, err := leases.Get(ctx, fmt.Sprintf("shard-1-%d", j), metav1.GetOptions{})
			if err != nil || !renewedSince(l, restarted) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the restarted shard did not renew its nodes' leases: %v", err)
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != shards*perShard {
		t.Errorf("%d nodes after the restart, want %d", len(list.Items), shards*perShard)
	}
	// A restarted node may be NotReady a moment ("CSINode is not yet initialized") when its
	// registration's status update comes before its CSINode's initialization, on a goroutine of
	// its own as in the kubelet, has cleared the storage error: wait for every node to be Ready.
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		ready, err = readyNodes()
		return err == nil && len(ready) == shards*perShard, nil
	}); err != nil {
		t.Errorf("%d nodes Ready after the restart (%v), want %d", len(ready), err, shards*perShard)
	}

	// The restarted kubelet found web's container running, as a kubelet restart finds its
	// containers in the CRI: once a pod created after the restart runs (the restarted kubelet
	// synced web first), web has the same container, start time and restart count, and the
	// runtime made no other container for it.
	probe := runPodOn(ctx, t, client, "probe", node)
	waitForContainerSaved(ctx, t, stateFile, probe.Status.ContainerStatuses[0].ContainerID)
	after, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(web.Status.ContainerStatuses, after.Status.ContainerStatuses); diff != "" {
		t.Errorf("web's container statuses across the restart (-before +after):\n%s", diff)
	}
	if ids := savedContainers(t, stateFile)[string(web.UID)]; len(ids) != 1 {
		t.Errorf("web's containers in the runtime after the restart = %v, want its one container", ids)
	}
}

// runPodOn creates a pause pod bound to node and returns it once it runs.
func runPodOn(ctx context.Context, t *testing.T, client kubernetes.Interface, name, node string) *v1.Pod {
	t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *v1.Pod
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = p
		return p.Status.Phase == v1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil, nil
	}); err != nil {
		t.Fatalf("pod %s is not Running on %s: %v (status %+v)", name, node, err, got.Status)
	}
	return got
}

// savedContainers reads the runtime's state file: the running container IDs of each pod UID.
func savedContainers(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var state struct {
		Pods []struct {
			UID        string `json:"uid"`
			Containers []struct {
				Status struct{ ID, State string } `json:"status"`
			} `json:"containers"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(data, &state); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]string{}
	for _, p := range state.Pods {
		for _, c := range p.Containers {
			// Only running containers count: a state saved between a container's create and
			// its start holds it created, and a restart from that state starts it again.
			if c.Status.State == string(kubecontainer.ContainerStateRunning) {
				out[p.UID] = append(out[p.UID], c.Status.ID)
			}
		}
	}
	return out
}

// waitForContainerSaved waits until the runtime's state file holds the container whose API
// container ID is id, running.
func waitForContainerSaved(ctx context.Context, t *testing.T, path, id string) {
	t.Helper()
	_, want, _ := strings.Cut(id, "://")
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, ids := range savedContainers(t, path) {
			if slices.Contains(ids, want) {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("%s never held container %s: %v", path, id, err)
	}
}
