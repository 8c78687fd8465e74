package main

import (
	"bufio"
	"context"
	"io"
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
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	serveCtx, stop := context.WithCancel(ctx)
	go func() {
		done <- runAPIServer(serveCtx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc}, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr) // nothing more is printed, but never block the server on it
	if err != nil || !strings.HasPrefix(line, "fake API server listening on http://127.0.0.1:") {
		t.Fatalf("first line = %q, %v, want the loopback URL", line, err)
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
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runAPIServer() after cancel = %v, want nil", err)
		}
	case <-ctx.Done():
		t.Fatal("runAPIServer() did not return after cancel")
	}
}
