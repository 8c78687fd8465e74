package status

import (
	"reflect"
	"slices"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// statusMaps builds the maps that decoding a pod's JSON text gives, for the pods statusPatch
// compares: only their UID and status are set. Each method follows its type's JSON tags: a field
// tagged omitempty is left out when empty (a nil pointer, an empty string, list or map, a zero
// number, false), a struct is always there, a zero metav1.Time is null, integers are int64, a
// quantity is its canonical text. bad is set when a string is not valid UTF-8, which the text
// would have changed. The fields are the ones of the k8s.io/api release in go.mod:
// statusMapsCovers (patchmaps_test.go) lists them, and its test fails on a release that changes
// them.
type statusMaps struct {
	bad bool
	// sameOld and sameNext have a bit set for each condition of the old and the next status
	// that is the same on both sides (sameConditions): its map holds only its type.
	sameOld, sameNext uint64
}

// obj is a JSON object.
type obj = map[string]any

func (m *statusMaps) str(o obj, key, s string) {
	if s != "" {
		o[key] = m.text(s)
	}
}

func (m *statusMaps) text(s string) string {
	if !utf8.ValidString(s) {
		m.bad = true
	}
	return s
}

func num[T ~int32 | ~int64](o obj, key string, n T) {
	if n != 0 {
		o[key] = int64(n)
	}
}

func timeValue(t metav1.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(timeLayout)
}

// timeLayout is metav1.Time's JSON form.
const timeLayout = "2006-01-02T15:04:05Z07:00"

// pod builds the maps of a pod with uid and status s; the conditions with their bit set in same
// hold only their type.
func (m *statusMaps) pod(uid types.UID, s *v1.PodStatus, same uint64) obj {
	meta := obj{"creationTimestamp": nil}
	m.str(meta, "uid", string(uid))
	return obj{"metadata": meta, "spec": obj{"containers": nil}, "status": m.status(s, same)}
}

func (m *statusMaps) status(s *v1.PodStatus, same uint64) obj {
	o := obj{}
	num(o, "observedGeneration", s.ObservedGeneration)
	m.str(o, "phase", string(s.Phase))
	if len(s.Conditions) > 0 {
		l := make([]any, len(s.Conditions))
		for i := range s.Conditions {
			if i < 64 && same&(1<<i) != 0 {
				l[i] = obj{"type": m.text(string(s.Conditions[i].Type))}
				continue
			}
			l[i] = m.condition(&s.Conditions[i])
		}
		o["conditions"] = l
	}
	m.str(o, "message", s.Message)
	m.str(o, "reason", s.Reason)
	m.str(o, "nominatedNodeName", s.NominatedNodeName)
	m.str(o, "hostIP", s.HostIP)
	if len(s.HostIPs) > 0 {
		l := make([]any, len(s.HostIPs))
		for i, ip := range s.HostIPs {
			l[i] = obj{"ip": m.text(ip.IP)}
		}
		o["hostIPs"] = l
	}
	m.str(o, "podIP", s.PodIP)
	if len(s.PodIPs) > 0 {
		l := make([]any, len(s.PodIPs))
		for i, ip := range s.PodIPs {
			l[i] = obj{"ip": m.text(ip.IP)}
		}
		o["podIPs"] = l
	}
	if s.StartTime != nil {
		o["startTime"] = timeValue(*s.StartTime)
	}
	m.containers(o, "initContainerStatuses", s.InitContainerStatuses)
	m.containers(o, "containerStatuses", s.ContainerStatuses)
	m.str(o, "qosClass", string(s.QOSClass))
	m.containers(o, "ephemeralContainerStatuses", s.EphemeralContainerStatuses)
	m.str(o, "resize", string(s.Resize))
	if len(s.ResourceClaimStatuses) > 0 {
		l := make([]any, len(s.ResourceClaimStatuses))
		for i, c := range s.ResourceClaimStatuses {
			e := obj{"name": m.text(c.Name)}
			if c.ResourceClaimName != nil {
				e["resourceClaimName"] = m.text(*c.ResourceClaimName)
			}
			l[i] = e
		}
		o["resourceClaimStatuses"] = l
	}
	if x := s.ExtendedResourceClaimStatus; x != nil {
		var mappings any
		if x.RequestMappings != nil {
			l := make([]any, len(x.RequestMappings))
			for i, r := range x.RequestMappings {
				l[i] = obj{"containerName": m.text(r.ContainerName), "resourceName": m.text(r.ResourceName),
					"requestName": m.text(r.RequestName)}
			}
			mappings = l
		}
		o["extendedResourceClaimStatus"] = obj{"requestMappings": mappings, "resourceClaimName": m.text(x.ResourceClaimName)}
	}
	m.resources(o, "allocatedResources", s.AllocatedResources)
	if s.Resources != nil {
		o["resources"] = m.requirements(s.Resources)
	}
	return o
}

func (m *statusMaps) condition(c *v1.PodCondition) obj {
	o := obj{"type": m.text(string(c.Type)), "status": m.text(string(c.Status)),
		"lastProbeTime": timeValue(c.LastProbeTime), "lastTransitionTime": timeValue(c.LastTransitionTime)}
	num(o, "observedGeneration", c.ObservedGeneration)
	m.str(o, "reason", c.Reason)
	m.str(o, "message", c.Message)
	return o
}

func (m *statusMaps) containers(o obj, key string, cs []v1.ContainerStatus) {
	if len(cs) == 0 {
		return
	}
	l := make([]any, len(cs))
	for i := range cs {
		l[i] = m.container(&cs[i])
	}
	o[key] = l
}

func (m *statusMaps) container(c *v1.ContainerStatus) obj {
	o := obj{"name": m.text(c.Name), "state": m.state(&c.State), "lastState": m.state(&c.LastTerminationState),
		"ready": c.Ready, "restartCount": int64(c.RestartCount), "image": m.text(c.Image), "imageID": m.text(c.ImageID)}
	m.str(o, "containerID", c.ContainerID)
	if c.Started != nil {
		o["started"] = *c.Started
	}
	m.resources(o, "allocatedResources", c.AllocatedResources)
	if c.Resources != nil {
		o["resources"] = m.requirements(c.Resources)
	}
	if len(c.VolumeMounts) > 0 {
		l := make([]any, len(c.VolumeMounts))
		for i, v := range c.VolumeMounts {
			e := obj{"name": m.text(v.Name), "mountPath": m.text(v.MountPath)}
			if v.ReadOnly {
				e["readOnly"] = true
			}
			if v.RecursiveReadOnly != nil {
				e["recursiveReadOnly"] = m.text(string(*v.RecursiveReadOnly))
			}
			l[i] = e
		}
		o["volumeMounts"] = l
	}
	if c.User != nil {
		u := obj{}
		if lu := c.User.Linux; lu != nil {
			e := obj{"uid": lu.UID, "gid": lu.GID}
			if len(lu.SupplementalGroups) > 0 {
				g := make([]any, len(lu.SupplementalGroups))
				for i, id := range lu.SupplementalGroups {
					g[i] = id
				}
				e["supplementalGroups"] = g
			}
			u["linux"] = e
		}
		o["user"] = u
	}
	if len(c.AllocatedResourcesStatus) > 0 {
		l := make([]any, len(c.AllocatedResourcesStatus))
		for i, r := range c.AllocatedResourcesStatus {
			e := obj{"name": m.text(string(r.Name))}
			if len(r.Resources) > 0 {
				h := make([]any, len(r.Resources))
				for j, rh := range r.Resources {
					he := obj{"resourceID": m.text(string(rh.ResourceID))}
					m.str(he, "health", string(rh.Health))
					h[j] = he
				}
				e["resources"] = h
			}
			l[i] = e
		}
		o["allocatedResourcesStatus"] = l
	}
	if c.StopSignal != nil {
		o["stopSignal"] = m.text(string(*c.StopSignal))
	}
	return o
}

func (m *statusMaps) state(s *v1.ContainerState) obj {
	o := obj{}
	if w := s.Waiting; w != nil {
		e := obj{}
		m.str(e, "reason", w.Reason)
		m.str(e, "message", w.Message)
		o["waiting"] = e
	}
	if r := s.Running; r != nil {
		o["running"] = obj{"startedAt": timeValue(r.StartedAt)}
	}
	if t := s.Terminated; t != nil {
		e := obj{"exitCode": int64(t.ExitCode), "startedAt": timeValue(t.StartedAt), "finishedAt": timeValue(t.FinishedAt)}
		num(e, "signal", t.Signal)
		m.str(e, "reason", t.Reason)
		m.str(e, "message", t.Message)
		m.str(e, "containerID", t.ContainerID)
		o["terminated"] = e
	}
	return o
}

func (m *statusMaps) requirements(r *v1.ResourceRequirements) obj {
	o := obj{}
	m.resources(o, "limits", r.Limits)
	m.resources(o, "requests", r.Requests)
	if len(r.Claims) > 0 {
		l := make([]any, len(r.Claims))
		for i, c := range r.Claims {
			e := obj{"name": m.text(c.Name)}
			m.str(e, "request", c.Request)
			l[i] = e
		}
		o["claims"] = l
	}
	return o
}

func (m *statusMaps) resources(o obj, key string, rl v1.ResourceList) {
	if len(rl) == 0 {
		return
	}
	e := make(obj, len(rl))
	for name, q := range rl {
		e[m.text(string(name))] = q.String()
	}
	o[key] = e
}

// withoutEqualFields zeroes each field of the two statuses that holds the same Go value in both:
// two equal values have equal JSON text, and a patch leaves them out as it leaves out two empty
// ones. A value compared is never changed, only left out. Fields that hold pointers, maps or
// lists of those are compared by reflect.DeepEqual, which tells a nil list from an empty one
// and a quantity's cached text from none: two such values stay, and the maps compare them as
// the text would. TestWithoutEqualFieldsCoversPodStatus fails on a field this leaves.
func withoutEqualFields(old, next *v1.PodStatus) {
	if old.ObservedGeneration == next.ObservedGeneration {
		old.ObservedGeneration, next.ObservedGeneration = 0, 0
	}
	if old.Phase == next.Phase {
		old.Phase, next.Phase = "", ""
	}
	if slices.Equal(old.Conditions, next.Conditions) {
		old.Conditions, next.Conditions = nil, nil
	}
	if old.Message == next.Message {
		old.Message, next.Message = "", ""
	}
	if old.Reason == next.Reason {
		old.Reason, next.Reason = "", ""
	}
	if old.NominatedNodeName == next.NominatedNodeName {
		old.NominatedNodeName, next.NominatedNodeName = "", ""
	}
	if old.HostIP == next.HostIP {
		old.HostIP, next.HostIP = "", ""
	}
	if slices.Equal(old.HostIPs, next.HostIPs) {
		old.HostIPs, next.HostIPs = nil, nil
	}
	if old.PodIP == next.PodIP {
		old.PodIP, next.PodIP = "", ""
	}
	if slices.Equal(old.PodIPs, next.PodIPs) {
		old.PodIPs, next.PodIPs = nil, nil
	}
	if old.StartTime == next.StartTime || old.StartTime != nil && next.StartTime != nil && *old.StartTime == *next.StartTime {
		old.StartTime, next.StartTime = nil, nil
	}
	if reflect.DeepEqual(old.InitContainerStatuses, next.InitContainerStatuses) {
		old.InitContainerStatuses, next.InitContainerStatuses = nil, nil
	}
	if reflect.DeepEqual(old.ContainerStatuses, next.ContainerStatuses) {
		old.ContainerStatuses, next.ContainerStatuses = nil, nil
	}
	if old.QOSClass == next.QOSClass {
		old.QOSClass, next.QOSClass = "", ""
	}
	if reflect.DeepEqual(old.EphemeralContainerStatuses, next.EphemeralContainerStatuses) {
		old.EphemeralContainerStatuses, next.EphemeralContainerStatuses = nil, nil
	}
	if old.Resize == next.Resize {
		old.Resize, next.Resize = "", ""
	}
	if reflect.DeepEqual(old.ResourceClaimStatuses, next.ResourceClaimStatuses) {
		old.ResourceClaimStatuses, next.ResourceClaimStatuses = nil, nil
	}
	if reflect.DeepEqual(old.ExtendedResourceClaimStatus, next.ExtendedResourceClaimStatus) {
		old.ExtendedResourceClaimStatus, next.ExtendedResourceClaimStatus = nil, nil
	}
	if reflect.DeepEqual(old.AllocatedResources, next.AllocatedResources) {
		old.AllocatedResources, next.AllocatedResources = nil, nil
	}
	if reflect.DeepEqual(old.Resources, next.Resources) {
		old.Resources, next.Resources = nil, nil
	}
}

// sameConditions marks the conditions that are the same Go value in old and next, their type
// once in each list: the strategic merge patch matches the two lists' elements by type and
// patches each pair from its two elements alone, so such a pair needs only its type. A type
// listed twice on either side is left whole (how the patch pairs duplicates depends on their
// order). Lists of more than 64 conditions are left whole.
func sameConditions(old, next []v1.PodCondition) (sameOld, sameNext uint64) {
	if len(old) > 64 || len(next) > 64 {
		return 0, 0
	}
	for j := range next {
		i, n := -1, 0
		for k := range old {
			if old[k].Type == next[j].Type {
				i, n = k, n+1
			}
		}
		if n != 1 || old[i] != next[j] {
			continue
		}
		once := true
		for k := range next {
			if k != j && next[k].Type == next[j].Type {
				once = false
			}
		}
		if once {
			sameOld |= 1 << i
			sameNext |= 1 << j
		}
	}
	return sameOld, sameNext
}

// containersDiffer reports whether two lists of container statuses surely have different JSON
// texts, by what the text writes one way only: the lists' lengths, each status's ready flag,
// restart count, started flag, which states it has, and its container ID when both IDs are
// valid UTF-8 (the text makes two invalid strings equal when it replaces their bad bytes). A
// false answer says nothing: the maps then compare the lists.
func containersDiffer(a, b []v1.ContainerStatus) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Ready != y.Ready || x.RestartCount != y.RestartCount {
			return true
		}
		if (x.Started == nil) != (y.Started == nil) || x.Started != nil && *x.Started != *y.Started {
			return true
		}
		if (x.State.Waiting == nil) != (y.State.Waiting == nil) || (x.State.Running == nil) != (y.State.Running == nil) ||
			(x.State.Terminated == nil) != (y.State.Terminated == nil) {
			return true
		}
		if x.ContainerID != y.ContainerID && utf8.ValidString(x.ContainerID) && utf8.ValidString(y.ContainerID) {
			return true
		}
	}
	return false
}
