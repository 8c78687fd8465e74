package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// managerEntry is a managedFields entry reduced to what the tests compare.
type managerEntry struct {
	Manager, Operation, Subresource string
	Time                            time.Time
}

func managers(obj metav1.Object) []managerEntry {
	var out []managerEntry
	for _, e := range obj.GetManagedFields() {
		out = append(out, managerEntry{e.Manager, string(e.Operation), e.Subresource, e.Time.UTC()})
	}
	return out
}

// TestManagedFieldsOnWrites: creates, updates and patches record their fields under the
// fieldManager parameter or the user agent's first word, with operation Update, on the status
// subresource apart, stamped with the server's clock.
func TestManagedFieldsOnWrites(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	pod := f.createPod(t, newPod("default", "web", "node-1"))
	f.clock.Step(5 * time.Second)
	pod.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(5 * time.Second)
	pod, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{FieldManager: "labeler"})
	if err != nil {
		t.Fatal(err)
	}
	want := []managerEntry{
		{"fakeapiserver.test", "Update", "", start},
		{"kubelet", "Update", "status", start.Add(5 * time.Second)},
		{"labeler", "Update", "", start.Add(10 * time.Second)},
	}
	if diff := cmp.Diff(want, managers(pod)); diff != "" {
		t.Errorf("managedFields (-want +got):\n%s", diff)
	}
	if got := string(pod.ManagedFields[1].FieldsV1.Raw); !strings.Contains(got, `"f:phase"`) || strings.Contains(got, `"f:spec"`) {
		t.Errorf("the status update's fields = %s, want the status only", got)
	}
	if got := string(pod.ManagedFields[0].FieldsV1.Raw); strings.Contains(got, `"f:status"`) || !strings.Contains(got, `"k:{\"name\":\"c\"}"`) {
		t.Errorf("the create's fields = %s, want the spec with containers by name and no status", got)
	}
	// A write that changes nothing leaves the object, its times included, as it was.
	f.clock.Step(5 * time.Second)
	same, err := pods.Update(ctx, pod, metav1.UpdateOptions{FieldManager: "labeler"})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != pod.ResourceVersion || !cmp.Equal(managers(same), want) {
		t.Errorf("a no-op update wrote %s (was %s), managers %v", same.ResourceVersion, pod.ResourceVersion, managers(same))
	}
}

// TestServerSideApplyClientGo drives server-side apply with client-go's apply configurations:
// create, an apply that gives up a field, a conflict with another manager, force, and the
// status subresource of a node.
func TestServerSideApplyClientGo(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	cfg := corev1ac.Pod("web", "default").
		WithLabels(map[string]string{"app": "web", "tier": "front"}).
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("busybox:1.36")))
	pod, err := pods.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "deployer"})
	if err != nil {
		t.Fatalf("Apply (create) = %v", err)
	}
	if diff := cmp.Diff([]managerEntry{{"deployer", "Apply", "", start}}, managers(pod)); diff != "" {
		t.Errorf("managedFields after create (-want +got):\n%s", diff)
	}
	if pod.Status.Phase != corev1.PodPending || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || pod.UID == "" {
		t.Errorf("created pod: phase %q restartPolicy %q uid %q, want the create strategy's", pod.Status.Phase, pod.Spec.RestartPolicy, pod.UID)
	}
	if evs := f.trace.Events(); len(evs) != 1 || evs[0].Event != trace.KindCreate || evs[0].Func != "PATCH pods" {
		t.Errorf("trace of the apply = %+v, want one create by PATCH pods", evs)
	}

	// Applying again without a label removes it: the manager gave the field up.
	f.clock.Step(time.Second)
	cfg.Labels = map[string]string{"app": "web"}
	if pod, err = pods.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "deployer"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := pod.Labels["tier"]; ok {
		t.Errorf("labels %v: the label the manager stopped applying is still there", pod.Labels)
	}

	// Another manager that sets the image conflicts, and takes it over with force.
	other := corev1ac.Pod("web", "default").
		WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("c").WithImage("busybox:1.37")))
	_, err = pods.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "upgrader"})
	const conflict = `Apply failed with 1 conflict: conflict with "deployer": .spec.containers[name="c"].image`
	if !apierrors.IsConflict(err) || err.Error() != conflict {
		t.Fatalf("conflicting Apply = %v, want 409 %q", err, conflict)
	}
	var status apierrors.APIStatus
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
	}
	if causes := status.Status().Details.Causes; len(causes) != 1 || causes[0].Type != metav1.CauseTypeFieldManagerConflict || causes[0].Field != `.spec.containers[name="c"].image` {
		t.Errorf("conflict causes = %+v", causes)
	}
	if pod, err = pods.Apply(ctx, other, metav1.ApplyOptions{FieldManager: "upgrader", Force: true}); err != nil {
		t.Fatalf("forced Apply = %v", err)
	}
	if pod.Spec.Containers[0].Image != "busybox:1.37" {
		t.Errorf("image = %s after the forced apply", pod.Spec.Containers[0].Image)
	}
	if got := managers(pod); len(got) != 2 || got[1].Manager != "upgrader" {
		t.Errorf("managers after force = %v, want deployer and upgrader", got)
	}

	// Pods/status and nodes/status take apply too.
	if _, err := pods.ApplyStatus(ctx, corev1ac.Pod("web", "default").WithStatus(corev1ac.PodStatus().WithPhase(corev1.PodRunning)),
		metav1.ApplyOptions{FieldManager: "kubelet", Force: true}); err != nil {
		t.Fatalf("ApplyStatus(pod) = %v", err)
	}
	nodes := f.client.CoreV1().Nodes()
	if _, err := nodes.Apply(ctx, corev1ac.Node("node-1").WithLabels(map[string]string{"zone": "a"}), metav1.ApplyOptions{FieldManager: "admin"}); err != nil {
		t.Fatalf("Apply(node) = %v", err)
	}
	node, err := nodes.ApplyStatus(ctx, corev1ac.Node("node-1").WithStatus(corev1ac.NodeStatus().
		WithConditions(corev1ac.NodeCondition().WithType(corev1.NodeReady).WithStatus(corev1.ConditionTrue))),
		metav1.ApplyOptions{FieldManager: "kubelet"})
	if err != nil {
		t.Fatalf("ApplyStatus(node) = %v", err)
	}
	want := []managerEntry{{"admin", "Apply", "", start.Add(time.Second)}, {"kubelet", "Apply", "status", start.Add(time.Second)}}
	if diff := cmp.Diff(want, managers(node)); diff != "" || len(node.Status.Conditions) != 1 {
		t.Errorf("node managedFields (-want +got):\n%s\nconditions %v", diff, node.Status.Conditions)
	}
}

