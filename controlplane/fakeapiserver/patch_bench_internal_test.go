package fakeapiserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/test/benchfloor"
)

// BenchmarkPodStatusPatch measures a kubelet's status patch of a fleet's pod (a Deployment's,
// with two containers, their resources and probes, a token volume and the managed fields of
// its creator, the scheduler and the kubelet), in process and without the answer: the merge,
// the field manager and the store. The patches alternate between a container's readiness and
// its restart, so that every one is stored. "maps" merges the stored pod converted to maps
// (strategicMerge, kube-apiserver's way), "maps-validated" the same with the converter's field
// validation always on (no onlyKnownFields walk of the merged maps), "json" its JSON encoding
// (the way before), in the same binary; "maps-uid" sends the patch as a kubelet does, with the
// pod's UID in its metadata as the precondition, "maps-uid-mounts" the same on a pod whose
// container statuses list their volume mounts (as a v1.35 kubelet's do), and "maps-uid-whole" the
// same as "maps-uid" merged whole rather than by its parts (mergeNamedParts); floor-ratio is the time of one patch over the
// decode floor.
func BenchmarkPodStatusPatch(b *testing.B) {
	for _, way := range []string{"maps", "maps-uid", "maps-uid-mounts", "maps-uid-whole", "maps-validated", "json"} {
		b.Run(way, func(b *testing.B) {
			defer func() {
				strategicMergeByMaps, skipKnownFieldValidation, mergeNamedPartsOnly = true, true, true
			}()
			floor := benchfloor.Floor(b)
			ctx := context.Background()
			s, err := New(Options{Clock: clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)), Tracer: trace.Discard})
			if err != nil {
				b.Fatal(err)
			}
			pod := fleetPod()
			created, err := s.Direct("kube-controller-manager/v1.35.4").CreatePod(ctx, pod)
			if err != nil {
				b.Fatal(err)
			}
			kubelet := s.Direct("kubelet/v1.35.4")
			tg := kubelet.target(podsTarget, "default", pod.Name, "status")
			running := `{"status":{"$setElementOrder/conditions":[{"type":"PodReadyToStartContainers"},{"type":"Initialized"},{"type":"Ready"},{"type":"ContainersReady"},{"type":"PodScheduled"}],"conditions":[{"type":"PodReadyToStartContainers","status":"True","lastTransitionTime":"2026-01-01T00:00:02Z"},{"type":"Initialized","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"},{"type":"ContainersReady","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}],"hostIP":"10.0.0.10","hostIPs":[{"ip":"10.0.0.10"}],"phase":"Running","podIP":"10.1.0.5","podIPs":[{"ip":"10.1.0.5"}],"startTime":"2026-01-01T00:00:01Z","qosClass":"Burstable","containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"docker.io/library/nginx@sha256:1","containerID":"containerd://1","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:02Z"}},"allocatedResources":{"cpu":"100m","memory":"64Mi"},"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"memory":"128Mi"}}},{"name":"side","image":"busybox:1.36","imageID":"docker.io/library/busybox@sha256:2","containerID":"containerd://2","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:02Z"}},"allocatedResources":{"cpu":"50m","memory":"32Mi"},"resources":{"requests":{"cpu":"50m","memory":"32Mi"}}}]}}`
			if way == "maps-uid-mounts" {
				// A v1.35 kubelet's statuses list each container's mounts: here the service
				// account token admission mounted.
				var mounts []string
				for _, m := range created.Spec.Containers[0].VolumeMounts {
					mounts = append(mounts, fmt.Sprintf(`{"name":%q,"mountPath":%q,"readOnly":%t,"recursiveReadOnly":"Disabled"}`, m.Name, m.MountPath, m.ReadOnly))
				}
				if len(mounts) == 0 {
					b.Fatal("admission mounted no service account token")
				}
				list := `"volumeMounts":[` + strings.Join(mounts, ",") + `],`
				running = strings.ReplaceAll(running, `"restartCount":0,"started":true,`, `"restartCount":0,"started":true,`+list)
			}
			if _, err := kubelet.patch(ctx, tg, types.StrategicMergePatchType, []byte(running)); err != nil {
				b.Fatal(err)
			}
			flip := `{"status":{"$setElementOrder/conditions":[{"type":"PodReadyToStartContainers"},{"type":"Initialized"},{"type":"Ready"},{"type":"ContainersReady"},{"type":"PodScheduled"}],"conditions":[{"type":"Ready","status":"%[1]s","lastTransitionTime":"2026-01-01T%02[2]d:%02[3]d:%02[4]dZ"},{"type":"ContainersReady","status":"%[1]s","lastTransitionTime":"2026-01-01T%02[2]d:%02[3]d:%02[4]dZ"}],"containerStatuses":[{"name":"side","ready":%[5]t,"restartCount":%[6]d}]}}`
			if strings.HasPrefix(way, "maps-uid") {
				flip = `{"metadata":{"uid":"` + string(created.UID) + `"},` + flip[1:]
			}
			strategicMergeByMaps = way != "json"
			mergeNamedPartsOnly = way != "maps-uid-whole"
			skipKnownFieldValidation = way != "maps-validated"
			b.ReportAllocs()
			i := 0
			start := time.Now()
			for b.Loop() {
				i++
				ready := i%2 == 0
				status := "False"
				if ready {
					status = "True"
				}
				patch := fmt.Sprintf(flip, status, i/3600%24, i/60%60, i%60, ready, i/2)
				if _, err := kubelet.patch(ctx, tg, types.StrategicMergePatchType, []byte(patch)); err != nil {
					b.Fatal(err)
				}
			}
			benchfloor.Report(b, time.Since(start)/time.Duration(b.N), floor)
		})
	}
}

// fleetPod is a Deployment's pod as a fleet runs it, bound to node-1.
func fleetPod() *corev1.Pod {
	q := apiresource.MustParse
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-7d9f8b6c5d-x2x4q", GenerateName: "web-7d9f8b6c5d-",
			Labels: map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8b6c5d", UID: "rs-uid",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Containers: []corev1.Container{
				{Name: "app", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
						Limits: corev1.ResourceList{corev1.ResourceMemory: q("128Mi")}},
					ReadinessProbe: probe, LivenessProbe: probe},
				{Name: "side", Image: "busybox:1.36", Command: []string{"sh", "-c", "sleep 3600"},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("32Mi")}}},
			},
		},
	}
}
