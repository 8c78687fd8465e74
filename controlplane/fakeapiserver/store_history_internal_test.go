package fakeapiserver

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// historyWrites gives s the writes of a few pods' lives, over HTTP and in process as a fleet's
// kubelets write: creates, status patches, label patches that take a pod out of a selection,
// deletions.
func historyWrites(t *testing.T, s *Server) {
	t.Helper()
	h := s.Handler()
	ctx := context.Background()
	d := s.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	const pods = "/api/v1/namespaces/default/pods/"
	for i := range 5 {
		if w := wireDo(h, ctx, "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod(fmt.Sprintf("p%d", i)), ""); w.Code != 201 {
			t.Fatalf("create p%d = %d %s", i, w.Code, w.Body)
		}
	}
	for i := range 5 {
		patch := fmt.Sprintf(`{"status":{"phase":"Running","podIP":"10.0.0.%d","conditions":[{"type":"Ready","status":"True"}]}}`, i+1)
		if _, err := d.PatchPodStatus(ctx, "default", fmt.Sprintf("p%d", i), types.StrategicMergePatchType, []byte(patch)); err != nil {
			t.Fatalf("status patch of p%d: %v", i, err)
		}
	}
	for i := range 5 {
		name := fmt.Sprintf("p%d", i)
		if i%2 == 0 {
			if w := wireDo(h, ctx, "PATCH", pods+name, "application/merge-patch+json", `{"metadata":{"labels":{"a":"c"}}}`, ""); w.Code != 200 {
				t.Fatalf("label patch of %s = %d %s", name, w.Code, w.Body)
			}
		}
		if w := wireDo(h, ctx, "PATCH", pods+name+"/status", "application/strategic-merge-patch+json", `{"status":{"message":"again"}}`, ""); w.Code != 200 {
			t.Fatalf("status patch of %s = %d %s", name, w.Code, w.Body)
		}
	}
	for _, name := range []string{"p0", "p3"} {
		if w := wireDo(h, ctx, "DELETE", pods+name+"?gracePeriodSeconds=0", "", "", ""); w.Code != 200 {
			t.Fatalf("delete %s = %d %s", name, w.Code, w.Body)
		}
	}
}

// historyServed is everything s serves that a version the history alone holds goes into: watches
// from before the first write in JSON, protobuf and as tables (with and without a selector the
// label patches leave), and the list at every resource version in JSON and protobuf.
func historyServed(t *testing.T, s *Server) map[string]string {
	t.Helper()
	h := s.Handler()
	cancelled, cancel := context.WithCancel(context.Background())
	// Cancelled: a watch ends at its first wait, after the history's events.
	cancel()
	out := map[string]string{}
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, q := range []struct{ name, query, accept string }{
		{"watch json", "", ""},
		{"watch protobuf", "", wirePB},
		{"watch table", "&includeObject=Object", table},
		{"watch json a=b", "&labelSelector=a%3Db", ""},
		{"watch protobuf a=b", "&labelSelector=a%3Db", wirePB},
	} {
		w := wireDo(h, cancelled, "GET", "/api/v1/pods?watch=1&resourceVersion=1"+q.query, "", "", q.accept)
		if w.Code != 200 || w.Body.Len() == 0 {
			t.Fatalf("%s = %d %s", q.name, w.Code, w.Body)
		}
		out[q.name] = w.Body.String()
	}
	now := s.store.currentRV()
	for rv := uint64(2); rv <= now; rv++ {
		for _, accept := range []string{"", wirePB} {
			path := fmt.Sprintf("/api/v1/namespaces/default/pods?resourceVersion=%d&resourceVersionMatch=Exact", rv)
			w := wireDo(h, context.Background(), "GET", path, "", "", accept)
			if w.Code != 200 {
				t.Fatalf("list at %d = %d %s", rv, w.Code, w.Body)
			}
			out[fmt.Sprintf("list %d %q", rv, accept)] = w.Body.String()
		}
	}
	return out
}

// TestHistoryKeepsNoEncoding: a version that a later write replaced keeps no encoding in the watch
// history (the current one of a pod keeps its encoding's size and hash), and everything served
// from the history and the current versions (watches in JSON, protobuf and tables, with a
// selector, and lists at every resource version) is byte for byte what a store that keeps every
// version's encoding serves.
func TestHistoryKeepsNoEncoding(t *testing.T) {
	servers := map[bool]*Server{}
	for _, keep := range []bool{true, false} {
		s := wireServer(t, Options{Rand: rand.New(rand.NewSource(7))})
		s.store.keepHistoryEncodings = keep
		historyWrites(t, s)
		servers[keep] = s
	}
	for keep, s := range servers {
		var kept, lean, current int
		_ = s.store.locked(func() error {
			b := s.store.buckets["pods"]
			for _, ev := range b.history {
				for _, e := range []*entry{ev.prev, ev.cur} {
					switch {
					case e == nil:
					case b.objects[objectKey(e.meta().GetNamespace(), e.meta().GetName())] == e:
						current++
						if keep && e.raw == nil {
							t.Errorf("current version %s %s keeps no encoding", e.meta().GetName(), e.meta().GetResourceVersion())
						}
						if !keep && (e.raw != nil || !e.summed || e.size != len(e.encoded())) {
							t.Errorf("current version %s %s keeps %d bytes, summed %v, size %d; want none kept, summed, the encoding's size",
								e.meta().GetName(), e.meta().GetResourceVersion(), len(e.raw), e.summed, e.size)
						}
					case e.raw != nil:
						kept++
					default:
						lean++
						if e.size == 0 {
							t.Errorf("lean version %s %s counts no size for the history's bound", e.meta().GetName(), e.meta().GetResourceVersion())
						}
					}
				}
			}
			return nil
		})
		if current != 3 {
			t.Errorf("keep=%v: the history holds %d current versions, want the 3 pods not deleted", keep, current)
		}
		if keep && lean != 0 || !keep && kept != 0 || kept+lean == 0 {
			t.Errorf("keep=%v: the history holds %d superseded versions with their encoding and %d without", keep, kept, lean)
		}
	}
	var bytesKeep, bytesLean int64
	_ = servers[true].store.locked(func() error { bytesKeep = servers[true].store.buckets["pods"].historyBytes; return nil })
	_ = servers[false].store.locked(func() error { bytesLean = servers[false].store.buckets["pods"].historyBytes; return nil })
	if bytesKeep != bytesLean {
		t.Errorf("the history counts %d bytes without the encodings, %d with them; want the same bound", bytesLean, bytesKeep)
	}
	want, got := historyServed(t, servers[true]), historyServed(t, servers[false])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served from the history mismatch (-kept encodings +lean versions):\n%s", diff)
	}
}
