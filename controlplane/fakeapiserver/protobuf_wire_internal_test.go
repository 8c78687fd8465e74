package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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

