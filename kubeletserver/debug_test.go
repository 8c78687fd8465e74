package kubeletserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/kubeletserver"
)

// TestDebugHandlers serves a node with each setting of the kubelet's enableDebuggingHandlers and
// enableProfilingHandler: the profiles only when asked for, their command line the one given
// (never the process's, which carries --token), and the kubelet's 405 answers for what is off.
func TestDebugHandlers(t *testing.T) {
	type get struct {
		path string
		code int
		body string // "" for any
	}
	for _, tc := range []struct {
		name string
		opts kubeletserver.NodeOptions
		gets []get
	}{
		{"defaults", kubeletserver.NodeOptions{}, []get{
			{"/debug/pprof/", 405, "profiling endpoint is disabled.\n"},
			{"/debug/pprof/cmdline", 405, "profiling endpoint is disabled.\n"},
			{"/configz", 200, ""},
			{"/runningpods/", 200, ""},
		}},
		{"profiling", kubeletserver.NodeOptions{Profiling: true, Cmdline: []string{"minikubelet", "run", "--token", "<redacted>"}}, []get{
			{"/debug/pprof/cmdline", 200, "minikubelet\x00run\x00--token\x00<redacted>"},
			{"/debug/pprof/", 200, ""},
		}},
		{"debugging off", kubeletserver.NodeOptions{DisableDebugging: true, Profiling: true}, []get{
			{"/debug/pprof/cmdline", 405, "Debug endpoints are disabled.\n"},
			{"/containerLogs/default/web/app", 405, "Debug endpoints are disabled.\n"},
			{"/runningpods/", 405, "Debug endpoints are disabled.\n"},
			{"/exec/default/web/app", 405, "Debug endpoints are disabled.\n"},
			{"/configz", 404, ""},
			{"/pods", 200, ""},
			{"/healthz", 200, "ok"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Board = kubeletserver.NewBoard("node-1")
			opts.Board.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0, Pods: []kubeletserver.PodView{crashingPod()}})
			opts.Clock = clocktesting.NewFakePassiveClock(t0)
			h, err := kubeletserver.NewNodeHandler(opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tc.gets {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, g.path, nil))
				if rec.Code != g.code || (g.body != "" && rec.Body.String() != g.body) {
					t.Errorf("GET %s = %d %q, want %d %q", g.path, rec.Code, rec.Body.String(), g.code, g.body)
				}
			}
		})
	}
}
