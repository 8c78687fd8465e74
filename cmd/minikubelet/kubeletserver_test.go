package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunServesLogsMetricsAndHealthz: kubectl logs and logs --previous of a crashing static pod
// reach the node's kubelet server through the embedded API server, and so do nodes/proxy's
// /metrics and /healthz; exec is refused with the simulated runtime's message.
//
// The container runs 20s before it exits: the checks run while the restarted instance runs and
// the first one is the previous. With 2s, a loaded machine's slow kubectl calls reached the
// second exit, after which the first instance is removed and --previous named it for a moment.
func TestRunServesLogsMetricsAndHealthz(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	t.Parallel()
	dir := t.TempDir()
	writeManifest(t, dir, "crash.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: crash
  annotations:
    minikubelet.io/exit-after.main: 20s
    minikubelet.io/exit-code.main: "3"
    minikubelet.io/log.main: hello from main
spec:
  containers:
  - name: main
    image: busybox:1.36
`)
	pod := "default/crash-" + testNode
	cfg := testConfig(dir, false)
	cfg.WriteKubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg.KubeletAddr = "127.0.0.1:0"

	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	isRuntime := func(event string) func(traceEvent) bool {
		return func(e traceEvent) bool { return e.Component == "runtime" && e.Event == event && e.Pod == pod }
	}
	i, _ := log.mustWait(t, ctx, 0, "first exit of "+pod, isRuntime("exited"))
	i, _ = log.mustWait(t, ctx, i+1, "restart of "+pod, isRuntime("started"))
	log.mustWait(t, ctx, i+1, "status after the restart of "+pod, func(e traceEvent) bool {
		return e.Component == "status" && e.Event == "set" && e.Pod == pod
	})
	kc := cfg.WriteKubeconfig
	if got := kubectl(t, ctx, kc, "", "logs", "crash-"+testNode); !strings.Contains(got, "hello from main\n") {
		t.Errorf("kubectl logs = %q, want the scripted line", got)
	}
	if got := kubectl(t, ctx, kc, "", "logs", "--previous", "crash-"+testNode); !strings.Contains(got, "minikubelet: container main exited with code 3\n") {
		t.Errorf("kubectl logs --previous = %q, want the exit line", got)
	}
	if got := kubectl(t, ctx, kc, "", "get", "--raw", "/api/v1/nodes/"+testNode+"/proxy/metrics"); !strings.Contains(got, `kubelet_node_name{node="`+testNode+`"} 1`) {
		t.Errorf("node metrics lack kubelet_node_name:\n%s", got)
	}
	if got := kubectl(t, ctx, kc, "", "get", "--raw", "/api/v1/nodes/"+testNode+"/proxy/healthz"); got != "ok" {
		t.Errorf("node healthz = %q, want ok", got)
	}
	execCmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kc, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "exec", "crash-"+testNode, "--", "ls")
	execCmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECTL_KUBERC=false")
	if out, err := execCmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "not supported by the simulated runtime") {
		t.Errorf("kubectl exec = %v, %q; want a refusal naming the simulated runtime", err, out)
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
}
