package fakeapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func kubeletEvent(i int) *corev1.Event {
	pod := fmt.Sprintf("web-%d", i)
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s.%d", pod, i)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: pod, APIVersion: "v1", FieldPath: "spec.containers{app}"},
		// Formatted for each event, as the kubelet's recorder does: equal, not shared.
		Reason: "Started", Message: fmt.Sprintf("Started container %s", "app"), Count: 1, Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}, ReportingController: "kubelet", ReportingInstance: "node-1"}
}

// storedEvents returns the stored entries of the events named.
func storedEvents(t *testing.T, s *Server, names ...string) []*entry {
	t.Helper()
	var out []*entry
	_ = s.store.locked(func() error {
		for _, n := range names {
			out = append(out, s.store.buckets["events"].objects["default/"+n])
		}
		return nil
	})
	for i, e := range out {
		if e == nil {
			t.Fatalf("event %s not stored", names[i])
		}
	}
	return out
}

func sharedEventData(t *testing.T, what string, a, b *corev1.Event) {
	t.Helper()
	if unsafe.StringData(a.Message) != unsafe.StringData(b.Message) {
		t.Errorf("%s: message %q is a copy of its own in each event, want one shared", what, a.Message)
	}
	if unsafe.StringData(a.Namespace) != unsafe.StringData(b.Namespace) || unsafe.StringData(a.Source.Host) != unsafe.StringData(b.Source.Host) {
		t.Errorf("%s: namespace or source host a copy of its own in each event, want one shared", what)
	}
	if len(a.ManagedFields) != 1 || len(b.ManagedFields) != 1 {
		t.Fatalf("%s: managed fields %v and %v, want the kubelet's entry in each", what, a.ManagedFields, b.ManagedFields)
	}
	if &a.ManagedFields[0].FieldsV1.Raw[0] != &b.ManagedFields[0].FieldsV1.Raw[0] {
		t.Errorf("%s: the managed fields' encoding is a copy of its own in each event, want one shared", what)
	}
}

// TestStoreInternsEvents: a kubelet's events, written in process, are stored sharing their
// repeated strings and their managed fields' encoding, and so are events loaded from the data
// directory; what the server answers for them (JSON and protobuf) is the value and the bytes
// the write committed.
func TestStoreInternsEvents(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	d := s.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	committed := map[string]string{}
	for i := range 3 {
		ev := kubeletEvent(i)
		e, err := d.create(ctx, d.target(eventsTarget, "default", "", ""), ev)
		if err != nil {
			t.Fatal(err)
		}
		committed[ev.Name] = string(e.raw)
	}
	names := []string{"web-0.0", "web-1.1", "web-2.2"}
	es := storedEvents(t, s, names...)
	// The first event's entries go into the table as they are; the next ones share them.
	sharedEventData(t, "written", es[1].obj.(*corev1.Event), es[2].obj.(*corev1.Event))
	h := s.Handler()
	for _, name := range names {
		path := "/api/v1/namespaces/default/events/" + name
		w := wireDo(h, ctx, "GET", path, "", "", "")
		if w.Code != 200 || w.Body.String() != committed[name] {
			t.Errorf("GET %s = %d %s, want the bytes its write committed %s", name, w.Code, w.Body, committed[name])
		}
		pb := wireDo(h, ctx, "GET", path, "", "", wirePB)
		if pb.Code != 200 {
			t.Fatalf("GET %s in protobuf = %d", name, pb.Code)
		}
		got, _, err := clientscheme.Codecs.UniversalDeserializer().Decode(pb.Body.Bytes(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want corev1.Event
		if err := json.Unmarshal([]byte(committed[name]), &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(runtime.Object(&want), got); diff != "" {
			t.Errorf("GET %s in protobuf mismatch (-committed +got):\n%s", name, diff)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es = storedEvents(t, s, names...)
	sharedEventData(t, "loaded", es[1].obj.(*corev1.Event), es[2].obj.(*corev1.Event))
	for i, name := range names {
		if got := string(es[i].encoded()); got != committed[name] {
			t.Errorf("loaded %s encodes as %s, want the bytes its write committed %s", name, got, committed[name])
		}
	}
}
