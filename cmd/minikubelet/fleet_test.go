package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
)

func TestNodeNames(t *testing.T) {
	for _, tc := range []struct {
		cfg  runConfig
		want []string
	}{
		{runConfig{NodeName: "n"}, []string{"n"}},
		{runConfig{NodeName: "n", Nodes: 1, NodeNamePrefix: "x"}, []string{"n"}},
		{runConfig{NodeName: "n", Nodes: 3}, []string{"n-0", "n-1", "n-2"}},
		{runConfig{NodeName: "n", Nodes: 11, NodeNamePrefix: "sim"}, []string{"sim-00", "sim-01", "sim-02", "sim-03", "sim-04", "sim-05", "sim-06", "sim-07", "sim-08", "sim-09", "sim-10"}},
	} {
		if diff := cmp.Diff(tc.want, nodeNames(&tc.cfg)); diff != "" {
			t.Errorf("nodeNames(%+v) (-want +got):\n%s", tc.cfg, diff)
		}
	}
	bad := runConfig{NodeName: "n", Nodes: 2, NodeNamePrefix: "Bad_Prefix"}
	if err := bad.validate(); err == nil || !strings.Contains(err.Error(), `node name "Bad_Prefix-0"`) {
		t.Errorf("validate() with a bad prefix = %v", err)
	}
}

// TestRunManyNodes: three nodes in one process register, each with its own kubelet server on
// its own port, over HTTPS with a certificate for its address that the authority written beside
// the kubeconfig signed, in Webhook mode (the configuration file's defaults): an anonymous
// request is refused, the kubeconfig's token is reviewed and let in. The embedded API server's
// node proxy reaches every node, `kubectl top node` lists them, and the Prometheus targets
// written beside the kubeconfig name them.
func TestRunManyNodes(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	t.Parallel()
	cfg := testConfig("", false)
	cfg.Kubelet.Sources.StaticPodPath = ""
	cfg.Nodes, cfg.NodeNamePrefix = 3, "sim"
	cfg.KubeletAddr = "127.0.0.1:0"
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg.MetricResolution = 500 * time.Millisecond
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var registered []string
	for len(registered) < 3 {
		_, e := log.mustWait(t, ctx, 0, "node registration", func(e traceEvent) bool {
			return e.Component == "node" && e.Event == "register" && !slices.Contains(registered, e.Pod)
		})
		registered = append(registered, e.Pod)
	}
	slices.Sort(registered)
	names := []string{"sim-0", "sim-1", "sim-2"}
	if diff := cmp.Diff(names, registered); diff != "" {
		t.Errorf("registered nodes (-want +got):\n%s", diff)
	}
	dir := filepath.Dir(cfg.WriteKubeconfig)
	caPEM, err := os.ReadFile(filepath.Join(dir, "kubelet-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("kubelet-ca.crt holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer client.CloseIdleConnections()
	token := kubeconfigToken(t, cfg.WriteKubeconfig)
	ports := map[int32]string{}
	for _, name := range names {
		var node v1.Node
		if err := json.Unmarshal([]byte(kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "node", name, "-o", "json")), &node); err != nil {
			t.Fatal(err)
		}
		port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
		if other, ok := ports[port]; ok {
			t.Errorf("%s advertises port %d, as %s does", name, port, other)
		}
		ports[port] = name
		var ip string
		for _, a := range node.Status.Addresses {
			if a.Type == v1.NodeInternalIP {
				ip = a.Address
			}
		}
		if ip != "127.0.0.1" {
			t.Errorf("%s's InternalIP = %q, want the embedded API server's loopback", name, ip)
		}
		url := fmt.Sprintf("https://%s:%d/metrics", ip, port)
		if code, _ := httpsGet(t, ctx, client, url, ""); code != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s = %d, want 401", url, code)
		}
		if code, body := httpsGet(t, ctx, client, url, token); code != http.StatusOK || !strings.Contains(body, `kubelet_node_name{node="`+name+`"} 1`) {
			t.Errorf("GET %s with the token = %d, want %s's metrics", url, code, name)
		}
		// The API server's node proxy reaches every node of the fleet at its own endpoint.
		if got := kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "--raw", "/api/v1/nodes/"+name+"/proxy/metrics"); !strings.Contains(got, `kubelet_node_name{node="`+name+`"} 1`) {
			t.Errorf("%s's metrics through the node proxy lack its node name:\n%s", name, got)
		}
		if got := kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "--raw", "/api/v1/nodes/"+name+"/proxy/healthz"); got != "ok" {
			t.Errorf("%s's healthz through the node proxy = %q, want ok", name, got)
		}
	}
	targets, err := os.ReadFile(filepath.Join(dir, "kubelet-targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(targets, &groups); err != nil {
		t.Fatalf("kubelet-targets.json: %v\n%s", err, targets)
	}
	for i, g := range groups {
		if want := fmt.Sprintf("127.0.0.1:%d", keyOf(ports, g.Labels["node"])); len(g.Targets) != 1 || g.Targets[0] != want || i >= len(names) || g.Labels["node"] != names[i] {
			t.Errorf("target group %d = %+v, want %s at %s", i, g, names[min(i, 2)], want)
		}
	}
	// kubectl top node lists the nodes once two scrapes are in.
	for {
		out, err := kubectlOutput(ctx, cfg.WriteKubeconfig, "top", "node")
		if err == nil && strings.Count(out, "sim-") == 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("kubectl top node = %q, %v; want the three nodes", out, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v", err)
	}
}

// keyOf is the key of m whose value is v.
func keyOf(m map[int32]string, v string) int32 {
	for k, x := range m {
		if x == v {
			return k
		}
	}
	return -1
}

// kubeconfigToken is the bearer token of the kubeconfig run wrote.
func kubeconfigToken(t *testing.T, path string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return kc.AuthInfos["minikubelet"].Token
}

// kubectlOutput runs kubectl and returns its output and error, for a caller that retries.
func kubectlOutput(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_KUBERC=false")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func httpsGet(t *testing.T, ctx context.Context, client *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