// TestServerSideApplyErrors: the options and bodies kube-apiserver refuses, with its codes.
func TestServerSideApplyErrors(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	tests := []struct {
		name, body, query string
		want              string
		code              int32
	}{
		{"noFieldManager", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, "",
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`, 422},
		{"badYAML", "a: [", "fieldManager=m", "error decoding YAML", 400},
		{"otherName", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, "fieldManager=m",
			"the name of the object (q) does not match the name on the URL (p)", 400},
		{"managedFields", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","managedFields":[{"manager":"x"}]}}`, "fieldManager=m",
			"metadata.managedFields must be nil", 400},
		{"unknownField", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"bogus":1}}`, "fieldManager=m",
			`.spec.bogus: field not declared in schema`, 500},
		{"duplicateStrict", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: p\nspec:\n  containers: [{name: c, image: i}]\n", "fieldManager=m&fieldValidation=Strict",
			`error strict decoding YAML`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := f.client.CoreV1().RESTClient().Patch(types.ApplyPatchType).
				Namespace("default").Resource("pods").Name("p").Body([]byte(tt.body))
			for _, kv := range strings.Split(tt.query, "&") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					req = req.Param(k, v)
				}
			}
			err := req.Do(ctx).Error()
			var code int32
			if s, ok := err.(apierrors.APIStatus); ok {
				code = s.Status().Code
			}
			if err == nil || code != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("apply = %d %v, want %d containing %q", code, err, tt.code, tt.want)
			}
		})
	}
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused apply created the pod: %v", err)
	}
}

// TestKubectlServerSideApply: kubectl apply --server-side creates and updates, reports a conflict
// with another manager as kubectl does, and --force-conflicts takes the field over.
func TestKubectlServerSideApply(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	ctx := context.Background()
	manifest := `apiVersion: v1
kind: Pod
metadata:
  name: ssa
  labels: {app: ssa}
spec:
  containers:
  - name: c
    image: busybox:1.36
`
	if out := k.run(t, manifest, "apply", "--server-side", "-f", "-"); !strings.Contains(out, "pod/ssa serverside-applied") {
		t.Errorf("kubectl apply --server-side = %q, want pod/ssa serverside-applied", out)
	}
	changed := strings.Replace(manifest, "1.36", "1.37", 1)
	cmd := k.command(ctx, "apply", "--server-side", "--field-manager", "other", "-f", "-")
	cmd.Stdin = strings.NewReader(changed)
	out, err := cmd.CombinedOutput()
	want := `error: Apply failed with 1 conflict: conflict with "kubectl": .spec.containers[name="c"].image`
	if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "--force-conflicts") {
		t.Errorf("conflicting kubectl apply = %v\n%s\nwant %q and the advice", err, out, want)
	}
	if out := k.run(t, changed, "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-"); !strings.Contains(out, "pod/ssa serverside-applied") {
		t.Errorf("kubectl apply --force-conflicts = %q", out)
	}
	pod, err := f.client.CoreV1().Pods("default").Get(ctx, "ssa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Image != "busybox:1.37" {
		t.Errorf("image = %s, want busybox:1.37", pod.Spec.Containers[0].Image)
	}
	if got := managers(pod); len(got) != 2 || got[0].Manager != "kubectl" || got[1].Manager != "other" || got[1].Operation != "Apply" {
		t.Errorf("managers = %v, want kubectl and other applying", got)
	}
	// kubectl diff --server-side dry-runs the apply: it shows the change and writes nothing.
	diff := k.command(ctx, "diff", "--server-side", "--field-manager", "other", "-f", "-")
	diff.Stdin = strings.NewReader(strings.Replace(changed, "1.37", "1.38", 1))
	diffOut, err := diff.CombinedOutput()
	if !strings.Contains(string(diffOut), "+  - image: busybox:1.38") || !strings.Contains(string(diffOut), "-  - image: busybox:1.37") {
		t.Errorf("kubectl diff --server-side = %v\n%s\nwant the image change", err, diffOut)
	}
	if after, err := f.client.CoreV1().Pods("default").Get(ctx, "ssa", metav1.GetOptions{}); err != nil || after.ResourceVersion != pod.ResourceVersion {
		t.Errorf("kubectl diff wrote the pod: %v", err)
	}
	out2 := k.run(t, "", "get", "pod", "ssa", "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields[*].manager}")
	if out2 != "kubectl other" {
		t.Errorf("kubectl get --show-managed-fields managers = %q", out2)
	}
}
