package objects

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
)

// Manager is the kubelet's watch-based manager of one kind: the pods that reference each object,
// and the watches that keep those objects.
type Manager struct {
	kind   Kind
	source Source
	// pods are the registered pods and the names each referenced when it registered.
	pods map[types.UID][]string
	// refs counts, per namespace/name, the registered pods that reference it.
	refs map[Key]int
	// frozen keeps the objects found immutable, whose watches were stopped.
	frozen map[Key]runtime.Object
}

// New returns a Manager of kind whose watches are source's.
func New(kind Kind, source Source) (*Manager, error) {
	if source == nil {
		return nil, fmt.Errorf("new %s manager: option Source: %w", kind, minikubelet.ErrMissingOption)
	}
	if kind != ConfigMaps && kind != Secrets {
		return nil, fmt.Errorf("new object manager: unknown %v", kind)
	}
	return &Manager{kind: kind, source: source, pods: map[types.UID][]string{}, refs: map[Key]int{}, frozen: map[Key]runtime.Object{}}, nil
}

// RegisterPod records what pod references now, as the cache-based manager's RegisterPod: a pod
// registered again gains a reference to what its spec newly names, then loses those to what it
// no longer names.
func (m *Manager) RegisterPod(pod *v1.Pod) {
	names := m.names(pod)
	prev, known := m.pods[pod.UID]
	m.pods[pod.UID] = names
	for _, name := range names {
		if !known || !slices.Contains(prev, name) {
			m.addRef(Key{m.kind, pod.Namespace, name})
		}
	}
	for _, name := range prev {
		if !slices.Contains(names, name) {
			m.deleteRef(Key{m.kind, pod.Namespace, name})
		}
	}
}

// UnregisterPod drops pod's references; the last reference to an object stops its watch.
func (m *Manager) UnregisterPod(pod *v1.Pod) {
	names, ok := m.pods[pod.UID]
	if !ok {
		return
	}
	delete(m.pods, pod.UID)
	for _, name := range names {
		m.deleteRef(Key{m.kind, pod.Namespace, name})
	}
}

func (m *Manager) addRef(k Key) {
	m.refs[k]++
	if m.refs[k] == 1 {
		m.source.Watch(k)
	}
}

func (m *Manager) deleteRef(k Key) {
	m.refs[k]--
	if m.refs[k] > 0 {
		return
	}
	delete(m.refs, k)
	if _, ok := m.frozen[k]; ok {
		delete(m.frozen, k) // its watch was stopped when it was found immutable
		return
	}
	m.source.Stop(k)
}

// Get returns the object as the kubelet's watch-based cache answers: not registered, not
// synced, not found, or the object.
func (m *Manager) Get(namespace, name string) (runtime.Object, error) {
	k := Key{m.kind, namespace, name}
	if _, ok := m.refs[k]; !ok {
		return nil, fmt.Errorf("object %q/%q not registered", namespace, name)
	}
	if obj, ok := m.frozen[k]; ok {
		return obj, nil
	}
	obj, synced := m.source.Get(k)
	if !synced {
		return nil, fmt.Errorf("failed to sync %s cache: %w", m.kind.groupResource().String(), errTimedOut)
	}
	if obj == nil {
		return nil, apierrors.NewNotFound(m.kind.groupResource(), name)
	}
	if immutable(obj) {
		// The kubelet stops watching an immutable object and keeps serving it.
		m.frozen[k] = obj
		m.source.Stop(k)
	}
	return obj, nil
}

// errTimedOut is wait.ErrWaitTimeout's message, which the cache's wait for its first list
// fails with.
var errTimedOut = errors.New("timed out waiting for the condition")

// GetConfigMap is the ConfigMap manager's GetConfigMap.
func (m *Manager) GetConfigMap(namespace, name string) (*v1.ConfigMap, error) {
	obj, err := m.Get(namespace, name)
	if err != nil {
		return nil, err
	}
	cm, ok := obj.(*v1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %T", obj)
	}
	return cm, nil
}

