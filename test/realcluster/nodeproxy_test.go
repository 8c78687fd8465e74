package realcluster

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
)

// talkerLine is what the pod on the second node writes to its log (minikubelet.io/log.main).
const talkerLine = "hello from the second node"

// TestNodeProxyOnRealControlPlane runs the control plane and `run --nodes 2 --node-ip
// 10.250.0.1` in a network namespace (InNetNS), where the nodes advertise an address that
// kube-apiserver proxies to, and reaches the second node through kube-apiserver as a user and
// metrics-server do: `kubectl logs`, `-f` and `--previous` of its pod, `kubectl get --raw
// /api/v1/nodes/N/proxy/metrics` and a scrape of /metrics/resource. kube-apiserver calls the node
// over HTTPS with its kubelet client certificate (kubeadm:cluster-admins), which the node
// authenticates against the cluster's CA (its kubeconfig's) and authorizes with a
// SubjectAccessReview, as kubeadm's kubelets do.
func TestNodeProxyOnRealControlPlane(t *testing.T) {
	bins := RequireBinaries(t, append(ControlPlaneBinaries, Minikubelet)...)
	addr, inside := InNetNS(t, "10.250.0.1")
	if !inside {
		return
	}
	ctx := t.Context()
	dir := workDir(t)
	cp := startControlPlane(t, ctx, ControlPlaneOptions{Binaries: bins, Dir: dir, BindAddress: addr})
	w, err := Watch(ctx, cp.Admin, metav1.NamespaceDefault, labels.SelectorFromSet(labels.Set{"app": "talker"}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.Expect(2, 1)
	fleet := &MinikubeletFleet{Binary: bins[Minikubelet], RBACFile: rbacFile, Prefix: "proxy",
		Args: []string{"--api-latency=0", "--node-ip=" + addr}}
	startSimulator(t, ctx, fleet, cp, dir, 2)
	const node = "proxy-1"
	// The container writes its line, runs 15s and exits 1; after the 10s back-off the next
	// instance runs another 15s, in which --previous shows the first one's log.
	_, err = cp.Admin.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker", Labels: map[string]string{"app": "talker"}, Annotations: map[string]string{
			"minikubelet.io/log.main":        talkerLine,
			"minikubelet.io/exit-after.main": "15s",
			"minikubelet.io/exit-code.main":  "1",
		}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: PauseImage}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(ctx, podsTimeout, "the pod Running on "+node, func(s Snapshot) bool { return !s.PodsRunningAt.IsZero() }, fleet.Exited); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"proxy-0", node} {
		n, err := cp.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ip string
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				ip = a.Address
			}
		}
		if ip != addr || n.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
			t.Errorf("node %s advertises %s:%d, want %s and its own port", name, ip, n.Status.DaemonEndpoints.KubeletEndpoint.Port, addr)
		}
	}

	// The node's server shows the node as of its last snapshot, up to half a second behind the
	// status the API server has: each check is retried until it holds.
	eventually := func(t *testing.T, what string, check func(ctx context.Context) error) {
		t.Helper()
		var last error
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, podsTimeout, true, func(ctx context.Context) (bool, error) {
			last = check(ctx)
			return last == nil, nil
		})
		if err != nil {
			t.Errorf("%s: %v (last: %v)", what, err, last)
		}
	}

	t.Run("kubectl logs", func(t *testing.T) {
		eventually(t, "kubectl logs talker", func(ctx context.Context) error {
			out, err := Kubectl(ctx, cp.AdminKubeconfig, "logs", "talker")
			if err == nil && !strings.Contains(out, talkerLine) {
				err = fmt.Errorf("got %q, want %q", out, talkerLine)
			}
			return err
		})
	})

	t.Run("logs -f", func(t *testing.T) {
		eventually(t, "kubectl logs -f talker", func(ctx context.Context) error {
			rc, err := cp.Admin.CoreV1().Pods(metav1.NamespaceDefault).GetLogs("talker", &corev1.PodLogOptions{Follow: true}).Stream(ctx)
			if err != nil {
				return err
			}
			defer rc.Close()
			sc := bufio.NewScanner(rc)
			for sc.Scan() {
				if strings.Contains(sc.Text(), talkerLine) {
					return nil
				}
			}
			return fmt.Errorf("the followed log ended without %q: %v", talkerLine, sc.Err())
		})
	})

	t.Run("nodes/proxy metrics", func(t *testing.T) {
		want := `kubelet_node_name{node="` + node + `"} 1`
		eventually(t, "kubectl get --raw /api/v1/nodes/"+node+"/proxy/metrics", func(ctx context.Context) error {
			out, err := Kubectl(ctx, cp.AdminKubeconfig, "get", "--raw", "/api/v1/nodes/"+node+"/proxy/metrics")
			if err == nil && !strings.Contains(out, want) {
				err = fmt.Errorf("%s's metrics lack %s", node, want)
			}
			return err
		})
		eventually(t, "a scrape of "+node+"'s /metrics/resource", func(ctx context.Context) error {
			_, err := ResourceMetrics(ctx, cp.Admin, node)
			return err
		})
	})

	t.Run("kubectl logs --previous", func(t *testing.T) {
		var out string
		err := wait.PollUntilContextTimeout(ctx, time.Second, podsTimeout, true, func(ctx context.Context) (bool, error) {
			out, _ = Kubectl(ctx, cp.AdminKubeconfig, "logs", "talker", "--previous")
			return strings.Contains(out, "restart 0") && strings.Contains(out, "exited with code 1"), nil
		})
		if err != nil {
			t.Errorf("kubectl logs --previous = %q, want the first instance's log and its exit: %v", out, err)
		}
	})
}
