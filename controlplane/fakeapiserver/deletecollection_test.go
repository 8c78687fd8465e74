package fakeapiserver_test

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func TestDeleteCollectionPods(t *testing.T) {
	tests := []struct {
		name     string
		opts     metav1.ListOptions
		del      metav1.DeleteOptions
		removed  []string // deleted at once: unbound pods, or a zero grace
		deleting []string // marked for graceful deletion
	}{
		{name: "labelSelector", opts: metav1.ListOptions{LabelSelector: "app in (a,b)"},
			removed: []string{"a"}, deleting: []string{"b"}},
		{name: "fieldSelector", opts: metav1.ListOptions{FieldSelector: "spec.nodeName=node-1"},
			deleting: []string{"b", "c"}},
		{name: "gracePeriodZero", del: metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
			removed: []string{"a", "b", "c"}},
		{name: "dryRun", opts: metav1.ListOptions{LabelSelector: "app=a"}, del: metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fakeapiserver.Options{})
			ctx := context.Background()
			pods := f.client.CoreV1().Pods("default")
			f.createPod(t, newPod("default", "a", ""))
			f.createPod(t, newPod("default", "b", "node-1"))
			f.createPod(t, newPod("default", "c", "node-1"))
			if _, err := f.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			f.createPod(t, newPod("other", "d", "node-1")) // another namespace is never touched
			if err := pods.DeleteCollection(ctx, tt.del, tt.opts); err != nil {
				t.Fatalf("DeleteCollection = %v", err)
			}
			list, err := f.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var deleting, present []string
			for _, p := range list.Items {
				present = append(present, p.Name)
				if p.DeletionTimestamp != nil {
					deleting = append(deleting, p.Name)
				}
			}
			var removed []string
			for _, name := range []string{"a", "b", "c", "d"} {
				if !containsName(present, name) {
					removed = append(removed, name)
				}
			}
			sort.Strings(deleting)
			if !cmp.Equal(removed, tt.removed) || !cmp.Equal(deleting, tt.deleting) {
				t.Errorf("removed %v, deleting %v; want %v, %v", removed, deleting, tt.removed, tt.deleting)
			}
		})
	}
}

func containsName(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestDeleteCollectionResponse checks the answer (the selected pods as they were), the trace of
// the deletions, and that the all-namespaces collection refuses the verb as the real server does.
func TestDeleteCollectionResponse(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	f.createPod(t, newPod("default", "a", "node-1"))
	f.createPod(t, newPod("default", "b", "node-1"))
	var list corev1.PodList
	err := f.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("pods").
		Param("labelSelector", "app=b").Do(ctx).Into(&list)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "b" || list.Items[0].DeletionTimestamp != nil {
		t.Errorf("response = %+v, want pod b as it was before the deletion", list.Items)
	}
	var kinds []trace.Kind
	for _, ev := range f.trace.Events() {
		if ev.Pod == "default/b" {
			kinds = append(kinds, ev.Event)
		}
	}
	if want := []trace.Kind{trace.KindCreate, trace.KindDeleting}; !cmp.Equal(kinds, want) {
		t.Errorf("trace of pod b = %v, want %v", kinds, want)
	}
	err = f.client.CoreV1().RESTClient().Delete().Resource("pods").Do(ctx).Error()
	if err == nil {
		t.Errorf("DELETE /api/v1/pods succeeded, want 405")
	}
}

// TestDeleteCollectionOfNamespacesIsRefused: kube-apiserver serves no deletecollection for
// namespaces (405), so that every namespace goes through its own lifecycle.
func TestDeleteCollectionOfNamespacesIsRefused(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	req := f.client.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces")
	if err := req.Do(ctx).Error(); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("DELETE /api/v1/namespaces = %v, want 405 MethodNotSupported", err)
	}
	if _, err := f.client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace default after the refused deletecollection: %v", err)
	}
	resources, err := f.client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "namespaces" && slices.Contains(r.Verbs, "deletecollection") {
			t.Errorf("discovery lists deletecollection for namespaces: %v", r.Verbs)
		}
	}
}
