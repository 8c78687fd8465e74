package fakeapiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestEventsKeepNoEncoding: the store keeps no encoding beside an event's object, and what it
// answers for the event is byte for byte what the write that stored it encoded: the create's
// response, a GET, a list's item, a watch's event from the history and a patch of the count
// (which applies to the encoding made again) all carry the same bytes as when the encoding was
// kept, and the watch history's size counts the encodings as before. Other resources keep theirs.
func TestEventsKeepNoEncoding(t *testing.T) {
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	srv, err := New(Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	do := func(method, path, contentType, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
		return b
	}
	stored := func(name string) *entry {
		t.Helper()
		var e *entry
		_ = srv.store.locked(func() error {
			e = srv.store.buckets["events"].objects["default/"+name]
			return nil
		})
		if e == nil {
			t.Fatalf("event %s not stored", name)
		}
		return e
	}
	const path = "/api/v1/namespaces/default/events"
	created := do("POST", path, "application/json", `{"metadata":{"name":"web.1"},"involvedObject":{"kind":"Pod","name":"web","namespace":"default"},"reason":"Pulled","message":"pulled","count":1,"type":"Normal","source":{"component":"kubelet","host":"n1"}}`, http.StatusCreated)
	// In process, as the kubelets of `run` and replay write theirs.
	fine := metav1.NewTime(start)
	d := srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	direct, err := d.create(ctx, d.target(eventsTarget, "default", "", ""), &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.2"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started", Message: "started",
		FirstTimestamp: fine, LastTimestamp: fine, Count: 1, Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "kubelet", Host: "n1"}})
	if err != nil {
		t.Fatal(err)
	}
	if direct.raw == nil {
		t.Fatal("the Direct create's entry keeps no encoding, want the bytes its commit made")
	}
	// What each write encoded when it committed: the HTTP create's response, the Direct
	// create's entry.
	committed := map[string][]byte{"web.1": created, "web.2": direct.raw}
	for _, name := range []string{"web.1", "web.2"} {
		e := stored(name)
		want := committed[name]
		if e.raw != nil || e.size != len(want) {
			t.Errorf("event %s stored with %d bytes kept, size %d; want none kept, size %d", name, len(e.raw), e.size, len(want))
		}
		if got := do("GET", path+"/"+name, "", "", http.StatusOK); string(got) != string(want) {
			t.Errorf("GET %s = %s, want the bytes its write committed %s", name, got, want)
		}
	}
	if got := do("GET", path+"/web.1", "", "", http.StatusOK); string(got) != string(created) {
		t.Errorf("GET web.1 = %s, want the create's response %s", got, created)
	}
	web2 := do("GET", path+"/web.2", "", "", http.StatusOK)
	patched := do("PATCH", path+"/web.2", string(types.StrategicMergePatchType), `{"count":2,"message":"started again"}`, http.StatusOK)
	var ev corev1.Event
	if err := json.Unmarshal(patched, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Count != 2 || ev.Message != "started again" || ev.Reason != "Started" || ev.Source.Host != "n1" {
		t.Errorf("patched event = %+v, want count 2, the new message and the stored rest", ev)
	}
	if got := do("GET", path+"/web.2", "", "", http.StatusOK); string(got) != string(patched) {
		t.Errorf("GET web.2 after the patch = %s, want the patch's response %s", got, patched)
	}

	// A list's items and a watch of the history carry the same bytes.
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(do("GET", path, "", "", http.StatusOK), &list); err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range list.Items {
		items = append(items, string(it))
	}
	one, two := string(do("GET", path+"/web.1", "", "", http.StatusOK)), string(do("GET", path+"/web.2", "", "", http.StatusOK))
	if diff := cmp.Diff([]string{one, two}, items); diff != "" {
		t.Errorf("list items mismatch (-want +got):\n%s", diff)
	}
	var first corev1.Event
	if err := json.Unmarshal(created, &first); err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.Atoi(first.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	req, err := http.NewRequestWithContext(wctx, "GET", ts.URL+path+"?watch=1&resourceVersion="+strconv.Itoa(rv-1), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	var watched []string
	for len(watched) < 3 && lines.Scan() {
		var we struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &we); err != nil {
			t.Fatalf("watch line %s: %v", lines.Bytes(), err)
		}
		watched = append(watched, we.Type+" "+string(we.Object))
	}
	wcancel()
	if want := []string{"ADDED " + one, "ADDED " + string(web2), "MODIFIED " + two}; !cmp.Equal(want, watched) {
		t.Errorf("watch from before the first event mismatch (-want +got):\n%s", cmp.Diff(want, watched))
	}

	var history, sum int64
	_ = srv.store.locked(func() error {
		b := srv.store.buckets["events"]
		history = b.historyBytes
		for _, ev := range b.history {
			sum += int64(len(ev.cur.encoded()))
			if ev.prev != nil {
				sum += int64(len(ev.prev.encoded()))
			}
		}
		return nil
	})
	if history != sum {
		t.Errorf("events' history size = %d, want the encodings' %d", history, sum)
	}
	// A pod keeps its encoding's size and hash, which its next write compares with its own
	// (resource.encodesOnDemand); a node keeps its encoding.
	podCreated := do("POST", "/api/v1/namespaces/default/pods", "application/json", `{"metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`, http.StatusCreated)
	do("POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"node-1"}}`, http.StatusCreated)
	var pod, node *entry
	_ = srv.store.locked(func() error {
		pod, node = srv.store.buckets["pods"].objects["default/web"], srv.store.buckets["nodes"].objects["/node-1"]
		return nil
	})
	if pod == nil || pod.raw != nil || !pod.summed || pod.sum != encodingSum(podCreated) || string(pod.encoded()) != string(podCreated) {
		t.Errorf("stored pod %v: want no encoding kept, the answer's size and hash, the answer's bytes encoded", pod)
	}
	if node == nil || node.raw == nil {
		t.Errorf("stored node %v keeps no encoding, want it kept", node)
	}
}

// TestEventsLoadedKeepNoEncoding: an event loaded from the data directory keeps no encoding
// either, and answers the bytes its write stored; a pod loaded keeps its encoding's size and hash,
// and encodes as it did before.
func TestEventsLoadedKeepNoEncoding(t *testing.T) {
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	ctx := context.Background()
	srv, err := New(Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard, DataDir: dir})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	d := srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	ev, err := d.create(ctx, d.target(eventsTarget, "default", "", ""), &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started", Message: "started", Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}); err != nil {
		t.Fatal(err)
	}
	committed := string(ev.raw)
	var committedPod string
	_ = srv.store.locked(func() error {
		committedPod = string(srv.store.buckets["pods"].objects["default/web"].encoded())
		return nil
	})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv, err = New(Options{Clock: clocktesting.NewFakeClock(start), Tracer: trace.Discard, DataDir: dir})
	if err != nil {
		t.Fatalf("New() again = %v", err)
	}
	defer srv.Close()
	var event, pod *entry
	_ = srv.store.locked(func() error {
		event, pod = srv.store.buckets["events"].objects["default/web.1"], srv.store.buckets["pods"].objects["default/web"]
		return nil
	})
	if event == nil || pod == nil {
		t.Fatalf("loaded event %v, pod %v; want both", event, pod)
	}
	if event.raw != nil || event.size != len(committed) {
		t.Errorf("loaded event keeps %d bytes, size %d; want none kept, size %d", len(event.raw), event.size, len(committed))
	}
	if got := string(event.encoded()); got != committed {
		t.Errorf("loaded event encodes as %s, want the stored %s", got, committed)
	}
	if pod.raw != nil || !pod.summed || pod.size != len(committedPod) || pod.sum != encodingSum([]byte(committedPod)) {
		t.Errorf("loaded pod keeps %d bytes, summed %v, size %d; want none kept, the stored encoding's size %d and hash", len(pod.raw), pod.summed, pod.size, len(committedPod))
	}
	if got := string(pod.encoded()); got != committedPod {
		t.Errorf("loaded pod encodes as %s, want the stored %s", got, committedPod)
	}
}
