package fakeapiserver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

const (
	protobufType = "application/vnd.kubernetes.protobuf"
	// kubeletAccept is what the kubelet's client accepts with its default content type.
	kubeletAccept = protobufType + ",application/json"
)

// answerTypes records the Content-Type of every answer a client gets, by method and path.
type answerTypes struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	seen map[string]string
}

func (a *answerTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.rt.RoundTrip(r)
	if err == nil {
		a.mu.Lock()
		a.seen[r.Method+" "+r.URL.Path] = resp.Header.Get("Content-Type")
		a.mu.Unlock()
	}
	return resp, err
}

func (a *answerTypes) of(method, path string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[method+" "+path]
}

// protobufClient is a clientset configured as the kubelet configures its own, protobuf with JSON
// as the fallback, whose answers' types are recorded.
func protobufClient(t *testing.T, f *fixture) (kubernetes.Interface, *answerTypes) {
	t.Helper()
	rc := f.restConfig()
	rc.ContentType = protobufType
	rc.AcceptContentTypes = kubeletAccept
	answers := &answerTypes{seen: map[string]string{}}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { answers.rt = rt; return answers })
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c, answers
}

// jsonClient is a clientset that speaks JSON only.
func jsonClient(t *testing.T, f *fixture) kubernetes.Interface {
	t.Helper()
	rc := f.restConfig()
	rc.ContentType = "application/json"
	rc.AcceptContentTypes = "application/json"
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameObjects compares what the two encodings carry. Protobuf has no empty list or map apart
// from a missing one, and the items of a list carry no kind there, as from kube-apiserver.
var sameObjects = []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreTypes(metav1.TypeMeta{})}

