package status

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"
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

// statusPatchWholeMaps is statusPatch as it was before it left out what both sides share: the
// maps of both whole statuses. The reference statusPatch must match byte for byte.
func statusPatchWholeMaps(uid types.UID, old, next v1.PodStatus) (patch []byte, unchanged bool, err error) {
	var m statusMaps
	oldMap := m.pod("", &old, 0)
	newMap := m.pod(uid, &next, 0)
	if m.bad {
		return statusPatchJSON(uid, old, next)
	}
	patchMap, err := strategicpatch.CreateTwoWayMergeMapPatchUsingLookupPatchMeta(oldMap, newMap, podPatchMeta)
	if err != nil {
		return nil, false, err
	}
	if patch, err = appendJSON(make([]byte, 0, 1024), map[string]any(patchMap)); err != nil {
		return nil, false, err
	}
	return patch, onlyUID(patch, uid), nil
}

// sameAsWholeMaps fails t unless statusPatch gives what the whole maps give for old and next.
func sameAsWholeMaps(t *testing.T, uid types.UID, old, next v1.PodStatus) {
	t.Helper()
	oldCopy, nextCopy := *old.DeepCopy(), *next.DeepCopy()
	want, wantUnchanged, wantErr := statusPatchWholeMaps(uid, old, next)
	got, gotUnchanged, gotErr := statusPatch(uid, old, next)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("statusPatch error = %v, the whole maps' %v", gotErr, wantErr)
	}
	if string(got) != string(want) || gotUnchanged != wantUnchanged {
		t.Errorf("statusPatch = %s, %v\nthe whole maps' %s, %v", got, gotUnchanged, want, wantUnchanged)
	}
	if !reflect.DeepEqual(old, oldCopy) || !reflect.DeepEqual(next, nextCopy) {
		t.Errorf("statusPatch changed the statuses it was given")
	}
}

