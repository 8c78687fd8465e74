package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/minikubelet/minikubelet/controllers"
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
