package kubeletserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/kubeletserver"
)

func TestFleetRouting(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0.Add(30 * time.Second))
	fleet := kubeletserver.NewFleet("127.0.0.1:10250")
	add := func(name string, pods ...kubeletserver.PodView) {
		b := kubeletserver.NewBoard(name)
		b.Publish(&kubeletserver.Snapshot{Node: name, Taken: t0.Add(30 * time.Second), Pods: pods})
		h, err := kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{Board: b, Clock: clk, Configz: map[string]string{"node": name}})
		if err != nil {
			t.Fatal(err)
		}
		fleet.Add(name, h, b)
	}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		fleet.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	add("node-1")
	if code, body := get("/configz"); code != 200 || body != `{"kubeletconfig":{"node":"node-1"}}`+"\n" {
		t.Errorf("one node: /configz = %d %s", code, body)
	}
	add("node-2", crashingPod())
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/nodes/node-2/configz", 200, `{"kubeletconfig":{"node":"node-2"}}` + "\n"},
		{"/nodes/node-1/healthz", 200, "ok"},
		{"/nodes/node-3/healthz", 404, "node \"node-3\" is not simulated here\n"},
		{"/healthz", 200, "ok"},
		{"/configz", 404, "this listener serves many nodes: use /nodes/{node}/configz\n"},
		{"/containerLogs/default/web/app?tailLines=1", 200, "world\n"},
		{"/containerLogs/default/gone/app", 404, "pod \"gone\" does not exist\n"},
		{"/discovery/prometheus", 200, `[{"targets":["127.0.0.1:10250"],"labels":{"__metrics_path__":"/nodes/node-1/metrics","node":"node-1"}},{"targets":["127.0.0.1:10250"],"labels":{"__metrics_path__":"/nodes/node-2/metrics","node":"node-2"}}]` + "\n"},
	} {
		if code, body := get(tc.path); code != tc.code || body != tc.body {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, code, body, tc.code, tc.body)
		}
	}
	clk.SetTime(t0.Add(time.Hour))
	if code, body := get("/healthz"); code != 500 || body != "healthz check failed for nodes: node-1, node-2\n" {
		t.Errorf("stale fleet /healthz = %d %q", code, body)
	}
}
