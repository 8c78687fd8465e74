package status

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusMapsCovers is what statusMaps (patchmaps.go) writes: every struct type reached from
// v1.PodStatus, with the JSON tags of its fields in order, as they were when its methods were
// written. A k8s.io/api release that adds a field, renames one or changes its omitempty changes
// the pod's JSON text and not these maps, and the patch would silently leave the field out:
// TestStatusMapsCoverPodStatus fails on it, naming the field, until statusMaps writes it and
// the list says so.
var statusMapsCovers = map[string][]string{
	"PodCondition":                     {"type", "observedGeneration,omitempty", "status", "lastProbeTime,omitempty", "lastTransitionTime,omitempty", "reason,omitempty", "message,omitempty"},
	"HostIP":                           {"ip"},
	"PodIP":                            {"ip"},
	"ContainerStateWaiting":            {"reason,omitempty", "message,omitempty"},
	"ContainerStateRunning":            {"startedAt,omitempty"},
	"ContainerStateTerminated":         {"exitCode", "signal,omitempty", "reason,omitempty", "message,omitempty", "startedAt,omitempty", "finishedAt,omitempty", "containerID,omitempty"},
	"ContainerState":                   {"waiting,omitempty", "running,omitempty", "terminated,omitempty"},
	"ResourceClaim":                    {"name", "request,omitempty"},
	"ResourceRequirements":             {"limits,omitempty", "requests,omitempty", "claims,omitempty"},
	"VolumeMountStatus":                {"name", "mountPath", "readOnly,omitempty", "recursiveReadOnly,omitempty"},
	"LinuxContainerUser":               {"uid", "gid", "supplementalGroups,omitempty"},
	"ContainerUser":                    {"linux,omitempty"},
	"ResourceHealth":                   {"resourceID", "health,omitempty"},
	"ResourceStatus":                   {"name", "resources,omitempty"},
	"ContainerStatus":                  {"name", "state,omitempty", "lastState,omitempty", "ready", "restartCount", "image", "imageID", "containerID,omitempty", "started,omitempty", "allocatedResources,omitempty", "resources,omitempty", "volumeMounts,omitempty", "user,omitempty", "allocatedResourcesStatus,omitempty", "stopSignal,omitempty"},
	"PodResourceClaimStatus":           {"name", "resourceClaimName,omitempty"},
	"ContainerExtendedResourceRequest": {"containerName", "resourceName", "requestName"},
	"PodExtendedResourceClaimStatus":   {"requestMappings", "resourceClaimName"},
	"PodStatus":                        {"observedGeneration,omitempty", "phase,omitempty", "conditions,omitempty", "message,omitempty", "reason,omitempty", "nominatedNodeName,omitempty", "hostIP,omitempty", "hostIPs,omitempty", "podIP,omitempty", "podIPs,omitempty", "startTime,omitempty", "initContainerStatuses,omitempty", "containerStatuses,omitempty", "qosClass,omitempty", "ephemeralContainerStatuses,omitempty", "resize,omitempty", "resourceClaimStatuses,omitempty", "extendedResourceClaimStatus,omitempty", "allocatedResources,omitempty", "resources,omitempty"},
}

// statusMapsLeaves are the types outside core/v1 a status holds whose JSON statusMaps writes as
// one value (timeValue, a quantity's text).
var statusMapsLeaves = map[reflect.Type]bool{
	reflect.TypeFor[metav1.Time]():       true,
	reflect.TypeFor[resource.Quantity](): true,
}

// TestStatusMapsCoverPodStatus walks v1.PodStatus and every struct type it reaches by reflection
// and holds their JSON tags to statusMapsCovers.
func TestStatusMapsCoverPodStatus(t *testing.T) {
	got := map[string][]string{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			if ty.Kind() == reflect.Map && ty.Key().Kind() != reflect.String {
				t.Errorf("%s: a map keyed by %v, which statusMaps does not write", path, ty.Key())
			}
			ty = ty.Elem()
		}
		if ty.Kind() == reflect.Interface {
			t.Errorf("%s: an interface field, which statusMaps does not write", path)
		}
		if ty.Kind() != reflect.Struct || statusMapsLeaves[ty] {
			return
		}
		if ty.PkgPath() != reflect.TypeFor[v1.PodStatus]().PkgPath() {
			t.Errorf("%s: a %v, which statusMaps does not write", path, ty)
			return
		}
		if _, ok := got[ty.Name()]; ok {
			return
		}
		tags := []string{}
		got[ty.Name()] = tags
		for i := range ty.NumField() {
			f := ty.Field(i)
			tags = append(tags, f.Tag.Get("json"))
			walk(f.Type, path+"."+f.Name)
		}
		got[ty.Name()] = tags
	}
	walk(reflect.TypeFor[v1.PodStatus](), "PodStatus")
	if diff := cmp.Diff(statusMapsCovers, got); diff != "" {
		t.Errorf("the status types' JSON fields are not the ones statusMaps writes (-covered +k8s.io/api):\n%s", diff)
	}
}
