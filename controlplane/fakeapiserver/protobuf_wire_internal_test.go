package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

const wirePB = "application/vnd.kubernetes.protobuf"

func wireServer(t *testing.T, o Options) *Server {
	t.Helper()
	o.Clock, o.Tracer = vclock.New(vclock.Epoch), trace.Discard
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func wireDo(h http.Handler, ctx context.Context, method, path, ct, body, accept string) *httptest.ResponseRecorder {
	r := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func wirePod(name string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default","labels":{"a":"b"}},"spec":{"nodeName":"n","containers":[{"name":"c","image":"i"}]}}`, name)
}

// kube-apiserver sorts Accept's clauses by q, then specific before wildcard (goautoneg.ParseAccept),
// and negotiates in that order.
func TestNegotiationQValuesAndWildcards(t *testing.T) {
	s := wireServer(t, Options{})
	h := s.Handler()
	ctx := context.Background()
	if w := wireDo(h, ctx, "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod("p"), ""); w.Code != 201 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	for _, tt := range []struct{ accept, want string }{
		{"application/json;q=0.5, " + wirePB, wirePB},
		{"*/*, " + wirePB, wirePB},
		{wirePB + ";q=0.1, application/json", "application/json"},
	} {
		w := wireDo(h, ctx, "GET", "/api/v1/namespaces/default/pods/p", "", "", tt.accept)
		if got := w.Header().Get("Content-Type"); got != tt.want {
			t.Errorf("Accept %q answered %q; kube-apiserver answers %q", tt.accept, got, tt.want)
		}
	}
}

// The protobuf list and watch bytes are what kube-apiserver's encoders make of the same objects.
func TestProtobufBytesAreKubeAPIServers(t *testing.T) {
	s := wireServer(t, Options{})
	h := s.Handler()
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if w := wireDo(h, ctx, "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod(n), ""); w.Code != 201 {
			t.Fatalf("create = %d %s", w.Code, w.Body)
		}
	}
	env := protobuf.NewSerializer(scheme, scheme)
	raw := protobuf.NewRawSerializer(scheme, scheme)

	// list
	var list corev1.PodList
	if err := json.Unmarshal(wireDo(h, ctx, "GET", "/api/v1/pods", "", "", "application/json").Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		list.Items[i].TypeMeta = metav1.TypeMeta{}
	}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	var want bytes.Buffer
	if err := env.Encode(&list, &want); err != nil {
		t.Fatal(err)
	}
	got := wireDo(h, ctx, "GET", "/api/v1/pods", "", "", wirePB+",application/json").Body.Bytes()
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("protobuf list differs from the PodList's own encoding:\n got %q\nwant %q", got, want.Bytes())
	}

	// watch: kube-apiserver's watchEncoder: the object through the envelope serializer, the
	// metav1.WatchEvent through the raw one, framed by LengthDelimitedFramer.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	w := wireDo(h, cctx, "GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=0&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "", "", wirePB+",application/json")
	var ref bytes.Buffer
	fw := protobuf.LengthDelimitedFramer.NewFrameWriter(&ref)
	enc := streaming.NewEncoder(fw, raw)
	for i := range list.Items {
		pod := list.Items[i].DeepCopy()
		pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		var b bytes.Buffer
		if err := env.Encode(pod, &b); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: b.Bytes()}}); err != nil {
			t.Fatal(err)
		}
	}
	bm := &corev1.Pod{}
	bm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	bm.ResourceVersion = list.ResourceVersion
	bm.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	var b bytes.Buffer
	if err := env.Encode(bm, &b); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(&metav1.WatchEvent{Type: "BOOKMARK", Object: runtime.RawExtension{Raw: b.Bytes()}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Body.Bytes(), ref.Bytes()) {
		t.Errorf("protobuf watch differs from kube-apiserver's encoders:\n got %q\nwant %q", w.Body.Bytes(), ref.Bytes())
	}
}

