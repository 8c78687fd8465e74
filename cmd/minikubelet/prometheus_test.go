package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// prometheusConfig is docs/kubelet-server.md's file-based scrape configuration for a fleet of
// `run`, with the paths of one run's files: the nodes from the targets run writes beside the
// kubeconfig (file_sd), verified against the authority written there. (Debian's prometheus is
// built without the kubernetes service discovery, so the node role's configuration the doc also
// shows cannot be tried here.)
const prometheusConfig = `global:
  scrape_interval: 1s
scrape_configs:
- job_name: minikubelet
  scheme: https
  tls_config:
    ca_file: %[1]s/kubelet-ca.crt
  file_sd_configs:
  - files: [%[1]s/kubelet-targets.json]
`

// prometheusTimeout bounds the wait for Prometheus to find and scrape the nodes: a few seconds
// on a quiet machine.
const prometheusTimeout = 3 * time.Minute

// TestPrometheusScrapesTheFleet runs Debian's prometheus (skipped where it is not installed) with
// the documented configuration against `run --nodes 3`: it reports every node's target up and
// has kubelet_node_name for each node, with the node label the targets file gives.
func TestPrometheusScrapesTheFleet(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (apt-get install prometheus)")
	}
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig("", false)
	cfg.Kubelet.Sources.StaticPodPath = ""
	cfg.Nodes, cfg.NodeNamePrefix = 3, "prom"
	cfg.KubeletAddr = "127.0.0.1:0"
	cfg.WriteKubeconfig = filepath.Join(dir, "kubeconfig")
	// run without --config: the kubelet command line's open server.
	cfg.Kubelet.Server.Authentication = config.Authentication{Anonymous: true, WebhookCacheTTL: 2 * time.Minute}
	cfg.Kubelet.Server.Authorization.Mode = config.AuthorizationAlwaysAllow
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), prometheusTimeout)
	defer cancel()
	for _, name := range []string{"prom-0", "prom-1", "prom-2"} {
		log.mustWait(t, ctx, 0, name+"'s registration", func(e traceEvent) bool {
			return e.Component == "node" && e.Event == "register" && e.Pod == name
		})
	}

	promFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promFile, fmt.Appendf(nil, prometheusConfig, dir), 0o600); err != nil {
		t.Fatal(err)
	}
	web := "127.0.0.1:" + fmt.Sprint(takeFreePort(t))
	cmd := exec.CommandContext(ctx, prom, "--config.file="+promFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	var promLog strings.Builder
	cmd.Stdout, cmd.Stderr = &promLog, &promLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", promLog.String())
		}
	}()

	var targets, nodes []string
	for {
		targets, nodes = prometheusState(ctx, web)
		if len(targets) == 3 && slices.Equal(nodes, []string{"prom-0", "prom-1", "prom-2"}) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("prometheus reports targets up %q and kubelet_node_name for %q; want the 3 nodes", targets, nodes)
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v", err)
	}
}

// prometheusState is the jobs and instances of the targets Prometheus reports up, and the nodes
// kubelet_node_name has a series for, sorted; nothing while it does not answer.
func prometheusState(ctx context.Context, web string) (up, nodes []string) {
	var targets struct {
		Data struct {
			ActiveTargets []struct {
				Labels map[string]string `json:"labels"`
				Health string            `json:"health"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if getJSON(ctx, "http://"+web+"/api/v1/targets", &targets) != nil {
		return nil, nil
	}
	for _, a := range targets.Data.ActiveTargets {
		if a.Health == "up" {
			up = append(up, a.Labels["job"]+"/"+a.Labels["instance"])
		}
	}
	var query struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if getJSON(ctx, "http://"+web+"/api/v1/query?query="+url.QueryEscape(`kubelet_node_name{job="minikubelet"}`), &query) != nil {
		return up, nil
	}
	for _, r := range query.Data.Result {
		nodes = append(nodes, r.Metric["node"])
	}
	slices.Sort(up)
	slices.Sort(nodes)
	return up, nodes
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// takeFreePort is a port of loopback that was free a moment ago, for a process the test starts.
func takeFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
