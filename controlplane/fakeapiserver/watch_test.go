package fakeapiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func TestWatchResume(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	f.createNamespace(t, "other")
	a := f.createPod(t, newPod("default", "a", ""))
	f.createPod(t, newPod("other", "b", ""))
	a.Labels["x"] = "y"
	if _, err := f.client.CoreV1().Pods("default").Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.CoreV1().Pods("other").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		namespace string
		rv        string
		want      []podEvent
	}{
		{"fromCreate", "", a.ResourceVersion, []podEvent{
			{watch.Added, "other/b"}, {watch.Modified, "default/a"},
			// An unbound pod is deleted with grace 0: written with its deletionTimestamp, then removed.
			{watch.Modified, "other/b"}, {watch.Deleted, "other/b"}}},
		{"fromCreateInNamespace", "default", a.ResourceVersion, []podEvent{{watch.Modified, "default/a"}}},
		{"fromZero", "", "0", []podEvent{{watch.Added, "default/a"}}},
		{"fromNow", "", fmt.Sprint(f.srv.ResourceVersion()), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := f.client.CoreV1().Pods(tc.namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: tc.rv})
			if err != nil {
				t.Fatalf("Watch(rv %s) = %v", tc.rv, err)
			}
			defer w.Stop()
			// A marker pod written after the watch started ends the expected sequence.
			marker := newPod(tc.namespace, "marker-"+strings.ToLower(tc.name), "")
			if tc.namespace == "" {
				marker.Namespace = "default"
			}
			f.createPod(t, marker)
			var got []podEvent
			for {
				ev := summarize(t, next(t, w))
				if ev.Name == podkey.Of(marker) {
					break
				}
				if !strings.Contains(ev.Name, "/marker-") { // earlier cases' markers
					got = append(got, ev)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Watch(rv %s) events (-want +got):\n%s", tc.rv, diff)
			}
		})
	}
}

func TestWatchExpired(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{HistorySize: 2})
	first := f.createPod(t, newPod("default", "p0", ""))
	for i := 1; i < 5; i++ {
		f.createPod(t, newPod("default", fmt.Sprintf("p%d", i), ""))
	}
	w, err := f.client.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	if err != nil {
		t.Fatalf("Watch(compacted rv) = %v", err)
	}
	defer w.Stop()
	ev := next(t, w)
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
		t.Fatalf("Watch(compacted rv) first event = %s %v, want ERROR with 410 Expired", ev.Type, ev.Object)
	}
	if _, open := <-w.ResultChan(); open {
		t.Errorf("Watch(compacted rv) went on after the ERROR, want it closed")
	}
	// A resource version the server has not reached is refused too.
	w2, err := f.client.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "1000"})
	if err != nil {
		t.Fatalf("Watch(future rv) = %v", err)
	}
	defer w2.Stop()
	ev = next(t, w2)
	if err := apierrors.FromObject(ev.Object); ev.Type != watch.Error || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Errorf("Watch(future rv) = %s %v, want ERROR ResourceVersionTooLarge", ev.Type, err)
	}
	if _, err := f.client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{ResourceVersion: "1000"}); !apierrors.IsTimeout(err) {
		t.Errorf("List(future rv) = %v, want Timeout (too large resource version)", err)
	}
}

func TestSelectors(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	for _, p := range []*corev1.Pod{newPod("default", "a", "node-1"), newPod("default", "b", "node-2"), newPod("kube-system", "c", "node-1")} {
		f.createPod(t, p)
	}
	lists := []struct {
		name  string
		opts  metav1.ListOptions
		names []string
	}{
		{"nodeName", metav1.ListOptions{FieldSelector: "spec.nodeName=node-1"}, []string{"default/a", "kube-system/c"}},
		{"metadataName", metav1.ListOptions{FieldSelector: "metadata.name=b"}, []string{"default/b"}},
		{"namespace", metav1.ListOptions{FieldSelector: "metadata.namespace!=default"}, []string{"kube-system/c"}},
		{"phase", metav1.ListOptions{FieldSelector: "status.phase=Pending,spec.nodeName=node-2"}, []string{"default/b"}},
		{"label", metav1.ListOptions{LabelSelector: "app in (a,c)"}, []string{"default/a", "kube-system/c"}},
		{"labelNotFound", metav1.ListOptions{LabelSelector: "app=zzz"}, nil},
	}
	for _, tc := range lists {
		t.Run(tc.name, func(t *testing.T) {
			list, err := f.client.CoreV1().Pods("").List(ctx, tc.opts)
			if err != nil {
				t.Fatalf("List(%+v) = %v", tc.opts, err)
			}
			var names []string
			for _, p := range list.Items {
				names = append(names, podkey.Of(&p))
			}
			if diff := cmp.Diff(tc.names, names); diff != "" {
				t.Errorf("List(%+v) (-want +got):\n%s", tc.opts, diff)
			}
		})
	}

	// A watch on status.phase sees a pod enter the selection as ADDED and leave it as DELETED.
	w, err := f.client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{
		FieldSelector: "status.phase=Running", ResourceVersion: fmt.Sprint(f.srv.ResourceVersion()),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pods := f.client.CoreV1().Pods("default")
	a, _ := pods.Get(ctx, "a", metav1.GetOptions{})
	a.Status.Phase = corev1.PodRunning
	if a, err = pods.UpdateStatus(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Status.Phase = corev1.PodSucceeded
	if _, err = pods.UpdateStatus(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := []podEvent{summarize(t, next(t, w)), summarize(t, next(t, w))}
	want := []podEvent{{watch.Added, "default/a"}, {watch.Deleted, "default/a"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Watch(status.phase=Running) (-want +got):\n%s", diff)
	}
}