// GetSecret is the Secret manager's GetSecret.
func (m *Manager) GetSecret(namespace, name string) (*v1.Secret, error) {
	obj, err := m.Get(namespace, name)
	if err != nil {
		return nil, err
	}
	s, ok := obj.(*v1.Secret)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %T", obj)
	}
	return s, nil
}

// Watched lists the objects being watched, sorted, for tests and the trace of a driver.
func (m *Manager) Watched() []Key {
	var out []Key
	for k := range m.refs {
		if _, ok := m.frozen[k]; !ok {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b Key) int {
		if a.Namespace != b.Namespace {
			return cmpString(a.Namespace, b.Namespace)
		}
		return cmpString(a.Name, b.Name)
	})
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// names lists what pod references of the manager's kind, each once.
func (m *Manager) names(pod *v1.Pod) []string {
	var names []string
	add := func(name string) {
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if m.kind == Secrets {
		for _, ref := range pod.Spec.ImagePullSecrets {
			add(ref.Name)
		}
	}
	visit := func(c *v1.Container) {
		for _, from := range c.EnvFrom {
			switch {
			case m.kind == ConfigMaps && from.ConfigMapRef != nil:
				add(from.ConfigMapRef.Name)
			case m.kind == Secrets && from.SecretRef != nil:
				add(from.SecretRef.Name)
			}
		}
		for _, env := range c.Env {
			if env.ValueFrom == nil {
				continue
			}
			switch {
			case m.kind == ConfigMaps && env.ValueFrom.ConfigMapKeyRef != nil:
				add(env.ValueFrom.ConfigMapKeyRef.Name)
			case m.kind == Secrets && env.ValueFrom.SecretKeyRef != nil:
				add(env.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		visit(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		visit((*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	for _, vol := range pod.Spec.Volumes {
		src := vol.VolumeSource
		switch {
		case src.Projected != nil:
			for _, p := range src.Projected.Sources {
				switch {
				case m.kind == ConfigMaps && p.ConfigMap != nil:
					add(p.ConfigMap.Name)
				case m.kind == Secrets && p.Secret != nil:
					add(p.Secret.Name)
				}
			}
		case m.kind == ConfigMaps && src.ConfigMap != nil:
			add(src.ConfigMap.Name)
		case m.kind == Secrets && src.Secret != nil:
			add(src.Secret.SecretName)
		case m.kind == Secrets:
			add(volumeSecretRef(src))
		}
	}
	return names
}

// volumeSecretRef is the secret a network or CSI volume names for its credentials, which the
// secret manager registers too (VisitPodSecretNames).
func volumeSecretRef(src v1.VolumeSource) string {
	switch {
	case src.AzureFile != nil:
		return src.AzureFile.SecretName
	case src.CephFS != nil && src.CephFS.SecretRef != nil:
		return src.CephFS.SecretRef.Name
	case src.Cinder != nil && src.Cinder.SecretRef != nil:
		return src.Cinder.SecretRef.Name
	case src.FlexVolume != nil && src.FlexVolume.SecretRef != nil:
		return src.FlexVolume.SecretRef.Name
	case src.RBD != nil && src.RBD.SecretRef != nil:
		return src.RBD.SecretRef.Name
	case src.ScaleIO != nil && src.ScaleIO.SecretRef != nil:
		return src.ScaleIO.SecretRef.Name
	case src.ISCSI != nil && src.ISCSI.SecretRef != nil:
		return src.ISCSI.SecretRef.Name
	case src.StorageOS != nil && src.StorageOS.SecretRef != nil:
		return src.StorageOS.SecretRef.Name
	case src.CSI != nil && src.CSI.NodePublishSecretRef != nil:
		return src.CSI.NodePublishSecretRef.Name
	}
	return ""
}
