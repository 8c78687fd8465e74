package fakeapiserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// resizablePod is a Burstable pod with a main container and a sidecar that both ask for cpu and
// memory, and a regular init container that does too.
func resizablePod(name string) *corev1.Pod {
	pod := newPod("default", name, "node-1")
	req := func(cpu, mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	pod.Spec.Containers[0].Resources = req("100m", "64Mi")
	pod.Spec.InitContainers = []corev1.Container{
		{Name: "setup", Image: "busybox:1.36", Resources: req("50m", "32Mi")},
		{Name: "proxy", Image: "busybox:1.36", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: req("50m", "32Mi")},
	}
	return pod
}

func TestResizeSubresource(t *testing.T) {
	guaranteed := func() *corev1.Pod {
		pod := newPod("default", "p", "node-1")
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
		pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: l, Limits: l}
		return pod
	}
	cases := []struct {
		name string
		// pod is resizablePod when nil.
		pod   func() *corev1.Pod
		patch string
		// wantErr is a substring of the refusal; "" wants the resize accepted.
		wantErr string
		// check reads the accepted pod, which should give want.
		check func(p *corev1.Pod) string
		want  string
	}{
		{
			name:  "cpu of a container",
			patch: `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}}`,
			check: func(p *corev1.Pod) string { return p.Spec.Containers[0].Resources.Requests.Cpu().String() },
			want:  "200m",
		},
		{
			name:  "memory of a sidecar",
			patch: `{"spec":{"initContainers":[{"name":"proxy","resources":{"requests":{"memory":"48Mi"}}}]}}`,
			check: func(p *corev1.Pod) string { return p.Spec.InitContainers[1].Resources.Requests.Memory().String() },
			want:  "48Mi",
		},
		{
			name:  "other changes are dropped",
			patch: `{"metadata":{"labels":{"new":"label"}},"spec":{"activeDeadlineSeconds":5,"containers":[{"name":"c","image":"nginx:1.27","resources":{"requests":{"cpu":"300m"}}}]}}`,
			check: func(p *corev1.Pod) string {
				return p.Spec.Containers[0].Image + " " + p.Labels["new"] + " " + p.Spec.Containers[0].Resources.Requests.Cpu().String()
			},
			want: "busybox:1.36  300m",
		},
		{
			name:    "qos class change",
			pod:     guaranteed,
			patch:   `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"200m"}}}]}}`,
			wantErr: `Pod "p" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`,
		},
		{
			name:  "guaranteed stays guaranteed",
			pod:   guaranteed,
			patch: `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"200m"},"requests":{"cpu":"200m"}}}]}}`,
			check: func(p *corev1.Pod) string {
				return string(p.Status.QOSClass) + " " + p.Spec.Containers[0].Resources.Limits.Cpu().String()
			},
			want: "Guaranteed 200m",
		},
		{
			name:    "requests removed",
			patch:   `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":null}}}]}}`,
			wantErr: "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
		},
		{
			name:    "not cpu or memory",
			patch:   `{"spec":{"containers":[{"name":"c","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}`,
			wantErr: "spec: Forbidden: only cpu and memory resources are mutable",
		},
		{
			name:    "regular init container",
			patch:   `{"spec":{"initContainers":[{"name":"setup","resources":{"requests":{"cpu":"60m"}}}]}}`,
			wantErr: "spec: Forbidden: resources for non-sidecar init containers are immutable",
		},
		{
			name:    "resize policy",
			patch:   `{"spec":{"containers":[{"name":"c","resizePolicy":[{"resourceName":"cpu","restartPolicy":"RestartContainer"}]}]}}`,
			wantErr: "spec: Forbidden: only cpu and memory resources are mutable",
		},
		{
			name:    "container added",
			patch:   `{"spec":{"containers":[{"name":"c"},{"name":"d","image":"busybox:1.36"}]}}`,
			wantErr: "spec.containers: Forbidden: containers may not be added or removed on resize",
		},
		{
			name:    "requests above limits",
			patch:   `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}}]}}`,
			wantErr: "must be less than or equal to cpu limit",
		},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			f := newFixture(t, fakeapiserver.Options{})
			ctx := context.Background()
			pods := f.client.CoreV1().Pods("default")
			pod := resizablePod("p")
			if tc.pod != nil {
				pod = tc.pod()
			}
			before := f.createPod(t, pod)
			got, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(tc.patch), metav1.PatchOptions{}, "resize")
			if tc.wantErr != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Patch(resize) = %v, want 422 containing %q", err, tc.wantErr)
				}
				after, _ := pods.Get(ctx, "p", metav1.GetOptions{})
				if after.ResourceVersion != before.ResourceVersion {
					t.Errorf("a refused resize wrote the pod: resourceVersion %s, was %s", after.ResourceVersion, before.ResourceVersion)
				}
				return
			}
			if err != nil {
				t.Fatalf("Patch(resize) = %v", err)
			}
			if c := tc.check(got); c != tc.want {
				t.Errorf("Patch(resize) = %q, want %q", c, tc.want)
			}
			if got.Generation != before.Generation+1 {
				t.Errorf("generation = %d, want %d", got.Generation, before.Generation+1)
			}
			var managers []string
			for _, m := range got.ManagedFields {
				managers = append(managers, string(m.Operation)+" "+m.Subresource)
			}
			if diff := cmp.Diff([]string{"Update ", "Update resize"}, managers); diff != "" {
				t.Errorf("managed fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResizeRefusals covers the pods a resize may not touch at all, and the trace and generation
// of one that changes nothing.
func TestResizeRefusals(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	cpu := `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}}`

	mirror := resizablePod("mirror")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	f.createPod(t, mirror)
	if _, err := pods.Patch(ctx, "mirror", types.StrategicMergePatchType, []byte(cpu), metav1.PatchOptions{}, "resize"); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), `Pod "mirror" is invalid: []: Forbidden: static pods cannot be resized`) {
		t.Errorf("Patch(resize) of a mirror pod = %v, want static pods cannot be resized", err)
	}

	plr := resizablePod("plr")
	plr.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	f.createPod(t, plr)
	if _, err := pods.Patch(ctx, "plr", types.StrategicMergePatchType, []byte(cpu), metav1.PatchOptions{}, "resize"); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "resize of pods with pod-level resources is forbidden") {
		t.Errorf("Patch(resize) of a pod with pod-level resources = %v, want forbidden", err)
	}

	// A running container whose status has no resources is on a kubelet without resize.
	old := f.createPod(t, resizablePod("old"))
	old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	if _, err := pods.UpdateStatus(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(ctx, "old", types.StrategicMergePatchType, []byte(cpu), metav1.PatchOptions{}, "resize"); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "Pod running on node without support for resize") {
		t.Errorf("Patch(resize) on a node without resize = %v, want forbidden", err)
	}

	same := f.createPod(t, resizablePod("same"))
	got, err := pods.Patch(ctx, "same", types.StrategicMergePatchType, []byte(`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}}`), metav1.PatchOptions{}, "resize")
	if err != nil || got.ResourceVersion != same.ResourceVersion || got.Generation != same.Generation {
		t.Errorf("Patch(resize) that changes nothing = rv %s generation %d, %v; want rv %s generation %d", got.ResourceVersion, got.Generation, err, same.ResourceVersion, same.Generation)
	}

	var funcs []string
	for _, e := range f.trace.Events() {
		if e.Pod == "default/same" {
			funcs = append(funcs, string(e.Event)+" "+e.Func)
		}
	}
	if diff := cmp.Diff([]string{"create POST pods"}, funcs); diff != "" {
		t.Errorf("trace of the unchanged resize (-want +got):\n%s", diff)
	}
}