// TestProtobufEveryVerb drives every verb the kubelet uses through a client configured as the
// kubelet's: each answer is protobuf, and each decodes to what a JSON client gets.
func TestProtobufEveryVerb(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, testOptions())
	pc, answers := protobufClient(t, f)
	jc := jsonClient(t, f)
	const podPath = "/api/v1/namespaces/default/pods/p"
	wantProtobuf := func(method, path string) {
		t.Helper()
		if got := answers.of(method, path); got != protobufType {
			t.Errorf("%s %s answered with Content-Type %q, want %q", method, path, got, protobufType)
		}
	}

	w, err := pc.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=p"})
	if err != nil {
		t.Fatalf("Watch() = %v", err)
	}
	defer w.Stop()
	jw, err := jc.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=p"})
	if err != nil {
		t.Fatalf("JSON Watch() = %v", err)
	}
	defer jw.Stop()

	created, err := pc.CoreV1().Pods("default").Create(ctx, newPod("default", "p", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create() = %v", err)
	}
	wantProtobuf("POST", "/api/v1/namespaces/default/pods")
	got, err := pc.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get() = %v", err)
	}
	wantProtobuf("GET", podPath)
	if diff := cmp.Diff(created, got, sameObjects...); diff != "" {
		t.Errorf("Get() differs from Create()'s answer (-create +get):\n%s", diff)
	}
	jgot, err := jc.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("JSON Get() = %v", err)
	}
	if diff := cmp.Diff(jgot, got, sameObjects...); diff != "" {
		t.Errorf("Get() in protobuf differs from JSON (-json +protobuf):\n%s", diff)
	}

	got.Labels["tier"] = "web"
	updated, err := pc.CoreV1().Pods("default").Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Labels["tier"] != "web" {
		t.Fatalf("Update() = %v, %v; want the label", updated, err)
	}
	wantProtobuf("PUT", podPath)
	updated.Status.Phase = corev1.PodRunning
	status, err := pc.CoreV1().Pods("default").UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil || status.Status.Phase != corev1.PodRunning {
		t.Fatalf("UpdateStatus() = %v, %v; want Running", status, err)
	}
	wantProtobuf("PUT", podPath+"/status")
	patched, err := pc.CoreV1().Pods("default").Patch(ctx, "p", types.StrategicMergePatchType,
		[]byte(`{"metadata":{"annotations":{"a":"b"}}}`), metav1.PatchOptions{})
	if err != nil || patched.Annotations["a"] != "b" {
		t.Fatalf("Patch() = %v, %v; want the annotation", patched, err)
	}
	wantProtobuf("PATCH", podPath)
	patched, err = pc.CoreV1().Pods("default").Patch(ctx, "p", types.StrategicMergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`), metav1.PatchOptions{}, "status")
	if err != nil || len(patched.Status.Conditions) != 1 {
		t.Fatalf("status Patch() = %v, %v; want one condition", patched, err)
	}
	wantProtobuf("PATCH", podPath+"/status")

	list, err := pc.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("List() = %v, %v; want one pod", list, err)
	}
	wantProtobuf("GET", "/api/v1/pods")
	jlist, err := jc.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("JSON List() = %v", err)
	}
	if diff := cmp.Diff(jlist, list, sameObjects...); diff != "" {
		t.Errorf("List() in protobuf differs from JSON (-json +protobuf):\n%s", diff)
	}
	if list.ResourceVersion == "" {
		t.Errorf("List() has no resourceVersion")
	}
	page, err := pc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Continue == "" || page.RemainingItemCount == nil {
		t.Fatalf("List(limit 1) = %v, %v; want one namespace, a continue token and a remaining count", page, err)
	}

	tr, err := pc.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil || tr.Status.Token == "" {
		t.Fatalf("CreateToken() = %v, %v; want a token", tr, err)
	}
	wantProtobuf("POST", "/api/v1/namespaces/default/serviceaccounts/default/token")

	lease, err := pc.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("n")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("lease Create() = %v", err)
	}
	lease.Spec.LeaseDurationSeconds = ptr.To[int32](40)
	if lease, err = pc.CoordinationV1().Leases("kube-node-lease").Update(ctx, lease, metav1.UpdateOptions{}); err != nil || *lease.Spec.LeaseDurationSeconds != 40 {
		t.Fatalf("lease Update() = %v, %v", lease, err)
	}
	wantProtobuf("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n")
	ev, err := pc.CoreV1().Events("default").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "p.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
		Reason:         "Started", Message: "Started container c", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "kubelet", Host: "n"},
	}, metav1.CreateOptions{})
	if err != nil || ev.Reason != "Started" {
		t.Fatalf("event Create() = %v, %v", ev, err)
	}
	wantProtobuf("POST", "/api/v1/namespaces/default/events")

	_, err = pc.CoreV1().Pods("default").Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `pods "missing" not found`) {
		t.Errorf("Get(missing) = %v, want NotFound", err)
	}
	wantProtobuf("GET", "/api/v1/namespaces/default/pods/missing")

	if err := pc.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatalf("Delete() = %v", err)
	}
	wantProtobuf("DELETE", podPath)
	if err := pc.CoreV1().Events("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("DeleteCollection() = %v", err)
	}
	wantProtobuf("DELETE", "/api/v1/namespaces/default/events")

	// The watch saw each write of the pod as the JSON watch did.
	events := watchUntilDeleted(t, w)
	jevents := watchUntilDeleted(t, jw)
	if diff := cmp.Diff(jevents, events, sameObjects...); diff != "" {
		t.Errorf("watch in protobuf differs from JSON (-json +protobuf):\n%s", diff)
	}
	if n := len(events); n != 7 {
		t.Errorf("watch had %d events, want 7 (added, 4 modified, modified by the delete, deleted)", n)
	}
	if got := answers.of("GET", "/api/v1/namespaces/default/pods"); got != protobufType+";stream=watch" {
		t.Errorf("the watch's answer is %q, want a protobuf stream", got)
	}
}

func watchUntilDeleted(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var out []watch.Event
	for ev := range w.ResultChan() {
		out = append(out, ev)
		if ev.Type == watch.Deleted || ev.Type == watch.Error {
			return out
		}
	}
	t.Fatalf("watch ended after %d events without DELETED", len(out))
	return nil
}

// frames reads a protobuf watch stream as kube-apiserver frames it: each event's length in four
// bytes, big endian, then a metav1.WatchEvent without envelope, whose object has one.
func frames(t *testing.T, body []byte) []watch.Event {
	t.Helper()
	var out []watch.Event
	r := bytes.NewReader(body)
	for {
		var n uint32
		if err := binary.Read(r, binary.BigEndian, &n); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("frame length: %v", err)
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatalf("frame of %d bytes: %v", n, err)
		}
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(data); err != nil {
			t.Fatalf("WatchEvent: %v", err)
		}
		if !bytes.HasPrefix(ev.Object.Raw, []byte("k8s\x00")) {
			t.Fatalf("event object %q is not in the protobuf envelope", ev.Object.Raw)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			t.Fatalf("event object: %v", err)
		}
		out = append(out, watch.Event{Type: watch.EventType(ev.Type), Object: obj})
	}
}

// TestProtobufWatchFraming reads protobuf watches byte by byte: objects, the bookmark that ends a
// watch list's initial events, and an error event.
func TestProtobufWatchFraming(t *testing.T) {
	f := newFixture(t, testOptions())
	f.createPod(t, newPod("default", "p", "n"))
	h := f.srv.Handler()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the watch ends after its initial events
	get := func(query string) (string, []watch.Event) {
		t.Helper()
		r, err := http.NewRequestWithContext(ctx, "GET", "/api/v1/namespaces/default/pods?watch=1&"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Accept", kubeletAccept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("watch ?%s = %d %q", query, w.Code, w.Body.String())
		}
		return w.Header().Get("Content-Type"), frames(t, w.Body.Bytes())
	}
	ct, evs := get("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	if ct != protobufType+";stream=watch" {
		t.Errorf("Content-Type = %q, want %q", ct, protobufType+";stream=watch")
	}
	if len(evs) != 2 || evs[0].Type != watch.Added || evs[1].Type != watch.Bookmark {
		t.Fatalf("events = %v, want ADDED then BOOKMARK", evs)
	}
	if pod, ok := evs[0].Object.(*corev1.Pod); !ok || pod.Name != "p" || pod.Spec.NodeName != "n" {
		t.Errorf("ADDED object = %#v, want pod p on n", evs[0].Object)
	}
	bm, ok := evs[1].Object.(*corev1.Pod)
	if !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.ResourceVersion == "" {
		t.Errorf("BOOKMARK object = %#v, want a pod with the initial-events annotation and a version", evs[1].Object)
	}
	_, evs = get("resourceVersion=1000000")
	if len(evs) != 1 || evs[0].Type != watch.Error {
		t.Fatalf("events = %v, want one ERROR", evs)
	}
	if st, ok := evs[0].Object.(*metav1.Status); !ok || st.Status != metav1.StatusFailure || st.Code == 0 {
		t.Errorf("ERROR object = %#v, want a Status", evs[0].Object)
	}
}

// TestProtobufNegotiation: what kube-apiserver answers for each Accept header: protobuf for
// objects, lists and errors when asked first, Tables in JSON only.
func TestProtobufNegotiation(t *testing.T) {
	f := newFixture(t, testOptions())
	f.createPod(t, newPod("default", "p", "n"))
	h := f.srv.Handler()
	for _, tt := range []struct {
		name, path, accept string
		code               int
		contentType        string
		kind               string
	}{
		{"object", "/api/v1/namespaces/default/pods/p", kubeletAccept, 200, protobufType, "Pod"},
		{"protobuf only", "/api/v1/namespaces/default/pods/p", protobufType, 200, protobufType, "Pod"},
		{"JSON first", "/api/v1/namespaces/default/pods/p", "application/json," + protobufType, 200, "application/json", "Pod"},
		{"list", "/api/v1/pods", kubeletAccept, 200, protobufType, "PodList"},
		{"lease list", "/apis/coordination.k8s.io/v1/leases", kubeletAccept, 200, protobufType, "LeaseList"},
		{"error", "/api/v1/namespaces/default/pods/missing", kubeletAccept, 404, protobufType, "Status"},
		{"unknown path", "/api/v1/namespaces/default/pods/p/nosuch", kubeletAccept, 404, "application/json", "Status"},
		{"table", "/api/v1/pods", "application/json;as=Table;v=v1;g=meta.k8s.io," + protobufType, 200, "application/json", "Table"},
		{"table in protobuf", "/api/v1/pods", protobufType + ";as=Table;v=v1;g=meta.k8s.io", 406, "application/json", "Status"},
		{"table in protobuf or JSON", "/api/v1/pods", protobufType + ";as=Table;v=v1;g=meta.k8s.io,application/json", 200, "application/json", "PodList"},
		{"events.k8s.io", "/apis/events.k8s.io/v1/events", kubeletAccept, 200, "application/json", "EventList"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := do(h, "GET", tt.path, "", "", "Accept", tt.accept)
			if w.Code != tt.code || w.Header().Get("Content-Type") != tt.contentType {
				t.Fatalf("GET %s with Accept %q = %d %q, want %d %q", tt.path, tt.accept, w.Code, w.Header().Get("Content-Type"), tt.code, tt.contentType)
			}
			var head metav1.TypeMeta
			if tt.contentType == protobufType {
				var u runtime.Unknown
				if !bytes.HasPrefix(w.Body.Bytes(), []byte("k8s\x00")) || u.Unmarshal(w.Body.Bytes()[4:]) != nil {
					t.Fatalf("body %q is not in the protobuf envelope", w.Body.String())
				}
				head = metav1.TypeMeta{Kind: u.Kind, APIVersion: u.APIVersion}
			} else if err := json.Unmarshal(w.Body.Bytes(), &head); err != nil {
				t.Fatalf("body %q: %v", w.Body.String(), err)
			}
			if head.Kind != tt.kind {
				t.Errorf("kind = %q, want %q", head.Kind, tt.kind)
			}
		})
	}
	w := do(h, "GET", "/api/v1/namespaces/default/pods/p", "", "", "Accept", "application/cbor")
	if st := decodeStatus(t, w); !strings.Contains(st.Message, "application/json, application/yaml, "+protobufType) {
		t.Errorf("406 message = %q, want protobuf among the accepted types", st.Message)
	}
}

// TestProtobufBinding: a binding's answer, a Status, is protobuf too.
func TestProtobufBinding(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, testOptions())
	pc, answers := protobufClient(t, f)
	f.createPod(t, newPod("default", "p", ""))
	err := pc.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Bind() = %v", err)
	}
	if got := answers.of("POST", "/api/v1/namespaces/default/pods/p/binding"); got != protobufType {
		t.Errorf("binding answered with %q", got)
	}
	err = pc.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "m"},
	}, metav1.CreateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("second Bind() = %v, want a conflict decoded from the protobuf Status", err)
	}
}

// FuzzProtobufAnswers sends arbitrary requests, as a client configured as the kubelet's would, to
// a server holding one pod and one node. Every answer in protobuf must decode (a watch's frame by
// frame), every error must be a Status whose code is the HTTP status, and a read answered in
// protobuf must carry what the same read answered in JSON carries.
func FuzzProtobufAnswers(f *testing.F) {
	f.Add(uint8(0), "/api/v1/namespaces/default/pods/p", "", uint8(0), "")
	f.Add(uint8(0), "/api/v1/pods", "limit=1", uint8(0), "")
	f.Add(uint8(0), "/api/v1/nodes", "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", uint8(0), "")
	f.Add(uint8(0), "/api/v1/pods", "watch=1&resourceVersion=99999", uint8(0), "")
	f.Add(uint8(1), "/api/v1/namespaces/default/pods", "", uint8(0), podJSON)
	f.Add(uint8(2), "/api/v1/namespaces/default/pods/p", "", uint8(2), "k8s\x00\x0a\x02v1")
	f.Add(uint8(3), "/api/v1/namespaces/default/pods/p/status", "", uint8(4), `{"status":{"phase":"Running"}}`)
	f.Add(uint8(4), "/api/v1/namespaces/default/pods/p", "gracePeriodSeconds=0", uint8(0), "")
	f.Add(uint8(4), "/api/v1/namespaces/default/events", "", uint8(0), "")
	f.Add(uint8(1), "/api/v1/namespaces/default/serviceaccounts/default/token", "", uint8(0), `{"spec":{"expirationSeconds":3600}}`)
	f.Add(uint8(1), "/api/v1/namespaces/default/pods/p/binding", "", uint8(0), `{"metadata":{"name":"p"},"target":{"kind":"Node","name":"m"}}`)
	f.Add(uint8(1), "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", uint8(0), `{"spec":{"nonResourceAttributes":{"path":"/"}}}`)
	f.Fuzz(func(t *testing.T, method uint8, path, query string, contentType uint8, body string) {
		opts := testOptions()
		opts.MaxBodyBytes = 1 << 16
		h := newServer(t, opts).Handler()
		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json",
			strings.Replace(podJSON, `"spec":{`, `"spec":{"nodeName":"n",`, 1)); w.Code != http.StatusCreated {
			t.Fatalf("seeding the pod = %d %s", w.Code, w.Body.String())
		}
		if w := do(h, "POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"n"}}`); w.Code != http.StatusCreated {
			t.Fatalf("seeding the node = %d %s", w.Code, w.Body.String())
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // watches end right after their initial events
		send := func(accept string) *httptest.ResponseRecorder {
			r, err := http.NewRequestWithContext(ctx, fuzzMethods[int(method)%len(fuzzMethods)], "/", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			r.URL.Path, r.URL.RawQuery = path, query
			if ct := fuzzContentTypes[int(contentType)%len(fuzzContentTypes)]; ct != "" {
				r.Header.Set("Content-Type", ct)
			}
			r.Header.Set("Accept", accept)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
		w := send(kubeletAccept)
		ct := w.Header().Get("Content-Type")
		applying := fuzzContentTypes[int(contentType)%len(fuzzContentTypes)] == "application/apply-patch+yaml"
		if w.Code == http.StatusInternalServerError && !applying {
			t.Fatalf("%s?%s = 500 %q", path, query, w.Body.String())
		}
		var obj runtime.Object
		switch ct {
		case protobufType + ";stream=watch":
			frames(t, w.Body.Bytes())
			return
		case protobufType:
			var err error
			if obj, _, err = scheme.Codecs.UniversalDeserializer().Decode(w.Body.Bytes(), nil, nil); err != nil {
				t.Fatalf("%s?%s = %d, protobuf that does not decode: %v", path, query, w.Code, err)
			}
		}
		if w.Code >= 400 {
			st, ok := obj.(*metav1.Status)
			if !ok {
				st = &metav1.Status{}
				if err := json.Unmarshal(w.Body.Bytes(), st); err != nil || st.Kind != "Status" {
					t.Fatalf("%s?%s = %d with body %q, want a Status", path, query, w.Code, w.Body.String())
				}
			}
			if int(st.Code) != w.Code {
				t.Fatalf("%s?%s = %d with a Status of code %d", path, query, w.Code, st.Code)
			}
			// An apply whose configuration does not fit the schema is kube-apiserver's 500 with
			// no reason, as in FuzzServer; a 500 for InternalError (a recovered panic) is a bug.
			if w.Code == http.StatusInternalServerError && st.Reason == metav1.StatusReasonInternalError {
				t.Fatalf("%s?%s = 500 %s: %s", path, query, st.Reason, st.Message)
			}
			return
		}
		if obj == nil || fuzzMethods[int(method)%len(fuzzMethods)] != "GET" {
			return
		}
		jw := send("application/json")
		jobj, _, err := scheme.Codecs.UniversalDeserializer().Decode(jw.Body.Bytes(), nil, nil)
		if err != nil {
			t.Fatalf("%s?%s in JSON = %d %q: %v", path, query, jw.Code, jw.Body.String(), err)
		}
		if diff := cmp.Diff(jobj, obj, sameObjects...); diff != "" {
			t.Errorf("%s?%s in protobuf differs from JSON (-json +protobuf):\n%s", path, query, diff)
		}
	})
}
