package fakeapiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestFieldManagerCachesSharedByServers makes the same writes on two servers of the process and
// wants the second server's to add no entry to the field manager's caches of type roots and
// reset filters: each Server builds its own resource rows, and the caches are keyed by what
// their answers depend on, not by the row.
func TestFieldManagerCachesSharedByServers(t *testing.T) {
	ctx := context.Background()
	probe := fieldProbe(t)
	writes := func(s *Server) {
		t.Helper()
		kubectl, kubelet := s.Direct("kubectl/v1"), s.Direct("kubelet/v1")
		for i := range 2 {
			name := fmt.Sprintf("p-%d", i)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
			if _, err := kubectl.CreatePod(ctx, pod); err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			for _, patch := range []string{
				`{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]}}`,
				`{"status":{"phase":"Running"}}`,
				`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`,
			} {
				if _, err := kubelet.PatchPodStatus(ctx, "default", name, types.StrategicMergePatchType, []byte(patch)); err != nil {
					t.Fatalf("patch the status of %s with %s: %v", name, patch, err)
				}
			}
		}
		// An events.k8s.io/v1 write goes through the store's own row of core events.
		const ev = `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"default"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"c/x","reportingInstance":"i","action":"A","reason":"R","type":"Normal","regarding":{"kind":"Pod","namespace":"default","name":"p-0"},"note":"n"}`
		h := s.Handler()
		serve := func(method, path, contentType, body string) *httptest.ResponseRecorder {
			r := httptest.NewRequest(method, path, strings.NewReader(body))
			r.Header.Set("Content-Type", contentType)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
		if w := serve("POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json", ev); w.Code != http.StatusCreated {
			t.Fatalf("create the event = %d %s", w.Code, w.Body.String())
		}
		if w := serve("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e", "application/merge-patch+json", `{"note":"m"}`); w.Code != http.StatusOK {
			t.Fatalf("patch the event = %d %s", w.Code, w.Body.String())
		}
	}
	var counts [2][2]int // per server: type roots, reset filters
	for i := range counts {
		s, err := New(Options{Clock: clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		writes(s)
		counts[i] = [2]int{probe.TypeRoots(), probe.ResetFilters()}
	}
	if counts[0][0] == 0 || counts[0][1] == 0 {
		t.Fatalf("after the first server's writes: %d type roots, %d reset filters; want the writes to reach both caches", counts[0][0], counts[0][1])
	}
	if counts[1] != counts[0] {
		t.Errorf("the second server's writes grew the caches: type roots %d -> %d, reset filters %d -> %d", counts[0][0], counts[1][0], counts[0][1], counts[1][1])
	}
}
