package fakeapiserver_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func TestServeStopsWatches(t *testing.T) {
	l, err := fakeapiserver.Listen("")
	if err != nil {
		t.Fatalf("Listen(\"\") = %v", err)
	}
	srv := newServer(t, testOptions())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "http://" + l.Addr().String()})
	if _, err := client.CoreV1().Pods("default").Create(context.Background(), newPod("default", "p", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("Create() over Serve = %v", err)
	}
	if got := srv.ResourceVersion(); got != bootRV+1 {
		t.Errorf("ResourceVersion() = %d, want %d", got, bootRV+1)
	}
	w, err := client.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("Watch() = %v", err)
	}
	defer w.Stop()
	next(t, w) // the initial ADDED
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve() = %v, want nil after cancel", err)
	}
	for ev := range w.ResultChan() {
		t.Errorf("watch event %s after the server stopped, want the stream closed", ev.Type)
	}
}

func TestCloseWatches(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	w, err := f.client.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	f.srv.CloseWatches()
	for ev := range w.ResultChan() {
		t.Errorf("watch event %s after CloseWatches, want the stream closed", ev.Type)
	}
}