// TestStatusPatchAsTheWholeMaps holds statusPatch, which leaves out of its maps what both sides
// share, to the maps of the whole statuses: on the writes of a pod's life, on conditions added,
// removed, reordered, changed among equal ones and listed twice, on container statuses, resize,
// empty lists against none, fields removed, and on random statuses.
func TestStatusPatchAsTheWholeMaps(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	pending := apiPod("web", "uid-web").Status
	running := cachedRunning(t)
	for _, tc := range []struct {
		name   string
		old    v1.PodStatus
		change func(s *v1.PodStatus)
	}{
		{"the first status", pending, func(*v1.PodStatus) {}},
		{"the same status", running, func(*v1.PodStatus) {}},
		{"everything removed", running, func(s *v1.PodStatus) { *s = v1.PodStatus{} }},
		{"a condition's status", running, func(s *v1.PodStatus) {
			s.Conditions[0].Status = v1.ConditionFalse
			s.Conditions[0].Reason = "ContainersNotReady"
		}},
		{"the last condition's time", running, func(s *v1.PodStatus) {
			s.Conditions[len(s.Conditions)-1].LastTransitionTime = metav1.NewTime(time.Unix(5000, 0))
		}},
		{"a condition removed and one added", running, func(s *v1.PodStatus) {
			s.Conditions = append(s.Conditions[1:], v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
		}},
		{"a condition removed", running, func(s *v1.PodStatus) { s.Conditions = s.Conditions[1:] }},
		{"the conditions reordered", running, func(s *v1.PodStatus) {
			s.Conditions[0], s.Conditions[1] = s.Conditions[1], s.Conditions[0]
		}},
		{"reordered and one changed", running, func(s *v1.PodStatus) {
			s.Conditions[0], s.Conditions[2] = s.Conditions[2], s.Conditions[0]
			s.Conditions[1].Message = "changed"
		}},
		{"a type listed twice", running, func(s *v1.PodStatus) {
			s.Conditions = append(s.Conditions, s.Conditions[0])
			s.Conditions[1].Status = v1.ConditionUnknown
		}},
		{"a type listed twice on both sides", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.Conditions = append(s.Conditions, s.Conditions[0])
			return s
		}(), func(s *v1.PodStatus) {
			s.Conditions = append(s.Conditions, s.Conditions[0])
			s.Conditions[len(s.Conditions)-1].Message = "second"
			s.Conditions[1].Reason = "Other"
		}},
		{"no conditions before", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.Conditions = nil
			return s
		}(), func(*v1.PodStatus) {}},
		{"a container's state", running, func(s *v1.PodStatus) {
			s.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
			s.ContainerStatuses[0].Ready = false
		}},
		{"the containers removed", running, func(s *v1.PodStatus) { s.ContainerStatuses = nil }},
		{"a container's ready flag", running, func(s *v1.PodStatus) { s.ContainerStatuses[0].Ready = false }},
		{"a container's ID", running, func(s *v1.PodStatus) { s.ContainerStatuses[0].ContainerID = "fake://other" }},
		{"a container's ID with bad bytes the text makes equal", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.ContainerStatuses[0].ContainerID = "x\xff"
			return s
		}(), func(s *v1.PodStatus) { s.ContainerStatuses[0].ContainerID = "x\xfe" }},
		{"an init container's restart count", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.InitContainerStatuses = []v1.ContainerStatus{{Name: "init", RestartCount: 1}}
			return s
		}(), func(s *v1.PodStatus) { s.InitContainerStatuses = []v1.ContainerStatus{{Name: "init", RestartCount: 2}} }},
		{"the ephemeral containers' state only below the second", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.EphemeralContainerStatuses = []v1.ContainerStatus{{Name: "debug", State: v1.ContainerState{
				Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(7, 0))}}}}
			return s
		}(), func(s *v1.PodStatus) {
			s.EphemeralContainerStatuses = []v1.ContainerStatus{{Name: "debug", State: v1.ContainerState{
				Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(7, 5e8))}}}}
		}},
		{"a container added", running, func(s *v1.PodStatus) {
			s.ContainerStatuses = append(s.ContainerStatuses, v1.ContainerStatus{Name: "b", Image: "b:1"})
		}},
		{"a time below the second", running, func(s *v1.PodStatus) {
			s.StartTime = &metav1.Time{Time: s.StartTime.Add(300 * time.Millisecond)}
			s.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(s.ContainerStatuses[0].State.Running.StartedAt.Add(time.Millisecond))
		}},
		{"a quantity written another way", running, func(s *v1.PodStatus) {
			s.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("0.1")}
			s.AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("0.1")}
		}},
		{"resize", running, func(s *v1.PodStatus) { s.Resize = v1.PodResizeStatusInProgress }},
		{"resources", running, func(s *v1.PodStatus) {
			s.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}
		}},
		{"empty lists for none", running, func(s *v1.PodStatus) {
			s.InitContainerStatuses, s.EphemeralContainerStatuses = []v1.ContainerStatus{}, []v1.ContainerStatus{}
			s.ResourceClaimStatuses, s.HostIPs = []v1.PodResourceClaimStatus{}, []v1.HostIP{}
			s.AllocatedResources = v1.ResourceList{}
		}},
		{"none for an empty list", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.Conditions, s.PodIPs = []v1.PodCondition{}, []v1.PodIP{}
			return s
		}(), func(s *v1.PodStatus) { s.Conditions, s.PodIPs = nil, nil }},
		{"IPs changed and removed", running, func(s *v1.PodStatus) {
			s.PodIPs = []v1.PodIP{{IP: "10.0.0.9"}}
			s.HostIP, s.HostIPs = "", nil
		}},
		{"a bad byte in a condition both share", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.Conditions[0].Message = "x\xff"
			return s
		}(), func(s *v1.PodStatus) {
			s.Conditions[0].Message = "x\xff"
			s.Conditions[1].Message = "y"
		}},
		{"a bad byte in a field both share", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.Message = "x\xff"
			return s
		}(), func(s *v1.PodStatus) { s.Message, s.Reason = "x\xff", "Changed" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := *running.DeepCopy()
			tc.change(&next)
			sameAsWholeMaps(t, "uid-web", tc.old, next)
			samePatch(t, "uid-web", tc.old, next)
		})
	}
	for seed := range int64(500) {
		old, next := randomStatuses(seed, "")
		sameAsWholeMaps(t, "uid-r", old, next)
	}
}

