package kubeletserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/kubeletserver"
)

// bigNode is a node with n running pods whose annotations take size bytes each, made of fill.
func bigNode(t *testing.T, n, size int, fill string) *kubeletserver.NodeHandler {
	t.Helper()
	var pods []kubeletserver.PodView
	for i := range n {
		pv := crashingPod()
		pod := pv.Pod.DeepCopy()
		pod.Name = fmt.Sprintf("web-%03d", i)
		pod.Annotations["big"] = strings.Repeat(fill, size/len(fill))
		pv.Pod = pod
		pods = append(pods, pv)
	}
	b := kubeletserver.NewBoard("node-1")
	b.Publish(&kubeletserver.Snapshot{Node: "node-1", Taken: t0, Pods: pods})
	h, err := kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{Board: b, Clock: clocktesting.NewFakePassiveClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestListResponsesAreTheEncodersBytes checks that the lists written item by item are byte for
// byte what json.Encoder writes for the whole value, escaping and trailing newline included.
func TestListResponsesAreTheEncodersBytes(t *testing.T) {
	h := bigNode(t, 3, 30, "<&>")
	for _, tc := range []struct {
		path string
		into any
	}{
		{"/pods", &v1.PodList{}},
		{"/runningpods/", &v1.PodList{}},
		{"/stats/summary", &statsv1alpha1.Summary{}},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if err := json.Unmarshal(rec.Body.Bytes(), tc.into); err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(tc.into); err != nil {
			t.Fatal(err)
		}
		if got := rec.Body.String(); got != want.String() {
			t.Errorf("GET %s =\n%s\nwant json.Encoder's\n%s", tc.path, got, want.String())
		}
	}
}

// stalledWriter is a response writer whose client stopped reading once the connection's buffers
// were full: the write that takes it past 64 KiB blocks until release is closed. It keeps none
// of the bytes, as the kernel's buffers are not the process's heap.
type stalledWriter struct {
	header  http.Header
	written int
	blocked *sync.WaitGroup
	release chan struct{}
	once    sync.Once
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(int)     {}
func (w *stalledWriter) Write(p []byte) (int, error) {
	w.written += len(p)
	if w.written > 64<<10 {
		w.once.Do(func() {
			w.blocked.Done()
			<-w.release
		})
	}
	return len(p), nil
}

// TestStalledClientsOfPodsAreBounded is a bounded load test of the attack on /pods: many clients
// that do not read, each answered with megabytes. Every handler is blocked in its first write,
// and what the process holds for them is measured: at most about one pod's encoding each, where
// each used to hold the whole list.
func TestStalledClientsOfPodsAreBounded(t *testing.T) {
	const clients, pods, podBytes = 100, 50, 16 << 10 // 800 KiB a response
	h := bigNode(t, pods, podBytes, "x")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var blocked, done sync.WaitGroup
	release := make(chan struct{})
	blocked.Add(clients)
	for range clients {
		w := &stalledWriter{header: http.Header{}, blocked: &blocked, release: release}
		done.Go(func() { h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/pods", nil)) })
	}
	blocked.Wait()
	runtime.GC()
	runtime.ReadMemStats(&after)
	close(release)
	done.Wait()
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	perClient := held / clients
	t.Logf("%d stalled clients of a %d KiB /pods hold %d KiB, %d KiB each", clients, pods*podBytes>>10, held>>10, perClient>>10)
	if limit := int64(2*podBytes + 16<<10); perClient > limit {
		t.Errorf("a stalled client of /pods holds %d bytes, want at most %d (about one pod's encoding)", perClient, limit)
	}
}
