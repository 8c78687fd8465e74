package podmanager

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Options configures a Manager.
type Options struct {
	// Tracer receives an event for each pod added, updated or removed. Required; pass
	// trace.Discard for none.
	Tracer trace.Tracer
}

// validate reports the missing required options, wrapping ErrMissingOption.
func (o Options) validate() error {
	if o.Tracer == nil {
		return fmt.Errorf("options Tracer: %w", minikubelet.ErrMissingOption)
	}
	return nil
}

// Manager is the desired pod set: the kubelet's basicManager. Regular and static pods are keyed by
// their UID and full name; mirror pods are kept apart, keyed the same way, and linked to the static
// pod with the same full name.
//
// Manager is a core: it is driven by one goroutine and is not safe for concurrent use.
type Manager struct {
	tracer trace.Tracer

	// podByUID and podByFullName hold regular and static pods.
	podByUID      map[types.UID]*v1.Pod
	podByFullName map[string]*v1.Pod
	// mirrorByUID and mirrorByFullName hold mirror pods.
	mirrorByUID      map[types.UID]*v1.Pod
	mirrorByFullName map[string]*v1.Pod
	// translation maps a mirror pod's UID to its static pod's UID. It outlives the static pod and
	// goes only when the mirror pod is removed, as in the kubelet.
	translation map[types.UID]types.UID
	// pods and mirrors cache the sorted values of podByUID and mirrorByUID; nil after a change.
	// The sync loop lists the pods at every 1s sync tick and housekeeping every 2s.
	pods, mirrors []*v1.Pod
	// onChange are told the UID of every regular or static pod stored or removed.
	onChange []func(types.UID)
	// version grows with every pod or mirror pod stored or removed (Version).
	version uint64
}

// OnChange registers fn to be called, on the Manager's goroutine, with the UID of every regular or
// static pod added, replaced or removed, after the change. It is how admission keeps its counts of
// the active pods without walking them all for every new pod. Register before the first change.
func (m *Manager) OnChange(fn func(uid types.UID)) {
	m.onChange = append(m.onChange, fn)
}

// Version returns a number that grows with every pod or mirror pod stored, replaced or removed.
// Two calls that return the same number have, between them, the same pods, mirror pods and UID
// translations: housekeeping skips the pass's work when it proves nothing changed.
func (m *Manager) Version() uint64 { return m.version }

// changed tells the OnChange functions of a change to the pod with uid.
func (m *Manager) changed(uid types.UID) {
	for _, fn := range m.onChange {
		fn(uid)
	}
}

// New returns an empty Manager. A missing required option is an error wrapping ErrMissingOption.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new pod manager: %w", err)
	}
	m := &Manager{tracer: opts.Tracer}
	m.reset()
	return m, nil
}

func (m *Manager) reset() {
	m.version++
	m.podByUID = map[types.UID]*v1.Pod{}
	m.podByFullName = map[string]*v1.Pod{}
	m.mirrorByUID = map[types.UID]*v1.Pod{}
	m.mirrorByFullName = map[string]*v1.Pod{}
	m.translation = map[types.UID]types.UID{}
}

// SetPods replaces the whole set with pods. It emits no trace event: it is for start-up and tests,
// not for config changes.
func (m *Manager) SetPods(pods []*v1.Pod) {
	old := m.podByUID
	m.reset()
	for uid := range old {
		m.changed(uid)
	}
	for _, pod := range pods {
		m.store(pod)
	}
}

// AddPod adds pod, or replaces the pod with its UID.
func (m *Manager) AddPod(pod *v1.Pod) { m.upsert(pod, trace.KindAdd, "AddPod") }

// UpdatePod replaces the pod with pod's UID, or adds it. It is the same operation as AddPod.
func (m *Manager) UpdatePod(pod *v1.Pod) { m.upsert(pod, trace.KindUpdate, "UpdatePod") }

// upsert keeps pod itself, read-only, as the kubelet's pod manager keeps the pointers it is given.
// The trace's key and the maps' full name are two views of one string: one allocation.
func (m *Manager) upsert(pod *v1.Pod, event trace.Kind, fn string) {
	key, fullname := kubecontainer.KeyAndFullName(pod.Namespace, pod.Name)
	m.storeAs(pod, fullname)
	m.emitAs(pod, key, event, fn)
}

// store files pod under its maps and records the mirror translation if both halves are present.
func (m *Manager) store(pod *v1.Pod) {
	m.storeAs(pod, kubecontainer.GetPodFullName(pod))
}