// TestWithoutEqualFieldsCoversPodStatus fills statuses at random and checks that
// withoutEqualFields leaves nothing of two equal ones: a field it does not know, added by a
// k8s.io/api release, would stay.
func TestWithoutEqualFieldsCoversPodStatus(t *testing.T) {
	for seed := range int64(20) {
		var s v1.PodStatus
		randfill.NewWithSeed(seed).NilChance(0).NumElements(1, 2).Funcs(
			func(q *resource.Quantity, c randfill.Continue) {
				*q = *resource.NewQuantity(c.Int63n(100)+1, resource.DecimalSI)
			},
		).Fill(&s)
		old, next := s, *s.DeepCopy()
		withoutEqualFields(&old, &next)
		if diff := cmp.Diff(v1.PodStatus{}, old); diff != "" {
			t.Errorf("seed %d: withoutEqualFields left of the old status (-want +got):\n%s", seed, diff)
		}
		if diff := cmp.Diff(v1.PodStatus{}, next); diff != "" {
			t.Errorf("seed %d: withoutEqualFields left of the next status (-want +got):\n%s", seed, diff)
		}
	}
}

// TestSameConditions checks which conditions sameConditions marks as the same on both sides.
func TestSameConditions(t *testing.T) {
	c := func(typ, status string) v1.PodCondition {
		return v1.PodCondition{Type: v1.PodConditionType(typ), Status: v1.ConditionStatus(status)}
	}
	for _, tc := range []struct {
		name              string
		old, next         []v1.PodCondition
		wantOld, wantNext uint64
	}{
		{"none", nil, nil, 0, 0},
		{"all the same", []v1.PodCondition{c("A", "True"), c("B", "True")}, []v1.PodCondition{c("A", "True"), c("B", "True")}, 0b11, 0b11},
		{"reordered", []v1.PodCondition{c("A", "True"), c("B", "True")}, []v1.PodCondition{c("B", "True"), c("A", "True")}, 0b11, 0b11},
		{"one changed", []v1.PodCondition{c("A", "True"), c("B", "True")}, []v1.PodCondition{c("A", "False"), c("B", "True")}, 0b10, 0b10},
		{"one added", []v1.PodCondition{c("B", "True")}, []v1.PodCondition{c("A", "True"), c("B", "True")}, 0b1, 0b10},
		{"twice in old", []v1.PodCondition{c("A", "True"), c("A", "True")}, []v1.PodCondition{c("A", "True")}, 0, 0},
		{"twice in next", []v1.PodCondition{c("A", "True")}, []v1.PodCondition{c("A", "True"), c("A", "True")}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotOld, gotNext := sameConditions(tc.old, tc.next)
			if gotOld != tc.wantOld || gotNext != tc.wantNext {
				t.Errorf("sameConditions() = %b, %b, want %b, %b", gotOld, gotNext, tc.wantOld, tc.wantNext)
			}
		})
	}
}

// TestContainersDiffer checks what containersDiffer calls sure to differ, and that it never says
// so of two lists the JSON text makes equal.
func TestContainersDiffer(t *testing.T) {
	base := []v1.ContainerStatus{{Name: "a", Ready: true, ContainerID: "fake://a", Started: ptr.To(true),
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(10, 0))}}}}
	for _, tc := range []struct {
		name   string
		change func(l []v1.ContainerStatus) []v1.ContainerStatus
		want   bool
	}{
		{"the same", func(l []v1.ContainerStatus) []v1.ContainerStatus { return l }, false},
		{"none", func([]v1.ContainerStatus) []v1.ContainerStatus { return nil }, true},
		{"one more", func(l []v1.ContainerStatus) []v1.ContainerStatus { return append(l, v1.ContainerStatus{Name: "b"}) }, true},
		{"ready", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].Ready = false; return l }, true},
		{"restarts", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].RestartCount = 1; return l }, true},
		{"started false", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].Started = ptr.To(false); return l }, true},
		{"started unset", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].Started = nil; return l }, true},
		{"terminated", func(l []v1.ContainerStatus) []v1.ContainerStatus {
			l[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}
			return l
		}, true},
		{"another ID", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].ContainerID = "fake://b"; return l }, true},
		{"an ID with a bad byte", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].ContainerID = "fake://\xff"; return l }, false},
		{"a start below the second", func(l []v1.ContainerStatus) []v1.ContainerStatus {
			l[0].State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(10, 1))}
			return l
		}, false},
		{"the image (left to the maps)", func(l []v1.ContainerStatus) []v1.ContainerStatus { l[0].Image = "b:2"; return l }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := tc.change(slices.Clone(base))
			if got := containersDiffer(base, other); got != tc.want {
				t.Errorf("containersDiffer() = %v, want %v", got, tc.want)
			}
		})
	}
}
