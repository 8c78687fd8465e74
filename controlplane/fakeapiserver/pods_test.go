package fakeapiserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

func TestPodLifecycle(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")

	created := f.createPod(t, newPod("", "web", "node-1"))
	if created.Namespace != "default" || created.UID == "" || created.ResourceVersion == "" || !created.CreationTimestamp.Time.Equal(start) {
		t.Errorf("Create() = ns %q uid %q rv %q created %v, want namespace default, a uid, a resourceVersion and creation at %v",
			created.Namespace, created.UID, created.ResourceVersion, created.CreationTimestamp, start)
	}
	if created.Status.Phase != corev1.PodPending || created.Spec.RestartPolicy != corev1.RestartPolicyAlways ||
		*created.Spec.TerminationGracePeriodSeconds != 30 || created.Generation != 1 {
		t.Errorf("Create() = phase %q restartPolicy %q grace %d generation %d, want defaults Pending, Always, 30, 1",
			created.Status.Phase, created.Spec.RestartPolicy, *created.Spec.TerminationGracePeriodSeconds, created.Generation)
	}

	got, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get(web) = %v", err)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("Get(web) differs from Create() (-want +got):\n%s", diff)
	}

	got.Labels["tier"] = "front"
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update(web) = %v", err)
	}
	if updated.ResourceVersion == got.ResourceVersion || updated.Labels["tier"] != "front" {
		t.Errorf("Update(web) = rv %s labels %v, want a new rv and tier=front", updated.ResourceVersion, updated.Labels)
	}

	patches := []struct {
		name string
		typ  types.PatchType
		body string
		want func(*corev1.Pod) string
	}{
		{"merge", types.MergePatchType, `{"metadata":{"annotations":{"a":"1"}}}`, func(p *corev1.Pod) string { return p.Annotations["a"] }},
		{"strategic", types.StrategicMergePatchType, `{"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}}`,
			func(p *corev1.Pod) string { return p.Spec.Containers[0].Image }},
		{"json", types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`, func(p *corev1.Pod) string { return p.Labels["json"] }},
	}
	want := []string{"1", "busybox:1.37", "yes"}
	for i, tc := range patches {
		p, err := pods.Patch(ctx, "web", tc.typ, []byte(tc.body), metav1.PatchOptions{})
		if err != nil {
			t.Errorf("Patch(%s) = %v", tc.name, err)
			continue
		}
		if got := tc.want(p); got != want[i] {
			t.Errorf("Patch(%s) = %q, want %q", tc.name, got, want[i])
		}
	}
	p, _ := pods.Get(ctx, "web", metav1.GetOptions{})
	if len(p.Spec.Containers) != 1 || p.Generation != 2 {
		t.Errorf("after the image patch: %d containers, generation %d, want 1 container and generation 2", len(p.Spec.Containers), p.Generation)
	}

	// The node name cannot change after the pod is bound.
	p.Spec.NodeName = "node-2"
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("Update(nodeName changed) = %v, want Invalid", err)
	}

	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("List() = %v items, rv %q, err %v, want 1 item and a resourceVersion", len(list.Items), list.ResourceVersion, err)
	}

	if err := pods.Delete(ctx, "web", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatalf("Delete(web, 0) = %v", err)
	}
	if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(deleted) = %v, want NotFound", err)
	}

	var events []string
	for _, e := range f.trace.Events() {
		if e.Component != trace.APIServer || e.Pod != "default/web" || e.UID != string(created.UID) {
			t.Errorf("trace event %+v, want component apiserver, pod default/web, uid %s", e, created.UID)
		}
		events = append(events, string(e.Event)+" "+e.Func)
	}
	wantEvents := []string{"create POST pods", "update PUT pods", "update PATCH pods", "update PATCH pods", "update PATCH pods", "deleting DELETE pods", "delete DELETE pods"}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func TestGenerateName(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	seen := map[string]bool{}
	for range 3 {
		pod := newPod("default", "", "")
		pod.GenerateName = "job-"
		got := f.createPod(t, pod)
		if len(got.Name) != len("job-")+5 || got.Name[:4] != "job-" || seen[got.Name] {
			t.Errorf("Create(generateName job-) = name %q, want job- and 5 new characters", got.Name)
		}
		seen[got.Name] = true
	}
}

func TestCreateRejects(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	f.createPod(t, newPod("default", "dup", ""))
	invalid := newPod("default", "Bad_Name", "")
	invalid.Spec.Containers = append(invalid.Spec.Containers, corev1.Container{Name: "c"})
	tests := []struct {
		name      string
		namespace string
		pod       *corev1.Pod
		check     func(error) bool
	}{
		{"duplicate", "default", newPod("default", "dup", ""), apierrors.IsAlreadyExists},
		{"namespaceMismatch", "other", newPod("default", "x", ""), apierrors.IsBadRequest},
		{"invalid", "default", invalid, apierrors.IsInvalid},
		{"noContainers", "default", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}, apierrors.IsInvalid},
		{"noName", "default", &corev1.Pod{Spec: newPod("", "", "").Spec}, apierrors.IsInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.client.CoreV1().Pods(tc.namespace).Create(ctx, tc.pod, metav1.CreateOptions{})
			if !tc.check(err) {
				t.Errorf("Create() = %v, want %s", err, tc.name)
			}
		})
	}
	_, err := f.client.CoreV1().Pods("default").Create(ctx, invalid, metav1.CreateOptions{})
	var causes []string
	if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
		for _, c := range st.Status().Details.Causes {
			causes = append(causes, c.Field+" "+string(c.Type))
		}
	}
	wantCauses := []string{"metadata.name FieldValueInvalid", "spec.containers[1].name FieldValueDuplicate", "spec.containers[1].image FieldValueRequired"}
	if diff := cmp.Diff(wantCauses, causes); diff != "" {
		t.Errorf("Create(invalid) causes (-want +got):\n%s", diff)
	}
}

func TestConflictOnStaleUpdate(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	stale := f.createPod(t, newPod("default", "p", ""))
	fresh := stale.DeepCopy()
	fresh.Labels["v"] = "2"
	if _, err := pods.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update(fresh) = %v", err)
	}
	stale.Labels["v"] = "stale"
	_, err := pods.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("Update(stale) = %v, want Conflict", err)
	}
	// Without a resourceVersion the update is unconditional, as pods allow.
	stale.ResourceVersion = ""
	if _, err := pods.Update(ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Errorf("Update(no resourceVersion) = %v, want success", err)
	}
	if _, err := pods.Update(ctx, newPod("default", "missing", ""), metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Update(missing) = %v, want NotFound", err)
	}
}

func TestUnchangedUpdateWritesNothing(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	pod := f.createPod(t, newPod("default", "p", ""))
	rv := f.srv.ResourceVersion()
	got, err := f.client.CoreV1().Pods("default").Update(context.Background(), pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update(unchanged) = %v", err)
	}
	if got.ResourceVersion != pod.ResourceVersion || f.srv.ResourceVersion() != rv {
		t.Errorf("Update(unchanged) = rv %s, server rv %d, want %s and %d", got.ResourceVersion, f.srv.ResourceVersion(), pod.ResourceVersion, rv)
	}
}

func TestGracefulDeletion(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	bound := f.createPod(t, newPod("default", "bound", "node-1"))
	f.createPod(t, newPod("default", "unbound", ""))
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: bound.ResourceVersion})
	if err != nil {
		t.Fatalf("Watch() = %v", err)
	}
	defer w.Stop()
	next(t, w) // the ADDED of "unbound"

	f.clock.Step(5 * time.Second)
	if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete(bound) = %v", err)
	}
	ev := next(t, w)
	terminating := ev.Object.(*corev1.Pod)
	wantDeadline := start.Add(35 * time.Second)
	if ev.Type != watch.Modified || terminating.DeletionTimestamp == nil || !terminating.DeletionTimestamp.Time.Equal(wantDeadline) ||
		*terminating.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("after Delete(bound): %s deletionTimestamp %v grace %v, want MODIFIED, %v, 30", ev.Type,
			terminating.DeletionTimestamp, terminating.DeletionGracePeriodSeconds, wantDeadline)
	}
	// A longer grace period does not extend it; a shorter one shortens it.
	if err := pods.Delete(ctx, "bound", *metav1.NewDeleteOptions(60)); err != nil {
		t.Fatalf("Delete(bound, 60) = %v", err)
	}
	if err := pods.Delete(ctx, "bound", *metav1.NewDeleteOptions(10)); err != nil {
		t.Fatalf("Delete(bound, 10) = %v", err)
	}
	ev = next(t, w)
	// The deadline is the first delete's time plus the new grace, and the generation stays.
	if p := ev.Object.(*corev1.Pod); *p.DeletionGracePeriodSeconds != 10 || !p.DeletionTimestamp.Time.Equal(start.Add(15*time.Second)) ||
		p.Generation != terminating.Generation || terminating.Generation != bound.Generation+1 {
		t.Errorf("after Delete(bound, 10): grace %d deletionTimestamp %v generation %d (first delete %d, created %d), want 10, %v and one bump",
			*p.DeletionGracePeriodSeconds, p.DeletionTimestamp, p.Generation, terminating.Generation, bound.Generation, start.Add(15*time.Second))
	}
	// Shortening to a deadline already past gives now, with grace 1s.
	f.clock.Step(20 * time.Second)
	if err := pods.Delete(ctx, "bound", *metav1.NewDeleteOptions(5)); err != nil {
		t.Fatalf("Delete(bound, 5) = %v", err)
	}
	ev = next(t, w)
	if p := ev.Object.(*corev1.Pod); *p.DeletionGracePeriodSeconds != 1 || !p.DeletionTimestamp.Time.Equal(start.Add(25*time.Second)) {
		t.Errorf("after Delete(bound, 5) past the deadline: grace %d deletionTimestamp %v, want 1 and %v", *p.DeletionGracePeriodSeconds, p.DeletionTimestamp, start.Add(25*time.Second))
	}
	// The kubelet confirms with grace 0 and a UID precondition; a wrong UID is a conflict.
	wrong := metav1.NewDeleteOptions(0)
	wrong.Preconditions = metav1.NewUIDPreconditions("not-the-uid")
	if err := pods.Delete(ctx, "bound", *wrong); !apierrors.IsConflict(err) {
		t.Errorf("Delete(wrong uid) = %v, want Conflict", err)
	}
	confirm := metav1.NewDeleteOptions(0)
	confirm.Preconditions = metav1.NewUIDPreconditions(string(bound.UID))
	if err := pods.Delete(ctx, "bound", *confirm); err != nil {
		t.Fatalf("Delete(bound, 0) = %v", err)
	}
	// A grace-0 delete writes the pod with grace 0 first, as the generic registry does.
	ev = next(t, w)
	if p := ev.Object.(*corev1.Pod); ev.Type != watch.Modified || *p.DeletionGracePeriodSeconds != 0 || !p.DeletionTimestamp.Time.Equal(start.Add(25*time.Second)) {
		t.Errorf("after the confirmation got %s grace %d deletionTimestamp %v, want MODIFIED, 0, now", ev.Type, *p.DeletionGracePeriodSeconds, p.DeletionTimestamp)
	}
	if got := summarize(t, next(t, w)); got != (podEvent{watch.Deleted, "default/bound"}) {
		t.Errorf("after the confirmation got %v, want DELETED default/bound", got)
	}
	if err := pods.Delete(ctx, "unbound", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete(unbound) = %v", err)
	}
	ev = next(t, w)
	if p := ev.Object.(*corev1.Pod); ev.Type != watch.Modified || p.DeletionTimestamp == nil || *p.DeletionGracePeriodSeconds != 0 {
		t.Errorf("after Delete(unbound) got %s with deletionTimestamp %v, want MODIFIED with the timestamp and grace 0", ev.Type, p.DeletionTimestamp)
	}
	if got := summarize(t, next(t, w)); got != (podEvent{watch.Deleted, "default/unbound"}) {
		t.Errorf("after Delete(unbound) got %v, want DELETED default/unbound", got)
	}

	var got []string
	for _, e := range f.trace.Events() {
		got = append(got, string(e.Event)+" "+e.Pod)
	}
	want := []string{"create default/bound", "create default/unbound", "deleting default/bound", "deleting default/bound",
		"deleting default/bound", "deleting default/bound", "delete default/bound", "deleting default/unbound", "delete default/unbound"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func TestStatusSubresource(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	pod := f.createPod(t, newPod("default", "p", "node-1"))

	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = "10.0.0.1"
	// The pod status strategy takes the spec from the stored pod and the labels from the request.
	pod.Labels["written"] = "yes"
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	got, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateStatus() = %v", err)
	}
	if got.Status.Phase != corev1.PodRunning || got.Labels["written"] != "yes" || got.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("UpdateStatus() = phase %s labels %v activeDeadlineSeconds %v, want Running, the label written and the spec unchanged",
			got.Status.Phase, got.Labels, got.Spec.ActiveDeadlineSeconds)
	}

	got.Status.Phase = corev1.PodFailed
	got.Labels["kept"] = "yes"
	upd, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update() = %v", err)
	}
	if upd.Status.Phase != corev1.PodRunning || upd.Labels["kept"] != "yes" {
		t.Errorf("Update() = phase %s labels %v, want status unchanged (Running) and the label kept", upd.Status.Phase, upd.Labels)
	}

	patch := `{"metadata":{"uid":"` + string(pod.UID) + `"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`
	p, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("Patch(status) = %v", err)
	}
	if len(p.Status.Conditions) != 1 || p.Status.PodIP != "10.0.0.1" {
		t.Errorf("Patch(status) = conditions %v podIP %q, want one condition and the IP kept", p.Status.Conditions, p.Status.PodIP)
	}
	// The kubelet's status patch carries the UID it read; a patch carries no UID precondition
	// (the patch handler's DefaultUpdatedObjectInfo holds no object), so another UID is refused
	// by the update's validation: the field is immutable.
	stale := `{"metadata":{"uid":"other"},"status":{"phase":"Succeeded"}}`
	if _, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(stale), metav1.PatchOptions{}, "status"); !apierrors.IsInvalid(err) ||
		err.Error() != `Pod "p" is invalid: metadata.uid: Invalid value: "other": field is immutable` {
		t.Errorf("Patch(status, wrong uid) = %v, want Invalid: metadata.uid is immutable", err)
	}
	st, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil || st.Status.Phase != corev1.PodRunning {
		t.Errorf("Get() = %v, %v, want phase Running", st.Status.Phase, err)
	}

	var got2 []string
	for _, e := range f.trace.Events() {
		got2 = append(got2, string(e.Event)+" "+e.Func)
	}
	want := []string{"create POST pods", "status PUT pods/status", "update PUT pods", "status PATCH pods/status"}
	if diff := cmp.Diff(want, got2); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}