// storeAs is store with pod's full name.
func (m *Manager) storeAs(pod *v1.Pod, fullname string) {
	m.version++
	if kubecontainer.IsMirrorPod(pod) {
		m.mirrorByUID[pod.UID] = pod
		m.mirrorByFullName[fullname] = pod
		m.mirrors = nil
		if static, ok := m.podByFullName[fullname]; ok {
			m.translation[pod.UID] = static.UID
		}
		return
	}
	m.podByUID[pod.UID] = pod
	m.podByFullName[fullname] = pod
	m.pods = nil
	if mirror, ok := m.mirrorByFullName[fullname]; ok {
		m.translation[mirror.UID] = pod.UID
	}
	m.changed(pod.UID)
}

// RemovePod removes pod by its UID and full name. Removing a mirror pod also drops its UID
// translation; removing a static pod leaves its mirror pod, now orphaned, in place.
func (m *Manager) RemovePod(pod *v1.Pod) {
	m.version++
	fullname := kubecontainer.GetPodFullName(pod)
	if kubecontainer.IsMirrorPod(pod) {
		delete(m.mirrorByUID, pod.UID)
		delete(m.mirrorByFullName, fullname)
		delete(m.translation, pod.UID)
		m.mirrors = nil
	} else {
		delete(m.podByUID, pod.UID)
		delete(m.podByFullName, fullname)
		m.pods = nil
		m.changed(pod.UID)
	}
	m.emit(pod, trace.KindRemove, "RemovePod")
}

// emit traces a change to pod, with the kind of pod as the reason.
func (m *Manager) emit(pod *v1.Pod, event trace.Kind, fn string) {
	m.emitAs(pod, podkey.Of(pod), event, fn)
}

// emitAs is emit with pod's key.
func (m *Manager) emitAs(pod *v1.Pod, key string, event trace.Kind, fn string) {
	reason := ""
	switch {
	case kubecontainer.IsMirrorPod(pod):
		reason = "mirror"
	case kubecontainer.IsStaticPod(pod):
		reason = "static"
	}
	m.tracer.Emit(trace.Event{Component: trace.PodManager, Event: event, Pod: key,
		UID: string(pod.UID), Reason: reason, Func: fn})
}

// GetPods returns every regular and static pod, without mirror pods, sorted by namespace and name.
// The slice is shared with later callers until the pods change: the caller must not change it. The
// sync loop reads it at every sync tick and housekeeping every 2s, and a copy each time was most of
// what an idle node allocated.
func (m *Manager) GetPods() []*v1.Pod {
	return m.sortedPods()
}

// AllPods yields the regular and static pods in no order, without the copy and sort of GetPods:
// admission walks the active pods for every new pod.
func (m *Manager) AllPods() iter.Seq[*v1.Pod] {
	return func(yield func(*v1.Pod) bool) {
		for _, pod := range m.podByUID {
			if !yield(pod) {
				return
			}
		}
	}
}

// GetPodsAndMirrorPods returns the regular and static pods, the mirror pods (both sorted by
// namespace and name), and the sorted full names of mirror pods with no pod of the same full name:
// the orphaned mirror pods housekeeping deletes. The pod slices are shared as GetPods' is.
func (m *Manager) GetPodsAndMirrorPods() (pods, mirrorPods []*v1.Pod, orphanedMirrorFullnames []string) {
	for fullname := range m.mirrorByFullName {
		if _, ok := m.podByFullName[fullname]; !ok {
			orphanedMirrorFullnames = append(orphanedMirrorFullnames, fullname)
		}
	}
	slices.Sort(orphanedMirrorFullnames)
	if m.mirrors == nil {
		m.mirrors = sorted(m.mirrorByUID)
	}
	return m.sortedPods(), m.mirrors, orphanedMirrorFullnames
}

// GetPodByFullName returns the regular or static pod with the full name "<name>_<namespace>".
func (m *Manager) GetPodByFullName(fullname string) (*v1.Pod, bool) {
	return lookup(m.podByFullName, fullname)
}

// GetPodByName returns the regular or static pod with the namespace and name.
func (m *Manager) GetPodByName(namespace, name string) (*v1.Pod, bool) {
	return m.GetPodByFullName(kubecontainer.BuildPodFullName(name, namespace))
}

// GetPodByUID returns the regular or static pod with uid. A mirror pod's UID finds nothing;
// translate it with TranslatePodUID first.
func (m *Manager) GetPodByUID(uid types.UID) (*v1.Pod, bool) {
	return lookup(m.podByUID, uid)
}

