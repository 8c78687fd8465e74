package apidefaults

import (
	"reflect"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// SetPodDefaults applies the core/v1 scheme defaulting (SetDefaults_Pod, SetDefaults_PodSpec,
// SetDefaults_Container and the generated per-field defaults) to pod, in place, as v1.35 applies
// it with its default feature gates (PodLevelResources on). Defaults never overwrite what is set.
// It covers every default that changes the spec of a pod that can pass validation.
func SetPodDefaults(pod *v1.Pod) {
	spec := &pod.Spec
	// SetDefaults_Pod: requests default to limits, container by container, and then, from what
	// the containers ask, the pod-level limits and requests.
	for i := range spec.Containers {
		defaultRequestsFromLimits(&spec.Containers[i].Resources)
	}
	for i := range spec.InitContainers {
		defaultRequestsFromLimits(&spec.InitContainers[i].Resources)
	}
	defaultPodLevelResources(pod)
	if spec.EnableServiceLinks == nil {
		enable := v1.DefaultEnableServiceLinks
		spec.EnableServiceLinks = &enable
	}
	if spec.HostNetwork {
		defaultHostNetworkPorts(spec.Containers)
		defaultHostNetworkPorts(spec.InitContainers)
	}

	// SetDefaults_PodSpec.
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = v1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &v1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		grace := int64(v1.DefaultTerminationGracePeriodSeconds)
		spec.TerminationGracePeriodSeconds = &grace
	} else if *spec.TerminationGracePeriodSeconds < 0 {
		// The decoder clamps a negative grace period to 1 (the API server's pod strategy does the
		// same); TestDecodeSinglePodTerminationGracePeriodSeconds pins it.
		grace := int64(1)
		spec.TerminationGracePeriodSeconds = &grace
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}

	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	if spec.Overhead != nil {
		roundResourceList(&spec.Overhead)
	}
	if spec.Resources != nil {
		roundResourceList(&spec.Resources.Limits)
		roundResourceList(&spec.Resources.Requests)
	}
}

func defaultRequestsFromLimits(r *v1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = v1.ResourceList{}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

func defaultHostNetworkPorts(containers []v1.Container) {
	for i := range containers {
		for j := range containers[i].Ports {
			if containers[i].Ports[j].HostPort == 0 {
				containers[i].Ports[j].HostPort = containers[i].Ports[j].ContainerPort
			}
		}
	}
}

func defaultContainer(c *v1.Container) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = v1.PullAlways
		} else {
			c.ImagePullPolicy = v1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = v1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	roundResourceList(&c.Resources.Limits)
	roundResourceList(&c.Resources.Requests)
	defaultProbe(c.LivenessProbe)
	defaultProbe(c.ReadinessProbe)
	defaultProbe(c.StartupProbe)
	if c.Lifecycle != nil {
		defaultHandler(c.Lifecycle.PostStart)
		defaultHandler(c.Lifecycle.PreStop)
	}
}

// roundResourceList rounds every quantity up to milli scale, as SetDefaults_ResourceList does.
func roundResourceList(list *v1.ResourceList) {
	for name, q := range *list {
		q.RoundUp(resource.Milli)
		(*list)[name] = q
	}
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		empty := ""
		p.GRPC.Service = &empty
	}
}

func defaultHandler(h *v1.LifecycleHandler) {
	if h != nil {
		defaultHTTPGet(h.HTTPGet)
	}
}

func defaultHTTPGet(a *v1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = v1.URISchemeHTTP
	}
}

func defaultVolume(vol *v1.Volume) {
	src := &vol.VolumeSource
	if VolumeSourceCount(src) == 0 {
		src.EmptyDir = &v1.EmptyDirVolumeSource{}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		unset := v1.HostPathUnset
		src.HostPath.Type = &unset
	}
	if s := src.Secret; s != nil && s.DefaultMode == nil {
		s.DefaultMode = ptrInt32(v1.SecretVolumeSourceDefaultMode)
	}
	if c := src.ConfigMap; c != nil && c.DefaultMode == nil {
		c.DefaultMode = ptrInt32(v1.ConfigMapVolumeSourceDefaultMode)
	}
	if d := src.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptrInt32(v1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardItems(d.Items)
	}
	if p := src.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = ptrInt32(v1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range p.Sources {
			if d := p.Sources[i].DownwardAPI; d != nil {
				defaultDownwardItems(d.Items)
			}
			if t := p.Sources[i].ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				hour := int64(3600)
				t.ExpirationSeconds = &hour
			}
		}
	}
	if s := src.ISCSI; s != nil && s.ISCSIInterface == "" {
		s.ISCSIInterface = "default"
	}
	if s := src.RBD; s != nil {
		if s.RBDPool == "" {
			s.RBDPool = "rbd"
		}
		if s.RadosUser == "" {
			s.RadosUser = "admin"
		}
		if s.Keyring == "" {
			s.Keyring = "/etc/ceph/keyring"
		}
	}
	if s := src.AzureDisk; s != nil {
		if s.CachingMode == nil {
			mode := v1.AzureDataDiskCachingReadWrite
			s.CachingMode = &mode
		}
		if s.Kind == nil {
			kind := v1.AzureSharedBlobDisk
			s.Kind = &kind
		}
		if s.FSType == nil {
			fs := "ext4"
			s.FSType = &fs
		}
		if s.ReadOnly == nil {
			ro := false
			s.ReadOnly = &ro
		}
	}
}

func defaultDownwardItems(items []v1.DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}

func ptrInt32(v int32) *int32 { return &v }

// imageReference approximates the container image reference grammar the kubelet parses with
// ParseNormalizedNamed: optional registry, lowercase path components, optional tag and digest.
var imageReference = regexp.MustCompile(`^(?:` +
	`(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?` +
	`[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*` +
	`(?::([\w][\w.-]{0,127}))?` +
	`(@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)

// anonymousID is a bare 64-hex image ID, which the reference parser refuses as a name.
var anonymousID = regexp.MustCompile(`^[a-f0-9]{64}$`)

// imageTag returns the tag the kubelet's parsers.ParseImageName reports for image: the explicit
// tag, "latest" when there is neither tag nor digest, and "" when there is only a digest or the
// reference does not parse. Only "latest" matters: it makes the default pull policy Always.
func imageTag(image string) string {
	if image == "" || len(image) > 255+135 || anonymousID.MatchString(image) {
		return ""
	}
	m := imageReference.FindStringSubmatch(image)
	if m == nil {
		return ""
	}
	name := strings.SplitN(image, "@", 2)[0]
	if m[1] != "" {
		name = name[:len(name)-len(m[1])-1]
	}
	if len(name) > 255 {
		return ""
	}
	if m[1] == "" && m[2] == "" {
		return "latest"
	}
	return m[1]
}

// VolumeSourceCount counts the non-nil sources in a VolumeSource, whose fields are all pointers.
// A volume with none defaults to an emptyDir; validation wants exactly one.
func VolumeSourceCount(src *v1.VolumeSource) int {
	n := 0
	v := reflect.ValueOf(src).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}
