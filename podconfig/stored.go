package podconfig

import (
	"maps"
	"reflect"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// storedPod is what Storage keeps of one pod of a source: the kubelet's stored object, which is
// the first object the source sent for the UID, annotated in place, that checkAndUpdatePod then
// gives fields of each newer object. Storage writes into no source's object, and copying one to
// annotate it would hold a second Pod for each pod, so it keeps the object the source sent last
// and, beside it, what the kubelet's object has that this one has not:
//
//   - the spec, the labels and the status are always ref's: an update assigns them, and when
//     nothing but the status changed they are deeply equal to what was stored (the kubelet keeps
//     its first object's there; keeping the newest lets the older object go);
//   - the rest of the metadata and the type are ref's until the source sends another object for
//     the UID, then meta's: the first object's, with the deletion fields, the generation and the
//     annotations of the object of the last semantic change;
//   - the annotations are those (ref's or meta's), with PodConfig's own over them: the source, the
//     first-seen time, and a mirror annotation the stored pod had before a semantic change, which
//     the kubelet carries over (mergeAnnotations).
//
// The stored pod as the kubelet would hold it is never built: its readers (the diff and the
// copies a merge emits) read these parts where they are.
type storedPod struct {
	// ref is the object the source sent last for the UID. A source never edits an object it
	// sent (it replaces it), so receiving the same object again means nothing changed and the
	// comparison can be skipped: the file source re-sends every pod every 20s.
	ref *v1.Pod
	// meta is nil while ref is the first object sent for the UID.
	meta *keptMeta
	// seen is the kubernetes.io/config.seen annotation.
	seen string
	// mirror is the kubernetes.io/config.mirror annotation kept over the one of the annotations
	// underneath, when hasMirror.
	mirror    string
	hasMirror bool
	// copy is the copy last emitted of the pod, while the stored metadata and spec are still the
	// ones copied: a semantic difference (update, gracefulDelete) drops it. A later copy shares
	// copy's metadata and spec instead of copying them again (Storage.copyOut).
	copy *v1.Pod
}

// keptMeta is the type and metadata of a stored pod once the source sent a second object for it.
// Its Labels are unused (the stored pod's are ref's) and nil, so that it holds no older map.
type keptMeta struct {
	typ  metav1.TypeMeta
	meta metav1.ObjectMeta
}

// objectMeta returns the stored pod's metadata but for the labels (ref's) and PodConfig's own
// annotations. It points into the stored pod or the source's object: read only.
func (p *storedPod) objectMeta() *metav1.ObjectMeta {
	if p.meta != nil {
		return &p.meta.meta
	}
	return &p.ref.ObjectMeta
}

// typeMeta returns the stored pod's type: the first object's.
func (p *storedPod) typeMeta() metav1.TypeMeta {
	if p.meta != nil {
		return p.meta.typ
	}
	return p.ref.TypeMeta
}

// annotations returns a new map of the stored pod's annotations, as the kubelet's object of
// source carries them.
func (p *storedPod) annotations(source string) map[string]string {
	under := p.objectMeta().Annotations
	out := make(map[string]string, len(under)+2)
	maps.Copy(out, under)
	out[kubecontainer.ConfigSourceAnnotationKey] = source
	out[kubecontainer.ConfigFirstSeenAnnotationKey] = p.seen
	if p.hasMirror {
		out[kubecontainer.ConfigMirrorAnnotationKey] = p.mirror
	}
	return out
}

// keep takes the metadata and type of ref, the object about to be replaced, into meta when they
// are still ref's.
func (p *storedPod) keep() {
	if p.meta != nil {
		return
	}
	p.meta = &keptMeta{typ: p.ref.TypeMeta, meta: p.ref.ObjectMeta}
	p.meta.meta.Labels = nil
}

// differ is the kubelet's podsDifferSemantically between the stored pod and ref. Spec, labels
// and the deletion fields use reflect.DeepEqual, so nil and empty differ; annotations ignore the
// local keys and treat nil as empty. Everything else in the metadata (and the status) is not
// compared. Spec and status are compared through pointers, which DeepEqual treats exactly like
// the values but without boxing a copy of each struct.
func (p *storedPod) differ(ref *v1.Pod) bool {
	meta := p.objectMeta()
	return !reflect.DeepEqual(&p.ref.Spec, &ref.Spec) ||
		!labelsDeepEqual(p.ref.Labels, ref.Labels) ||
		!reflect.DeepEqual(meta.DeletionTimestamp, ref.DeletionTimestamp) ||
		!int64PtrDeepEqual(meta.DeletionGracePeriodSeconds, ref.DeletionGracePeriodSeconds) ||
		!annotationsEqual(meta.Annotations, ref.Annotations)
}

// checkAndUpdate is the kubelet's checkAndUpdatePod: ref, a new object for the stored pod, is
// compared with it and takes its place, shared read-only as the kubelet shares the fields it
// assigns; nothing is written to ref or inside a shared field:
//   - no semantic difference, same status: unchanged;
//   - no semantic difference, new status: reconcile; the status is ref's;
//   - a semantic difference: the deletion fields, the generation and the annotations are taken
//     over as well (the local annotations the stored pod has are kept), then gracefulDelete if
//     ref carries a deletion timestamp, update otherwise. A status change alongside it is not
//     reported again.
//
// In every case the stored pod's spec, labels and status are ref's from now on.
func (p *storedPod) checkAndUpdate(ref *v1.Pod) outcome {
	if !p.differ(ref) {
		same := reflect.DeepEqual(&p.ref.Status, &ref.Status)
		p.keep()
		p.ref = ref
		if same {
			return unchanged
		}
		return reconcile
	}
	p.keep()
	meta := &p.meta.meta
	if v, ok := meta.Annotations[kubecontainer.ConfigMirrorAnnotationKey]; ok && !p.hasMirror {
		// The stored pod's mirror annotation, which was the one of the annotations underneath,
		// wins over ref's (mergeAnnotations).
		p.mirror, p.hasMirror = v, true
	}
	meta.DeletionTimestamp = ref.DeletionTimestamp
	meta.DeletionGracePeriodSeconds = ref.DeletionGracePeriodSeconds
	meta.Generation = ref.Generation
	meta.Annotations = ref.Annotations
	p.ref = ref
	p.copy = nil
	if ref.DeletionTimestamp != nil {
		return gracefulDelete
	}
	return update
}

// deepCopy returns the stored pod as the kubelet's object of source would be, deep-copied (the
// kubelet's copyPods), but for the managed fields' encodings (FieldsV1), which the copy shares
// with the source's object. They are the largest part of a pod's metadata that the sync side
// never reads but to show it (the kubelet server's /pods), nobody writes one in place (a write
// makes a new encoding), and the api source interns them, so the pods of one template share one
// encoding of their creator's entry: a copy of each would give every pod its own again.
func (p *storedPod) deepCopy(source string) *v1.Pod {
	out := &v1.Pod{TypeMeta: p.typeMeta()}
	meta := *p.objectMeta() // a shallow copy, so that nothing shared is written to
	meta.Labels = p.ref.Labels
	meta.Annotations = nil
	meta.ManagedFields = nil
	meta.DeepCopyInto(&out.ObjectMeta)
	out.Annotations = p.annotations(source)
	if managed := p.objectMeta().ManagedFields; managed != nil {
		out.ManagedFields = make([]metav1.ManagedFieldsEntry, len(managed))
		for i, f := range managed {
			out.ManagedFields[i] = f
			if f.Time != nil {
				out.ManagedFields[i].Time = f.Time.DeepCopy()
			}
		}
	}
	p.ref.Spec.DeepCopyInto(&out.Spec)
	p.ref.Status.DeepCopyInto(&out.Status)
	return out
}