func TestResizeGetAndUpdate(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	f.createPod(t, resizablePod("p"))
	var pod corev1.Pod
	if err := f.client.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").Name("p").SubResource("resize").Do(ctx).Into(&pod); err != nil {
		t.Fatalf("GET pods/p/resize = %v", err)
	}
	pod.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("128Mi")
	got, err := f.client.CoreV1().Pods("default").UpdateResize(ctx, "p", &pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateResize() = %v", err)
	}
	if m := got.Spec.Containers[0].Resources.Requests.Memory().String(); m != "128Mi" || got.Generation != 2 {
		t.Errorf("UpdateResize() = memory %s generation %d, want 128Mi and 2", m, got.Generation)
	}
	if events := f.trace.Events(); events[len(events)-1].Func != "PUT pods/resize" {
		t.Errorf("last trace event = %+v, want the PUT pods/resize update", events[len(events)-1])
	}
}

// TestKubectlResize resizes a pod as its documentation says to: kubectl patch with --subresource
// resize, which kubectl allows once discovery lists pods/resize.
func TestKubectlResize(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	f.createPod(t, resizablePod("web"))
	out := k.run(t, "", "patch", "pod", "web", "--subresource", "resize", "--patch",
		`{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"}}}]}}`)
	if !strings.Contains(out, "pod/web patched") {
		t.Errorf("kubectl patch --subresource resize = %q, want pod/web patched", out)
	}
	got := k.run(t, "", "get", "pod", "web", "-o", `jsonpath={.spec.containers[0].resources.requests.cpu} {.metadata.generation}`)
	if got != "250m 2" {
		t.Errorf("after the resize, cpu and generation = %q, want 250m 2", got)
	}
}