// GetMirrorPodByPod returns the mirror pod with pod's full name.
func (m *Manager) GetMirrorPodByPod(pod *v1.Pod) (*v1.Pod, bool) {
	return lookup(m.mirrorByFullName, kubecontainer.GetPodFullName(pod))
}

// GetPodByMirrorPod returns the static pod with the mirror pod's full name.
func (m *Manager) GetPodByMirrorPod(mirror *v1.Pod) (*v1.Pod, bool) {
	return m.GetPodByFullName(kubecontainer.GetPodFullName(mirror))
}

// GetPodAndMirrorPod resolves pod as the pod handlers do. For a mirror pod it returns the static
// pod with its full name (or nil), pod itself, and wasMirror = true; for any other pod it returns
// pod itself, the mirror pod with its full name (or nil), and false.
func (m *Manager) GetPodAndMirrorPod(pod *v1.Pod) (resolved, mirror *v1.Pod, wasMirror bool) {
	fullname := kubecontainer.GetPodFullName(pod)
	if kubecontainer.IsMirrorPod(pod) {
		static, _ := lookup(m.podByFullName, fullname)
		return static, pod, true
	}
	mirror, _ = lookup(m.mirrorByFullName, fullname)
	return pod, mirror, false
}

// TranslatePodUID returns the static pod's UID for a mirror pod's UID, and any other UID,
// including "", unchanged.
func (m *Manager) TranslatePodUID(uid types.UID) types.UID {
	if uid == "" {
		return uid
	}
	if static, ok := m.translation[uid]; ok {
		return static
	}
	return uid
}

// MirrorTranslations returns a copy of TranslatePodUID's table: every mirror pod UID it
// translates, with its static pod's UID; nil when there is none.
func (m *Manager) MirrorTranslations() map[types.UID]types.UID {
	if len(m.translation) == 0 {
		return nil
	}
	return maps.Clone(m.translation)
}

// GetUIDTranslations returns the static-to-mirror and mirror-to-static UID maps. Every static pod
// appears in the first, mapped to "" when it has no mirror pod.
func (m *Manager) GetUIDTranslations() (podToMirror, mirrorToPod map[types.UID]types.UID) {
	podToMirror = make(map[types.UID]types.UID, len(m.translation))
	mirrorToPod = make(map[types.UID]types.UID, len(m.translation))
	for uid, pod := range m.podByUID {
		if kubecontainer.IsStaticPod(pod) {
			podToMirror[uid] = ""
		}
	}
	for mirrorUID, staticUID := range m.translation {
		mirrorToPod[mirrorUID] = staticUID
		podToMirror[staticUID] = mirrorUID
	}
	return podToMirror, mirrorToPod
}

// GetStaticPodToMirrorPodMap maps each static pod to its mirror pod, or to nil when it has none.
func (m *Manager) GetStaticPodToMirrorPodMap() map[*v1.Pod]*v1.Pod {
	out := map[*v1.Pod]*v1.Pod{}
	for _, pod := range m.podByUID {
		if kubecontainer.IsStaticPod(pod) {
			mirror, _ := lookup(m.mirrorByFullName, kubecontainer.GetPodFullName(pod))
			out[pod] = mirror
		}
	}
	return out
}

// IsMirrorPodOf reports whether mirror is the mirror pod of pod: same name and namespace, and a
// kubernetes.io/config.mirror annotation equal to pod's kubernetes.io/config.hash. A mirror pod
// left over from an earlier version of the static pod fails the hash check.
func IsMirrorPodOf(mirror, pod *v1.Pod) bool {
	if pod.Name != mirror.Name || pod.Namespace != mirror.Namespace {
		return false
	}
	hash, ok := mirror.Annotations[kubecontainer.ConfigMirrorAnnotationKey]
	if !ok {
		return false
	}
	return hash == pod.Annotations[kubecontainer.ConfigHashAnnotationKey]
}

// lookup returns the stored pod under key.
func lookup[K comparable](m map[K]*v1.Pod, key K) (*v1.Pod, bool) {
	pod, ok := m[key]
	return pod, ok
}

// sortedPods returns the sorted regular and static pods, from the cache when it is fresh. The
// cache is replaced after a change, never changed in place, so a slice handed out stays valid.
func (m *Manager) sortedPods() []*v1.Pod {
	if m.pods == nil {
		m.pods = sorted(m.podByUID)
	}
	return m.pods
}

// sorted returns the map's pods sorted by namespace, then name, then UID.
func sorted(m map[types.UID]*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(m))
	for _, pod := range m {
		out = append(out, pod)
	}
	slices.SortFunc(out, func(a, b *v1.Pod) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(string(a.UID), string(b.UID))
	})
	return out
}
