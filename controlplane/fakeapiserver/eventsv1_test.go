package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestEventsV1 writes and reads Events through both API versions with client-go: one storage,
// converted both ways, with events.k8s.io/v1's field selectors, its stricter create validation,
// patches and watches.
func TestEventsV1(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	v1events := f.client.EventsV1().Events("default")
	now := metav1.NewMicroTime(start)
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.1"},
		EventTime:  now, ReportingController: "example.com/ctl", ReportingInstance: "ctl-1",
		Action: "Pulling", Reason: "Pulling", Note: "pulling busybox", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
	}
	w, err := v1events.Watch(ctx, metav1.ListOptions{ResourceVersion: "1", FieldSelector: "regarding.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := v1events.Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create through events.k8s.io/v1 = %v", err)
	}
	core, err := f.client.CoreV1().Events("default").Get(ctx, "web.1", metav1.GetOptions{})
	if err != nil || core.Message != "pulling busybox" || core.InvolvedObject.Name != "web" || core.ReportingController != "example.com/ctl" {
		t.Errorf("the core/v1 view of it = %+v, %v", core, err)
	}

	legacy := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.2"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
		Reason:         "Started", Message: "started c", Type: corev1.EventTypeNormal, Count: 3,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
	}
	if _, err := f.client.CoreV1().Events("default").Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v1events.Get(ctx, "web.2", metav1.GetOptions{})
	if err != nil || got.Note != "started c" || got.DeprecatedCount != 3 || got.DeprecatedSource.Component != "kubelet" || got.Regarding.Name != "web" {
		t.Errorf("the events.k8s.io/v1 view of a core event = %+v, %v", got, err)
	}
	list, err := v1events.List(ctx, metav1.ListOptions{FieldSelector: "reportingController=example.com/ctl"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "web.1" {
		t.Errorf("list by reportingController = %v, %v", list, err)
	}
	if _, err := v1events.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web"}); !apierrors.IsBadRequest(err) ||
		!strings.Contains(err.Error(), "field label not supported: involvedObject.name") {
		t.Errorf("list by a core/v1 field label = %v, want BadRequest", err)
	}

	patch := `{"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:05.000000Z"}}`
	patched, err := v1events.Patch(ctx, "web.1", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil || patched.Series == nil || patched.Series.Count != 2 {
		t.Errorf("patch of the series = %+v, %v", patched, err)
	}

	// A patch that changes the UID is refused as the core/v1 patch is, once.
	uidPatch := `{"metadata":{"uid":"x"}}`
	if _, err := v1events.Patch(ctx, "web.1", types.MergePatchType, []byte(uidPatch), metav1.PatchOptions{}); !apierrors.IsInvalid(err) ||
		err.Error() != `Event "web.1" is invalid: metadata.uid: Invalid value: "x": field is immutable` {
		t.Errorf("patch of the UID = %v, want Invalid: metadata.uid is immutable", err)
	}

	bad := ev.DeepCopy()
	bad.Name, bad.EventTime, bad.DeprecatedCount = "web.3", metav1.MicroTime{}, 1
	_, err = v1events.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "eventTime: Required value") || !strings.Contains(err.Error(), "count: Invalid value") {
		t.Errorf("create without eventTime and with a count = %v, want Invalid", err)
	}

	var seen []string
	timeout := time.After(10 * time.Second)
	for len(seen) < 3 {
		select {
		case e := <-w.ResultChan():
			got, ok := e.Object.(*eventsv1.Event)
			if !ok {
				t.Fatalf("watch event %s carries %T", e.Type, e.Object)
			}
			seen = append(seen, string(e.Type)+" "+got.Name)
		case <-timeout:
			t.Fatalf("watch saw %v, want 3 events", seen)
		}
	}
	if want := []string{string(watch.Added) + " web.1", string(watch.Added) + " web.2", string(watch.Modified) + " web.1"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("watch by regarding.name = %v, want %v", seen, want)
	}

	if err := v1events.Delete(ctx, "web.2", metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete through events.k8s.io/v1 = %v", err)
	}
	if _, err := f.client.CoreV1().Events("default").Get(ctx, "web.2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of the deleted event through core/v1 = %v, want NotFound", err)
	}
}

// TestKubectlEvents runs kubectl events, which lists core/v1 Events by their involved object, and
// kubectl get of events.k8s.io Events, which reads the same Events converted.
func TestKubectlEvents(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	ctx := context.Background()
	f.createPod(t, newPod("default", "web", "node-1"))
	legacy := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web"},
		Reason:         "Pulled", Message: "Successfully pulled image", Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.NewTime(start), LastTimestamp: metav1.NewTime(start), Count: 1,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
	}
	if _, err := f.client.CoreV1().Events("default").Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := k.run(t, "", "events", "--for", "pod/web")
	if !strings.Contains(out, "Pulled") || !strings.Contains(out, "Pod/web") || !strings.Contains(out, "Successfully pulled image") {
		t.Errorf("kubectl events --for pod/web =\n%s", out)
	}
	out = k.run(t, "", "get", "events.events.k8s.io", "-o", "name")
	if strings.TrimSpace(out) != "event.events.k8s.io/web.1" {
		t.Errorf("kubectl get events.events.k8s.io -o name = %q", out)
	}
}
