package fakeapiserver

import (
	"context"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The writes beside status patches: resize, apply of the status, a graceful
// deletion, a PUT, a pod with an emptyDir sizeLimit; compared keep vs lean.
func TestHistoryServesEveryWriteKind(t *testing.T) {
	const pod = `{"metadata":{"name":"r","namespace":"default","labels":{"a":"b"}},"spec":{"nodeName":"n","containers":[{"name":"c","image":"i",
"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"200m","memory":"64Mi"}}}],"volumes":[{"name":"v","emptyDir":{"sizeLimit":"8Gi"}}]}}`
	servers := map[bool]*Server{}
	for _, keep := range []bool{true, false} {
		s := wireServer(t, Options{Rand: rand.New(rand.NewSource(7))})
		s.store.keepHistoryEncodings = keep
		h := s.Handler()
		ctx := context.Background()
		p := "/api/v1/namespaces/default/pods/r"
		steps := []struct{ method, path, ct, body string }{
			{"POST", "/api/v1/namespaces/default/pods", "application/json", pod},
			{"PATCH", p + "/status", "application/strategic-merge-patch+json", `{"status":{"phase":"Running","containerStatuses":[{"name":"c","image":"i","imageID":"","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}},"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}`},
			{"PATCH", p + "/resize", "application/strategic-merge-patch+json", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"150m"}}}]}}`},
			{"PATCH", p + "/status", "application/merge-patch+json", `{"status":{"message":"after resize"}}`},
			{"PATCH", p + "/status?fieldManager=sa", "application/apply-patch+yaml", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"r","namespace":"default"},"status":{"reason":"Applied"}}`},
			{"PATCH", p, "application/merge-patch+json", `{"metadata":{"labels":{"a":"c"}}}`},
			{"PATCH", p + "/status", "application/merge-patch+json", `{"status":{"message":"again"}}`},
			{"DELETE", p + "?gracePeriodSeconds=30", "", ""},
			{"PATCH", p + "/status", "application/merge-patch+json", `{"status":{"phase":"Succeeded"}}`},
			{"DELETE", p + "?gracePeriodSeconds=0", "", ""},
		}
		for _, st := range steps {
			if w := wireDo(h, ctx, st.method, st.path, st.ct, st.body, ""); w.Code >= 300 {
				t.Fatalf("%s %s = %d %s", st.method, st.path, w.Code, w.Body)
			}
		}
		servers[keep] = s
	}
	want, got := historyServed(t, servers[true]), historyServed(t, servers[false])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served from the history mismatch (-kept encodings +lean versions):\n%s", diff)
	}
}
