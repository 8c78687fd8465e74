package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// stallingClient connects to addr with a small receive buffer, asks for path and never reads.
func stallingClient(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: kubelet\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// bigWriter is a handler that writes up to 256 MiB, more than any socket buffers hold, and
// reports when it starts and how its writing ended.
func bigWriter(started chan<- struct{}, ended chan<- error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		close(started)
		for range 8 << 10 {
			if _, err := w.Write(chunk); err != nil {
				ended <- err
				return
			}
		}
		ended <- nil
	})
}

// serveStalledClient serves bigWriter with serveKubelet until stop, to a client that asks for it
// and never reads; served yields serveKubelet's result.
func serveStalledClient(t *testing.T, ctx context.Context) (started <-chan struct{}, ended <-chan error, stop func(), served <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, e := make(chan struct{}), make(chan error, 1)
	serveCtx, cancel := context.WithCancel(ctx)
	result := make(chan error, 1)
	go func() { result <- serveKubelet(serveCtx, l, bigWriter(s, e)) }()
	stallingClient(t, l.Addr().String(), "/pods")
	return s, e, cancel, result
}

// TestKubeletServerDropsAStalledClient: a client that stops reading loses its connection once a
// write has waited serverWriteBlockTimeout, instead of holding what was being written for the
// kubelet's 4h write timeout.
func TestKubeletServerDropsAStalledClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	_, ended, stop, served := serveStalledClient(t, ctx)
	select {
	case err := <-ended:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the handler's write to a client that does not read ended with %v, want a deadline exceeded", err)
		}
	case <-ctx.Done():
		t.Fatal("the handler is still writing to a client that does not read")
	}
	stop()
	if err := <-served; err != nil {
		t.Errorf("serveKubelet() = %v, want nil", err)
	}
}

// TestKubeletServerStopsWithASlowClient stops the server while a handler is blocked writing to a
// client that does not read: the connection is closed after the grace period and the server
// stops without an error, so that `run` exits 0 after SIGTERM.
func TestKubeletServerStopsWithASlowClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	started, ended, stop, served := serveStalledClient(t, ctx)
	<-started
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serveKubelet() after the stop with a slow client = %v, want nil", err)
		}
	case <-ctx.Done():
		t.Fatal("serveKubelet() did not return after the stop")
	}
	if err := <-ended; err == nil {
		t.Error("the handler wrote its whole response to a client that does not read")
	}
}
