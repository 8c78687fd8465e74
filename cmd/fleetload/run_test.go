package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestRunFailsOnFailedCreates: a create that fails ends the run with an error naming the pod and
// the API server's answer, instead of waiting for a pod that will never run.
func TestRunFailsOnFailedCreates(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pods") {
			http.Error(w, "no room", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	conf := clientcmdapi.NewConfig()
	conf.Clusters["c"] = &clientcmdapi.Cluster{Server: ts.URL}
	conf.Contexts["c"] = &clientcmdapi.Context{Cluster: "c"}
	conf.CurrentContext = "c"
	if err := clientcmd.WriteToFile(*conf, kc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = run(ctx, config{kubeconfig: kc, nodes: 1, prefix: "sim", perNode: 2, workers: 1, steady: time.Second}, io.Discard)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "2 of 2 creates failed") || !strings.Contains(err.Error(), "default/load-") {
		t.Errorf("run() with every create failing = %v, want the failed creates, at once", err)
	}
}

func TestCPUProfileQuery(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		cfg     config
		want    string
		wantErr bool
	}{
		{"no profiles", config{profileFor: 0}, "", false},
		{"a minute", config{profileDir: dir, profileFor: time.Minute}, "profile?seconds=60", false},
		// pprof takes 0 seconds as its default of 30: a fraction rounds up.
		{"under a second", config{profileDir: dir, profileFor: 300 * time.Millisecond}, "profile?seconds=1", false},
		{"a fraction over", config{profileDir: dir, profileFor: 1500 * time.Millisecond}, "profile?seconds=2", false},
		{"zero", config{profileDir: dir}, "", true},
		{"negative", config{profileDir: dir, profileFor: -time.Second}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cpuProfileQuery(tt.cfg)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("cpuProfileQuery(%v) = %q, %v; want %q, error %v", tt.cfg.profileFor, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
