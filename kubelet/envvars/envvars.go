package envvars

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// ConfigMapGetter and SecretGetter are the kubelet's ConfigMap and Secret managers.
type (
	ConfigMapGetter interface {
		GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
	}
	SecretGetter interface {
		GetSecret(namespace, name string) (*v1.Secret, error)
	}
)

// Services is the kubelet's service lister: every Service with a cluster IP, once its informer
// has listed (synced false before).
type Services interface {
	List() (services []*v1.Service, synced bool)
}

// Options configure a Maker. A standalone kubelet (no API server) leaves ConfigMaps, Secrets and
// Services nil: a reference then fails as it does there, and no service variable is made.
type Options struct {
	ConfigMaps ConfigMapGetter
	Secrets    SecretGetter
	Services   Services
	// HostIPs are the node's IPs, for status.hostIP(s); none fails those references as the
	// kubelet does when it cannot find its node's address.
	HostIPs []string
	// Allocatable is the node's allocatable, the default of a resource reference to a limit the
	// container does not set (defaultPodLimitsForDownwardAPI). Nil is none: the limit is 0.
	Allocatable func() v1.ResourceList
}

// Maker makes containers' environments.
type Maker struct {
	opts Options
}

// New returns a Maker.
func New(opts Options) *Maker { return &Maker{opts: opts} }

// masterServices are the Services of the default namespace every pod's environment names
// (kubelet_pods.go's masterServices).
var masterServices = []string{"kubernetes"}

// MakeEnvironmentVariables is the kubelet's makeEnvironmentVariables, the variables sorted by name.
func (m *Maker) MakeEnvironmentVariables(pod *v1.Pod, container *v1.Container, podIP string, podIPs []string) ([]kubecontainer.EnvVar, error) {
	tmpEnv := map[string]string{}
	serviceEnv, err := m.resolve(pod, container, podIP, podIPs, tmpEnv)
	if err != nil {
		return nil, err
	}
	for k, v := range serviceEnv {
		if _, ok := tmpEnv[k]; !ok {
			tmpEnv[k] = v
		}
	}
	out := make([]kubecontainer.EnvVar, 0, len(tmpEnv))
	for _, k := range slices.Sorted(maps.Keys(tmpEnv)) {
		out = append(out, kubecontainer.EnvVar{Name: k, Value: tmpEnv[k]})
	}
	return out, nil
}

// CheckEnvironment is the error MakeEnvironmentVariables returns for the container, nil when it
// makes the variables, without making them: generateContainerConfig's only effect the fake
// runtime shows is that error (CreateContainerConfigError), and it drops the variables. It reads
// the same ConfigMaps, Secrets and keys in the same order, so the first failure is the same; the
// Services are listed only to see that they have been read once, since no service variable can
// fail (they are listed for a static pod too, as making them would). A container without env or
// envFrom costs nothing.
func (m *Maker) CheckEnvironment(pod *v1.Pod, container *v1.Container, podIP string, podIPs []string) error {
	_, err := m.resolve(pod, container, podIP, podIPs, nil)
	return err
}

