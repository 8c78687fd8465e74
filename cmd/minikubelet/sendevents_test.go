package main

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"
)

// TestSendEvents: by default a node sends its Kubernetes events to the API server; with
// --send-events=false it has no event client, as kubemark's hollow nodes, and the API server
// gets none, while the pod still runs.
func TestSendEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag     string
		wantSent bool
	}{{"--send-events=true", true}, {"--send-events=false", false}} {
		t.Run(tc.flag, func(t *testing.T) {
			t.Parallel()
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithTimeout(ctx, waitTimeout)
			defer cancel()
			_, kubeconfig := serveAPIServer(t)
			dir := t.TempDir()
			writeManifest(t, dir, "a.yaml", podYAML("a", "", "busybox:1.36"))
			cfg, err := resolveArgs(t, "--kubeconfig="+kubeconfig, "--pod-manifest-path="+dir, "--hostname-override="+testNode,
				"--trace-format=json", "--port=0", "--root-dir="+t.TempDir(), "--runtime-latencies=0", tc.flag)
			if err != nil {
				t.Fatalf("resolve() error = %v", err)
			}
			rc, err := restConfigFromKubeconfig(kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			client, err := kubernetes.NewForConfig(rc)
			if err != nil {
				t.Fatal(err)
			}
			isStarted := func(e *v1.Event) bool { return e.Source.Component == eventComponent && e.Reason == "Started" }
			// The watch starts before the node, so that it sees every event the node sends.
			events, err := client.CoreV1().Events(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch events: %v", err)
			}
			defer events.Stop()
			log := newTraceLog()
			stop := runInBackground(t, cfg, log)
			podA := "default/a-" + testNode
			log.mustWait(t, ctx, 0, "Running status of "+podA, func(e traceEvent) bool { return isRunning(e, podA) })
			if tc.wantSent {
				// The broadcaster sends beside the loop: the event comes when it comes.
				for started := false; !started; {
					select {
					case ev, ok := <-events.ResultChan():
						if !ok {
							t.Fatal("the event watch ended before a Started event of the kubelet came")
						}
						e, _ := ev.Object.(*v1.Event)
						started = e != nil && isStarted(e)
					case <-ctx.Done():
						t.Fatalf("no Started event of the kubelet reached the API server: %v", ctx.Err())
					}
				}
			}
			// Stopping run flushes what the broadcasters had queued: without an event client
			// nothing was queued, and nothing has reached the API server.
			if err := stop(); err != nil {
				t.Errorf("run() = %v, want nil", err)
			}
			if !tc.wantSent {
				list, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatalf("list events: %v", err)
				}
				for i := range list.Items {
					if isStarted(&list.Items[i]) {
						t.Errorf("with %s the API server has the kubelet's event %s", tc.flag, list.Items[i].Name)
					}
				}
			}
		})
	}
}
