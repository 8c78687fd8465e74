package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
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

// TestRunManyNodes: three nodes in one process register, and one kubelet server answers for
// each of them, through the API server's node proxy too, and lists them for Prometheus.
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
	if diff := cmp.Diff([]string{"sim-0", "sim-1", "sim-2"}, registered); diff != "" {
		t.Errorf("registered nodes (-want +got):\n%s", diff)
	}
	// The nodes advertise the server's port; they all share it.
	var node v1.Node
	if err := json.Unmarshal([]byte(kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "node", "sim-1", "-o", "json")), &node); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	for _, path := range []string{"/nodes/sim-1/healthz", "/healthz"} {
		if got := httpGet(t, ctx, "http://"+addr+path); got != "ok" {
			t.Errorf("GET %s = %q, want ok", path, got)
		}
	}
	if got := httpGet(t, ctx, "http://"+addr+"/nodes/sim-2/metrics"); !strings.Contains(got, `kubelet_node_name{node="sim-2"} 1`) {
		t.Errorf("sim-2's metrics lack its node name")
	}
	// The API server's node proxy reaches every node of the fleet.
	if got := kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "--raw", "/api/v1/nodes/sim-2/proxy/metrics"); !strings.Contains(got, `kubelet_node_name{node="sim-2"} 1`) {
		t.Errorf("sim-2's metrics through the node proxy lack its node name:\n%s", got)
	}
	if got := kubectl(t, ctx, cfg.WriteKubeconfig, "", "get", "--raw", "/api/v1/nodes/sim-0/proxy/healthz"); got != "ok" {
		t.Errorf("sim-0's healthz through the node proxy = %q, want ok", got)
	}
	if got := httpGet(t, ctx, "http://"+addr+"/discovery/prometheus"); strings.Count(got, "__metrics_path__") != 3 {
		t.Errorf("/discovery/prometheus = %s", got)
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v", err)
	}
}

func httpGet(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
