package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestAPIServerCommandServesUntilCancelled runs `minikubelet apiserver` in-process: it announces
// its URL, writes a working kubeconfig, serves client-go, and returns nil once cancelled.
func TestAPIServerCommandServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	url, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc})
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("URL = %q, want a loopback one", url)
	}
	cfg, err := restConfigFromKubeconfig(kc)
	if err != nil {
		t.Fatalf("restConfigFromKubeconfig() error = %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod through the kubeconfig: %v", err)
	}
	list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list pods = %v, %v, want the one pod", list, err)
	}
	if err := stop(); err != nil {
		t.Errorf("runAPIServer() after cancel = %v, want nil", err)
	}
}

// startAPIServerCommand runs runAPIServer with cfg until stop is called, and returns the URL it
// announced. stop cancels it and returns its result, or stops the test if it does not return
// before ctx ends.
func startAPIServerCommand(t *testing.T, ctx context.Context, cfg apiserverConfig) (url string, stop func() error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	serveCtx, cancel := context.WithCancel(ctx)
	go func() {
		done <- runAPIServer(serveCtx, cfg, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr) // nothing more is printed, but never block the server on it
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "fake API server listening on ")
	if err != nil || !ok {
		cancel()
		t.Fatalf("first line = %q, %v, want the URL", line, err)
	}
	return url, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			t.Fatal("runAPIServer() did not return after cancel")
			return nil
		}
	}
}

// TestAPIServerCommandStopsWithStuckWatcher opens a watch over TCP that reads its response line
// and then nothing more, while the server has megabytes of events to send it. Cancelling must
// still end runAPIServer: the server gives requests in flight a short grace and then closes them.
func TestAPIServerCommandStopsWithStuckWatcher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	// Plain HTTP, so that the test can speak it on a bare connection.
	url, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc,
		Security: securityConfig{NoAuth: true, NoTLS: true}})
	cfg, err := restConfigFromKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	// Eight pods of 2 MiB each: more than the kernel buffers of one loopback connection hold.
	big := strings.Repeat("x", 2<<20)
	for i := range 8 {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default", Annotations: map[string]string{"big": big}},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
		}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod p%d: %v", i, err)
		}
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET /api/v1/pods?watch=1&resourceVersion=0 HTTP/1.1\r\nHost: fake\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("watch response = %q, %v, want 200", status, err)
	}
	if err := stop(); err != nil {
		t.Errorf("runAPIServer() after cancel with a watch client that stopped reading = %v, want nil", err)
	}
}
