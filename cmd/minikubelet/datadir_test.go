package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestAPIServerCommandDataDir restarts `minikubelet apiserver --data-dir`: the pod created before
// the restart is served after it with its UID, and a new kubeconfig (new token, new certificate)
// reaches it.
func TestAPIServerCommandDataDir(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dataDir := t.TempDir()
	start := func() (kubernetes.Interface, func() error) {
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		_, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc, DataDir: dataDir})
		cfg, err := restConfigFromKubeconfig(kc)
		if err != nil {
			t.Fatal(err)
		}
		return kubernetes.NewForConfigOrDie(cfg), stop
	}
	client, stop := start()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	created, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("first runAPIServer() = %v", err)
	}

	client, stop = start()
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("second runAPIServer() = %v", err)
		}
	}()
	got, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get(p) after restart = %v", err)
	}
	if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("pod after restart = uid %s rv %s, want uid %s rv %s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
	}
}