// resolve walks what the container's environment refers to, in the kubelet's order, and returns
// the first error. With tmpEnv it puts the container's own variables into it and returns the
// service variables; without, it only checks (CheckEnvironment): no value is made or expanded.
func (m *Maker) resolve(pod *v1.Pod, container *v1.Container, podIP string, podIPs []string, tmpEnv map[string]string) (map[string]string, error) {
	if pod.Spec.EnableServiceLinks == nil {
		return nil, errors.New("nil pod.spec.enableServiceLinks encountered, cannot construct envvars")
	}
	if m.opts.Services != nil && !kubecontainer.IsStaticPod(pod) {
		if _, synced := m.opts.Services.List(); !synced {
			return nil, errors.New("services have not yet been read at least once, cannot construct envvars")
		}
	}
	build := tmpEnv != nil
	var serviceEnv map[string]string
	if build {
		serviceEnv = m.serviceEnv(pod.Namespace, *pod.Spec.EnableServiceLinks)
	} else if m.opts.Services != nil && kubecontainer.IsStaticPod(pod) {
		// Making the variables lists the Services for a static pod too (its service
		// variables), and a list can have an effect: replay's stepped informer lists the API
		// server when asked while it is reachable, which can decide whether a later API pod's
		// start finds the Services read. The check reads what making would.
		m.opts.Services.List()
	}
	// The ConfigMaps and Secrets read so far, made at the first reference.
	var configMaps map[string]*v1.ConfigMap
	var secrets map[string]*v1.Secret
	seenConfigMaps := func() map[string]*v1.ConfigMap {
		if configMaps == nil {
			configMaps = map[string]*v1.ConfigMap{}
		}
		return configMaps
	}
	seenSecrets := func() map[string]*v1.Secret {
		if secrets == nil {
			secrets = map[string]*v1.Secret{}
		}
		return secrets
	}

	for _, from := range container.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, skip, err := m.configMap(pod.Namespace, from.ConfigMapRef.Name, isTrue(from.ConfigMapRef.Optional), seenConfigMaps())
			if err != nil {
				return nil, err
			}
			if skip || !build {
				continue
			}
			for k, v := range cm.Data {
				tmpEnv[from.Prefix+k] = v
			}
		case from.SecretRef != nil:
			s, skip, err := m.secret(pod.Namespace, from.SecretRef.Name, isTrue(from.SecretRef.Optional), seenSecrets())
			if err != nil {
				return nil, err
			}
			if skip || !build {
				continue
			}
			for k, v := range s.Data {
				tmpEnv[from.Prefix+k] = string(v)
			}
		}
	}

	lookup := func(name string) (string, bool) {
		if v, ok := tmpEnv[name]; ok {
			return v, true
		}
		v, ok := serviceEnv[name]
		return v, ok
	}
	for _, env := range container.Env {
		val := env.Value
		switch {
		case val != "":
			if build {
				val = Expand(val, lookup)
			}
		case env.ValueFrom == nil:
		case env.ValueFrom.FieldRef != nil:
			var err error
			if val, err = m.fieldValue(env.ValueFrom.FieldRef, pod, podIP, podIPs); err != nil {
				return nil, err
			}
		case env.ValueFrom.ResourceFieldRef != nil:
			var err error
			if val, err = m.resourceValue(env.ValueFrom.ResourceFieldRef, pod, container); err != nil {
				return nil, err
			}
		case env.ValueFrom.ConfigMapKeyRef != nil:
			ref := env.ValueFrom.ConfigMapKeyRef
			optional := isTrue(ref.Optional)
			cm, skip, err := m.configMap(pod.Namespace, ref.Name, optional, seenConfigMaps())
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, pod.Namespace, ref.Name)
			}
			val = v
		case env.ValueFrom.SecretKeyRef != nil:
			ref := env.ValueFrom.SecretKeyRef
			optional := isTrue(ref.Optional)
			s, skip, err := m.secret(pod.Namespace, ref.Name, optional, seenSecrets())
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, pod.Namespace, ref.Name)
			}
			val = string(v)
		}
		if build {
			tmpEnv[env.Name] = val
		}
	}
	return serviceEnv, nil
}

// configMap reads a ConfigMap once per container, as the kubelet's local map does: skip is set for
// an optional one that does not exist.
func (m *Maker) configMap(namespace, name string, optional bool, seen map[string]*v1.ConfigMap) (cm *v1.ConfigMap, skip bool, err error) {
	if cm, ok := seen[name]; ok {
		return cm, false, nil
	}
	if m.opts.ConfigMaps == nil {
		return nil, false, fmt.Errorf("couldn't get configMap %v/%v, no kubeClient defined", namespace, name)
	}
	cm, err = m.opts.ConfigMaps.GetConfigMap(namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil, true, nil
		}
		return nil, false, err
	}
	seen[name] = cm
	return cm, false, nil
}

// secret is configMap for Secrets.
func (m *Maker) secret(namespace, name string, optional bool, seen map[string]*v1.Secret) (s *v1.Secret, skip bool, err error) {
	if s, ok := seen[name]; ok {
		return s, false, nil
	}
	if m.opts.Secrets == nil {
		return nil, false, fmt.Errorf("couldn't get secret %v/%v, no kubeClient defined", namespace, name)
	}
	s, err = m.opts.Secrets.GetSecret(namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil, true, nil
		}
		return nil, false, err
	}
	seen[name] = s
	return s, false, nil
}

// serviceEnv is getServiceEnvVarMap: the master services of the default namespace always, the
// pod namespace's with service links.
func (m *Maker) serviceEnv(namespace string, links bool) map[string]string {
	out := map[string]string{}
	if m.opts.Services == nil {
		return out
	}
	services, _ := m.opts.Services.List()
	chosen := map[string]*v1.Service{}
	for _, svc := range services {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == v1.ClusterIPNone {
			continue
		}
		switch {
		case svc.Namespace == metav1.NamespaceDefault && slices.Contains(masterServices, svc.Name):
			if _, ok := chosen[svc.Name]; !ok {
				chosen[svc.Name] = svc
			}
		case svc.Namespace == namespace && links:
			chosen[svc.Name] = svc
		}
	}
	for _, svc := range chosen {
		for _, e := range FromServices(svc) {
			out[e.Name] = e.Value
		}
	}
	return out
}

