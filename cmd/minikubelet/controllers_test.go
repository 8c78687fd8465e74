package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
)

// TestRunSchedulesKubectlRun checks that `kubectl run` works against `minikubelet run`: the pod it
// creates names no node, the scheduler binds it to the node, and the kubelet runs it.
func TestRunSchedulesKubectlRun(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	t.Parallel()
	cfg := testConfig(t.TempDir(), false)
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg.Controllers = controllers.Names

	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	log.mustWait(t, ctx, 0, "node registration", func(e traceEvent) bool {
		return e.Component == "node" && e.Event == "register"
	})

	kubectl(t, ctx, cfg.WriteKubeconfig, "", "run", "x", "--image=nginx")
	log.mustWait(t, ctx, 0, "the scheduler binding default/x", func(e traceEvent) bool {
		return e.Component == "scheduler" && e.Event == "bind" && e.Pod == "default/x" && e.To == testNode
	})
	log.mustWait(t, ctx, 0, "Running status of default/x", func(e traceEvent) bool {
		return isRunning(e, "default/x")
	})
	if got := kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "pod", "x", "-o", "jsonpath={.spec.nodeName}"); got != testNode {
		t.Errorf("kubectl get pod x: spec.nodeName = %q, want %q", got, testNode)
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
}

// TestAPIServerEvictsFromAStoppedNode is the two-node cluster of one `minikubelet apiserver` and
// two `minikubelet run --kubeconfig`: when one node's process stops, the controllers beside the
// API server set it Unknown after the grace period, taint it, and evict its pod once the pod's
// toleration runs out. The grace period is shortened with kube-controller-manager's flag so that
// the test waits seconds, not a minute; the facts waited for are the API's.
func TestAPIServerEvictsFromAStoppedNode(t *testing.T) {
	// Not parallel: it measures real seconds between three processes' worth of goroutines, and
	// the package's parallel tests starved it under the race detector. It takes about 25s on a
	// quiet machine, under -race too; the deadline is ten times that.
	ctx, cancel := context.WithTimeout(t.Context(), 2*waitTimeout)
	defer cancel()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	// The grace period must stay well above the 10s lease renewal: on a loaded machine a healthy
	// node that misses it too would make every node Unknown, and in that full disruption the
	// controller untaints and evicts nothing, as kube-controller-manager does.
	_, stopServer := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc,
		Controllers: strings.Join(controllers.Names, ","), NodeMonitorPeriod: time.Second, NodeMonitorGracePeriod: 20 * time.Second})
	defer func() {
		if err := stopServer(); err != nil {
			t.Errorf("runAPIServer() = %v, want nil", err)
		}
	}()
	rc, err := restConfigFromKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	stops := map[string]func() error{}
	for _, name := range []string{"node-a", "node-b"} {
		cfg := testConfig(t.TempDir(), false)
		cfg.NodeName, cfg.Kubeconfig = name, kc
		stops[name] = runInBackground(t, cfg, newTraceLog())
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.PodSpec{
		NodeName:   "node-a",
		Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}},
		Tolerations: []v1.Toleration{{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists,
			Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)}},
	}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, client, "web Running", func(p *v1.Pod, _ *v1.Node) bool { return p != nil && p.Status.Phase == v1.PodRunning })
	// Both nodes must be Ready before node-a stops. A node that stops before its first Ready
	// status is NotReady, not Unknown: it gets the not-ready NoExecute taint, which web tolerates
	// for the API server's default 300s, and the eviction scheduled then is not brought forward
	// when the unreachable taint (2s) replaces it, as in kube-controller-manager. On a loaded
	// machine the pod runs well before its node's first Ready status, and the test used to stop
	// node-a in that window and wait five minutes for an eviction. node-b must be Ready too, or
	// node-a's zone is the only one and fully disrupted.
	waitForReady(t, ctx, client, "node-a", "node-b")
	if err := stops["node-a"](); err != nil {
		t.Errorf("run(node-a) = %v, want nil", err)
	}
	waitFor(t, ctx, client, "node-a Unknown and tainted", func(_ *v1.Pod, n *v1.Node) bool {
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionUnknown && c.Reason == "NodeStatusUnknown" {
				for _, taint := range n.Spec.Taints {
					if taint.Key == v1.TaintNodeUnreachable && taint.Effect == v1.TaintEffectNoExecute {
						return true
					}
				}
			}
		}
		return false
	})
	waitFor(t, ctx, client, "web evicted", func(p *v1.Pod, _ *v1.Node) bool {
		if p == nil || p.DeletionTimestamp == nil {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.DisruptionTarget && c.Reason == "DeletionByTaintManager" {
				return true
			}
		}
		return false
	})
	// node-b stops before the server, so that its last writes find it.
	if err := stops["node-b"](); err != nil {
		t.Errorf("run(node-b) = %v, want nil", err)
	}
}

// waitFor watches pod default/web and node node-a until ok holds for them, or stops the test
// when ctx ends.
func waitFor(t *testing.T, ctx context.Context, client kubernetes.Interface, what string, ok func(*v1.Pod, *v1.Node) bool) {
	t.Helper()
	pods, err := client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer pods.Stop()
	nodes, err := client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=node-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer nodes.Stop()
	var pod *v1.Pod
	node := &v1.Node{}
	for {
		select {
		case ev, open := <-pods.ResultChan():
			if !open {
				t.Fatalf("pod watch ended waiting for %s", what)
			}
			if p, isPod := ev.Object.(*v1.Pod); isPod {
				pod = p
			}
		case ev, open := <-nodes.ResultChan():
			if !open {
				t.Fatalf("node watch ended waiting for %s", what)
			}
			if n, isNode := ev.Object.(*v1.Node); isNode {
				node = n
			}
		case <-ctx.Done():
			t.Fatalf("no %s before the deadline; last seen: %s", what, describe(pod, node))
		}
		if ok(pod, node) {
			return
		}
	}
}

// waitForReady watches the nodes until every one named has a Ready condition True, or stops the
// test when ctx ends.
func waitForReady(t *testing.T, ctx context.Context, client kubernetes.Interface, names ...string) {
	t.Helper()
	w, err := client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ready := map[string]bool{}
	for {
		done := true
		for _, name := range names {
			done = done && ready[name]
		}
		if done {
			return
		}
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				t.Fatalf("node watch ended waiting for %v Ready", names)
			}
			if n, isNode := ev.Object.(*v1.Node); isNode {
				ready[n.Name] = false
				for _, c := range n.Status.Conditions {
					if c.Type == v1.NodeReady {
						ready[n.Name] = c.Status == v1.ConditionTrue
					}
				}
			}
		case <-ctx.Done():
			t.Fatalf("nodes %v not all Ready before the deadline: %v", names, ready)
		}
	}
}

// describe sums up what waitFor saw last, for a failure message.
func describe(pod *v1.Pod, node *v1.Node) string {
	var b strings.Builder
	if pod == nil {
		b.WriteString("no pod web")
	} else {
		fmt.Fprintf(&b, "pod web phase %s, deleted %v, conditions", pod.Status.Phase, pod.DeletionTimestamp)
		for _, c := range pod.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s(%s)", c.Type, c.Status, c.Reason)
		}
	}
	fmt.Fprintf(&b, "; node %s conditions", node.Name)
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			fmt.Fprintf(&b, " Ready=%s(%s)", c.Status, c.Reason)
		}
	}
	b.WriteString(", taints")
	for _, taint := range node.Spec.Taints {
		fmt.Fprintf(&b, " %s:%s", taint.Key, taint.Effect)
	}
	return b.String()
}
