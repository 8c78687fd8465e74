package realcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// What a real cluster asks of a node through kube-apiserver: kubectl logs, nodes/proxy and
// metrics-server's scrapes. kube-apiserver calls the node at its InternalIP and kubelet port
// over HTTPS, and refuses loopback addresses, so these work against nodes that advertise a
// non-loopback address they serve HTTPS on (in a network namespace of InNetNS in tests).

// NodeProxyGet is `kubectl get --raw /api/v1/nodes/<node>/proxy/<path>`.
func NodeProxyGet(ctx context.Context, client kubernetes.Interface, node, path string) ([]byte, error) {
	b, err := client.CoreV1().RESTClient().Get().
		AbsPath("/api/v1/nodes", node, "proxy", strings.TrimPrefix(path, "/")).
		DoRaw(ctx)
	if err != nil {
		return b, fmt.Errorf("nodes/%s/proxy/%s: %w", node, path, err)
	}
	return b, nil
}

// PodLogs is `kubectl logs` of a pod's container with opts (Previous for --previous); with
// opts.Follow it reads until the stream ends or ctx is done.
func PodLogs(ctx context.Context, client kubernetes.Interface, ns, pod string, opts *corev1.PodLogOptions) (string, error) {
	rc, err := client.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return "", fmt.Errorf("logs of %s/%s: %w", ns, pod, err)
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, rc); err != nil && ctx.Err() == nil {
		return b.String(), fmt.Errorf("logs of %s/%s: %w", ns, pod, err)
	}
	return b.String(), nil
}

// ResourceMetrics is a metrics-server-style scrape of the node's /metrics/resource, through
// the API server's node proxy; it checks that the node's and a container's usage are there.
func ResourceMetrics(ctx context.Context, client kubernetes.Interface, node string) (string, error) {
	b, err := NodeProxyGet(ctx, client, node, "metrics/resource")
	if err != nil {
		return "", err
	}
	text := string(b)
	for _, family := range []string{"node_cpu_usage_seconds_total", "node_memory_working_set_bytes", "container_cpu_usage_seconds_total"} {
		if !strings.Contains(text, "\n"+family+" ") && !strings.Contains(text, "\n"+family+"{") && !strings.HasPrefix(text, family) {
			return text, fmt.Errorf("nodes/%s/proxy/metrics/resource has no %s", node, family)
		}
	}
	return text, nil
}

// Kubectl runs kubectl (from PATH) with the kubeconfig and args, and returns its output.
func Kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("kubectl: %w", err)
	}
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
