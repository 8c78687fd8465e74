package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestRunFleetSharesObjectWatches: two nodes of a fleet whose pods mount the same ConfigMap,
// missing at first, each record FailedMount for their pod, and both pods run once the ConfigMap
// is created, as two kubelets' would; the fleet listed and watched the ConfigMap once, with one
// reflector for both nodes, and listed the Services once, with one service informer.
func TestRunFleetSharesObjectWatches(t *testing.T) {
	t.Parallel()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	srv, kubeconfig := serveAPIServer(t)
	cfg, err := resolveArgs(t, "--kubeconfig="+kubeconfig, "--nodes=2", "--node-name-prefix=sim", "--trace-format=json", "--port=0",
		"--root-dir="+t.TempDir(), "--runtime-latencies=0")
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
	events, err := client.CoreV1().Events(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch events: %v", err)
	}
	defer events.Stop()
	nodes := map[string]string{"p0": "sim-0", "p1": "sim-1"}
	for name, node := range nodes {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: v1.PodSpec{NodeName: node,
			Containers: []v1.Container{{Name: "c", Image: "busybox", VolumeMounts: []v1.VolumeMount{{Name: "cfg", MountPath: "/etc/cfg"}}}},
			Volumes:    []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "shared"}}}}}}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)

	// Each node's pod waits for the ConfigMap with the kubelet's FailedMount.
	failed := map[string]bool{}
	for len(failed) < len(nodes) {
		select {
		case ev, ok := <-events.ResultChan():
			if !ok {
				t.Fatal("the event watch ended before both pods' FailedMount came")
			}
			e, _ := ev.Object.(*v1.Event)
			if e == nil || e.Reason != "FailedMount" {
				continue
			}
			// The volume manager's reconciler may try the mount before SyncPod registered the
			// pod with the ConfigMap manager, as a kubelet's can: that attempt fails with the
			// cache's `object "default"/"shared" not registered`, and the next, after the
			// operation's back-off, with the missing ConfigMap.
			if strings.Contains(e.Message, `object "default"/"shared" not registered`) {
				continue
			}
			if want := `configmap "shared" not found`; !strings.Contains(e.Message, want) {
				t.Errorf("FailedMount of %s = %q, want it to say %s", e.InvolvedObject.Name, e.Message, want)
			}
			if node := nodes[e.InvolvedObject.Name]; e.Source.Host != node {
				t.Errorf("FailedMount of %s came from %q, want %q", e.InvolvedObject.Name, e.Source.Host, node)
			}
			failed[e.InvolvedObject.Name] = true
		case <-ctx.Done():
			t.Fatalf("FailedMount came for %v only: %v", failed, ctx.Err())
		}
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shared"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name := range nodes {
		pod := "default/" + name
		log.mustWait(t, ctx, 0, "Running status of "+pod, func(e traceEvent) bool { return isRunning(e, pod) })
	}
	if err := stop(); err != nil {
		t.Errorf("run() = %v, want nil", err)
	}
	// The server counts a watch once it ends, which may be after run returned: the counts are
	// read until they are all in. Two kubelets would make two watches of each ConfigMap and two
	// of the Services. The reflectors list by watch (watch-list), so there is no LIST.
	want := map[string]int{"configmaps WATCH": 2, "services WATCH": 1}
	var got map[string]int
	for {
		got = requestCounts(t, srv, "configmaps", "services")
		all := true
		for k, n := range want {
			all = all && got[k] >= n
		}
		if all {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the API server's request counts = %v, want %v: %v", got, want, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the fleet's requests for ConfigMaps and Services (-want +got):\n%s", diff)
	}
}

// requestCounts reads srv's apiserver_request_total of the resources, by "resource VERB",
// without the POSTs (the test's own creates).
func requestCounts(t *testing.T, srv *fakeapiserver.Server, resources ...string) map[string]int {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer t0ken") // serveAPIServer's
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", rec.Code)
	}
	out := map[string]int{}
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		for _, r := range resources {
			if !strings.Contains(line, `resource="`+r+`"`) {
				continue
			}
			_, verb, _ := strings.Cut(line, `verb="`)
			verb, _, _ = strings.Cut(verb, `"`)
			n, err := strconv.Atoi(line[strings.LastIndex(line, " ")+1:])
			if err != nil {
				t.Fatalf("apiserver_request_total line %q: %v", line, err)
			}
			if verb != "POST" {
				out[r+" "+verb] += n
			}
		}
	}
	return out
}