// The watch history's byte bound counts JSON; the protobuf encodings that readers make are shared
// by current versions only, so the versions that only the history holds stay within the bound
// after a protobuf watch has read every one of them, and the current ones share theirs only while
// a reader holds it: once the watch is done, a collection takes them too.
func TestHistoryBoundHoldsWithProtobuf(t *testing.T) {
	const bound = 64 << 10
	s := wireServer(t, Options{HistoryBytes: bound})
	h := s.Handler()
	ctx := context.Background()
	for i := range 100 {
		name := fmt.Sprintf("p%03d", i)
		if w := wireDo(h, ctx, "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod(name), ""); w.Code != 201 {
			t.Fatalf("create = %d %s", w.Code, w.Body)
		}
		// A protobuf reader of the version about to be replaced: it caches the encoding that
		// the update must drop.
		if w := wireDo(h, ctx, "GET", "/api/v1/namespaces/default/pods/"+name, "", "", wirePB); w.Code != 200 {
			t.Fatalf("get = %d", w.Code)
		}
		if w := wireDo(h, ctx, "PATCH", "/api/v1/namespaces/default/pods/"+name, "application/merge-patch+json", `{"metadata":{"labels":{"a":"c"}}}`, ""); w.Code != 200 {
			t.Fatalf("patch = %d %s", w.Code, w.Body)
		}
		if i%10 == 0 {
			if w := wireDo(h, ctx, "DELETE", "/api/v1/namespaces/default/pods/"+name+"?gracePeriodSeconds=0", "", "", ""); w.Code != 200 {
				t.Fatalf("delete = %d %s", w.Code, w.Body)
			}
		}
	}
	// A protobuf watch from the oldest version the history holds reads every event in it.
	var oldest uint64
	_ = s.store.locked(func() error { oldest = s.store.buckets["pods"].history[0].rv; return nil })
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	// Cancelled: the watch ends at its first wait, after the history's events.
	w := wireDo(h, cctx, "GET", fmt.Sprintf("/api/v1/pods?watch=1&resourceVersion=%d", oldest-1), "", "", wirePB)
	if w.Code != 200 || w.Header().Get("Content-Type") != wirePB+";stream=watch" {
		t.Fatalf("watch = %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	var counted, held, current int
	_ = s.store.locked(func() error {
		b := s.store.buckets["pods"]
		counted = int(b.historyBytes)
		seen := map[*entry]bool{}
		for _, ev := range b.history {
			for _, e := range []*entry{ev.prev, ev.cur} {
				if e == nil || seen[e] {
					continue
				}
				seen[e] = true
				if b.objects[objectKey(e.meta().GetNamespace(), e.meta().GetName())] == e {
					current++
					continue
				}
				held += e.size
				if pb, ok := e.pb.load(); ok {
					t.Errorf("superseded %s keeps its %d-byte protobuf encoding", e.meta().GetName(), len(pb.envelope))
					held += len(pb.envelope)
				}
			}
		}
		return nil
	})
	if held > bound {
		t.Errorf("the history holds %d encoded bytes of superseded versions (counted %d), over its bound %d", held, counted, bound)
	}
	if current == 0 {
		t.Fatal("the history holds no current version")
	}
	// Nothing holds the watch's encodings now (the recorder copied them): a collection takes
	// them, and no current version keeps its protobuf for as long as it is current.
	goruntime.GC()
	var currentPB int
	_ = s.store.locked(func() error {
		for _, e := range s.store.buckets["pods"].objects {
			if _, ok := e.pb.load(); ok {
				currentPB++
			}
		}
		return nil
	})
	if currentPB != 0 {
		t.Errorf("%d current versions keep the protobuf the watch made after a collection; want none", currentPB)
	}
}

// An event's stored entry keeps no encoding (fleetcreate) — until someone reads it in protobuf.
func TestStoredEventKeepsNoProtobuf(t *testing.T) {
	s := wireServer(t, Options{})
	h := s.Handler()
	ctx := context.Background()
	if w := wireDo(h, ctx, "POST", "/api/v1/namespaces/default/events", "application/json",
		`{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"Pulled","message":"m","type":"Normal","source":{"component":"kubelet"}}`, ""); w.Code != 201 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	if w := wireDo(h, ctx, "GET", "/api/v1/namespaces/default/events", "", "", wirePB+",application/json"); w.Code != 200 {
		t.Fatal(w.Code)
	}
	var e *entry
	_ = s.store.locked(func() error { e = s.store.buckets["events"].objects["default/e"]; return nil })
	if pb, ok := e.pb.load(); e.raw == nil && ok {
		t.Errorf("the stored event keeps no JSON but keeps its %d-byte protobuf encoding for its hour", len(pb.envelope))
	}
}

// kube-apiserver negotiates a write's answer before the write: nothing it can produce is 406, and
// nothing is written.
func TestWriteNotAcceptableWritesNothing(t *testing.T) {
	s := wireServer(t, Options{})
	h := s.Handler()
	w := wireDo(h, context.Background(), "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod("p"), "application/cbor")
	if w.Code != http.StatusNotAcceptable {
		t.Errorf("POST with Accept application/cbor = %d %s; kube-apiserver: 406, pod not created", w.Code, w.Header().Get("Content-Type"))
	}
	if got := w.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("406 answered in %q; kube-apiserver falls back to JSON", got)
	}
	if g := wireDo(h, context.Background(), "GET", "/api/v1/namespaces/default/pods/p", "", "", ""); g.Code != http.StatusNotFound {
		t.Errorf("GET after the refused POST = %d; want 404, nothing written", g.Code)
	}
	// The answer is negotiated before the body is read: a bad body is still 406, not 400.
	if w := wireDo(h, context.Background(), "POST", "/api/v1/namespaces/default/pods", "application/json", "{", "application/cbor"); w.Code != http.StatusNotAcceptable {
		t.Errorf("POST of a bad body with Accept application/cbor = %d; want 406", w.Code)
	}
	// An Accept that names JSON too is served.
	if w := wireDo(h, context.Background(), "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod("p"), "application/cbor, application/json;q=0.5"); w.Code != http.StatusCreated {
		t.Errorf("POST with Accept naming JSON too = %d %s", w.Code, w.Body)
	}
}

// kube-apiserver's 401 is negotiated (filters.Unauthorized → ErrorNegotiated).
func TestUnauthorizedNegotiated(t *testing.T) {
	s := wireServer(t, Options{BearerToken: "x"})
	w := wireDo(s.Handler(), context.Background(), "GET", "/api/v1/pods", "", "", wirePB+",application/json")
	if w.Code != 401 || w.Header().Get("Content-Type") != wirePB {
		t.Errorf("401 answered %d %q; kube-apiserver answers a protobuf Status", w.Code, w.Header().Get("Content-Type"))
	}
}

// kube-apiserver's 415 lists what it decodes: its serializers (protobuf included) for an object's
// body, the patch types its installer registers for a patch.
func TestUnsupportedMediaTypeLists(t *testing.T) {
	s := wireServer(t, Options{})
	h := s.Handler()
	ctx := context.Background()
	if w := wireDo(h, ctx, "POST", "/api/v1/namespaces/default/pods", "application/json", wirePod("p"), ""); w.Code != 201 {
		t.Fatalf("create = %d %s", w.Code, w.Body)
	}
	for _, tt := range []struct{ method, path, ct, want string }{
		{"POST", "/api/v1/namespaces/default/pods", "text/plain",
			"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got \"text/plain\""},
		{"PATCH", "/api/v1/namespaces/default/pods/p", "application/apply-patch+cbor",
			"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml; got \"application/apply-patch+cbor\""},
	} {
		w := wireDo(h, ctx, tt.method, tt.path, tt.ct, "{}", "")
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || w.Code != http.StatusUnsupportedMediaType {
			t.Fatalf("%s %s in %s = %d %s (%v)", tt.method, tt.path, tt.ct, w.Code, w.Body, err)
		}
		if st.Message != tt.want {
			t.Errorf("%s in %s: message\n %q\nwant %q", tt.method, tt.ct, st.Message, tt.want)
		}
	}
}