// FromServices is pkg/kubelet/envvars' FromServices for one Service with a cluster IP: its
// _SERVICE_HOST and _SERVICE_PORT variables and the Docker link ones.
func FromServices(svc *v1.Service) []kubecontainer.EnvVar {
	if len(svc.Spec.Ports) == 0 {
		return nil
	}
	prefix := strings.ToUpper(strings.ReplaceAll(svc.Name, "-", "_"))
	out := []kubecontainer.EnvVar{
		{Name: prefix + "_SERVICE_HOST", Value: svc.Spec.ClusterIP},
		{Name: prefix + "_SERVICE_PORT", Value: strconv.Itoa(int(svc.Spec.Ports[0].Port))},
	}
	for _, p := range svc.Spec.Ports {
		if p.Name != "" {
			out = append(out, kubecontainer.EnvVar{Name: prefix + "_SERVICE_PORT_" + strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_")), Value: strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range svc.Spec.Ports {
		proto := string(v1.ProtocolTCP)
		if p.Protocol != "" {
			proto = string(p.Protocol)
		}
		hostPort := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(p.Port)))
		if i == 0 {
			out = append(out, kubecontainer.EnvVar{Name: prefix + "_PORT", Value: strings.ToLower(proto) + "://" + hostPort})
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
		out = append(out,
			kubecontainer.EnvVar{Name: pp, Value: strings.ToLower(proto) + "://" + hostPort},
			kubecontainer.EnvVar{Name: pp + "_PROTO", Value: strings.ToLower(proto)},
			kubecontainer.EnvVar{Name: pp + "_PORT", Value: strconv.Itoa(int(p.Port))},
			kubecontainer.EnvVar{Name: pp + "_ADDR", Value: svc.Spec.ClusterIP})
	}
	return out
}

// fieldValue is podFieldSelectorRuntimeValue with fieldpath's ExtractFieldPathAsString.
func (m *Maker) fieldValue(fs *v1.ObjectFieldSelector, pod *v1.Pod, podIP string, podIPs []string) (string, error) {
	if len(podIPs) > 0 {
		podIP = podIPs[0]
	}
	switch path := fs.FieldPath; path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		if len(m.opts.HostIPs) == 0 {
			return "", errors.New("cannot get host IP: no node address")
		}
		if path == "status.hostIP" {
			return m.opts.HostIPs[0], nil
		}
		return strings.Join(m.opts.HostIPs, ","), nil
	case "status.podIP":
		return podIP, nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	default:
		for prefix, values := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
			if key, ok := subscript(path, prefix); ok {
				return values[key], nil
			}
		}
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fs.FieldPath)
}

// subscript splits prefix['key'].
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// formatMap is fieldpath.FormatMap: key="value" lines, sorted, the value quoted.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%v=%q\n", k, m[k])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// resourceValue is containerResourceRuntimeValue after defaultPodLimitsForDownwardAPI: a limit the
// container does not set is the node's allocatable.
func (m *Maker) resourceValue(fs *v1.ResourceFieldSelector, pod *v1.Pod, container *v1.Container) (string, error) {
	c := container
	if fs.ContainerName != "" {
		i := slices.IndexFunc(pod.Spec.Containers, func(o v1.Container) bool { return o.Name == fs.ContainerName })
		if i < 0 {
			j := slices.IndexFunc(pod.Spec.InitContainers, func(o v1.Container) bool { return o.Name == fs.ContainerName })
			if j < 0 {
				return "", fmt.Errorf("container %s not found", fs.ContainerName)
			}
			c = &pod.Spec.InitContainers[j]
		} else {
			c = &pod.Spec.Containers[i]
		}
	}
	limits := v1.ResourceList{}
	if m.opts.Allocatable != nil {
		maps.Copy(limits, m.opts.Allocatable())
	}
	maps.Copy(limits, c.Resources.Limits)
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	var q resource.Quantity
	switch fs.Resource {
	case "limits.cpu":
		q = limits[v1.ResourceCPU]
	case "limits.memory":
		q = limits[v1.ResourceMemory]
	case "limits.ephemeral-storage":
		q = limits[v1.ResourceEphemeralStorage]
	case "requests.cpu":
		q = c.Resources.Requests[v1.ResourceCPU]
	case "requests.memory":
		q = c.Resources.Requests[v1.ResourceMemory]
	case "requests.ephemeral-storage":
		q = c.Resources.Requests[v1.ResourceEphemeralStorage]
	default:
		return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
	}
	if strings.HasSuffix(fs.Resource, ".cpu") {
		// CPU is converted in millicores and rounded up, with a floor of 1 core's worth.
		v := int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))
		return strconv.FormatInt(v, 10), nil
	}
	v := int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))
	return strconv.FormatInt(v, 10), nil
}

func isTrue(b *bool) bool { return b != nil && *b }
