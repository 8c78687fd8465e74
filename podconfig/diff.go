package podconfig

import (
	"fmt"
	"maps"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// localAnnotations are the annotations the kubelet itself sets. The diff ignores them and an
// update keeps the stored values.
var localAnnotations = [...]string{
	kubecontainer.ConfigSourceAnnotationKey,
	kubecontainer.ConfigMirrorAnnotationKey,
	kubecontainer.ConfigFirstSeenAnnotationKey,
}

func isLocalAnnotation(key string) bool {
	for _, k := range localAnnotations {
		if k == key {
			return true
		}
	}
	return false
}

// outcome is what checkAndUpdate decided for a pod already stored.
type outcome int

const (
	unchanged outcome = iota
	reconcile
	update
	gracefulDelete
)

// updatePods is the kubelet's updatePodsFunc: it diffs the pods of one batch against old and
// stores the result in into (old and into are the same map for ADD, UPDATE and DELETE inputs).
//
// The kubelet stores the caller's object for a new UID and annotates it in place. Storage stores
// the caller's object too, read-only, with its annotations beside it (storedPod), so a new pod
// costs one small record, not a copy.
func (s *Storage) updatePods(source string, batch []*v1.Pod, old, into map[types.UID]*storedPod, c *changes) {
	var seen string // the config.seen value, read from the clock once per batch
	for _, ref := range s.filterDuplicates(source, batch) {
		if existing, ok := old[ref.UID]; ok {
			into[ref.UID] = existing
			if existing.ref == ref {
				continue // the very object compared last time: unchanged, by the sources' contract
			}
			c.note(existing.checkAndUpdate(ref), existing)
			continue
		}
		if seen == "" {
			seen = s.opts.Clock.Now().Format(seenTimeFormat)
		}
		p := &storedPod{ref: ref, seen: seen}
		into[ref.UID] = p
		c.adds = append(c.adds, p)
	}
}

// filterDuplicates is the kubelet's filterInvalidPods: within one batch the first pod with a given
// full name wins; later ones are dropped with a Warning event. Nil entries are skipped (the kubelet
// would crash on them).
//
// The file source sends all its pods again every 20s, so the names are kept in a map of the
// source's, cleared at each call, and keyed without building the full name: a name and a
// namespace without "_" make a full name with exactly one "_", which only that pair makes; the
// rare pod with "_" in either is keyed by its full name, which has two or more.
func (s *Storage) filterDuplicates(source string, batch []*v1.Pod) []*v1.Pod {
	set := s.names[source]
	if set == nil {
		if s.names == nil {
			s.names = map[string]*nameSet{}
		}
		set = &nameSet{}
		s.names[source] = set
	}
	if set.m == nil {
		set.m = make(map[fullNameKey]struct{}, len(batch))
	}
	names := set.m
	defer set.done()
	var dups []int
	for i, p := range batch {
		if p == nil {
			dups = append(dups, i)
			continue
		}
		name := fullNameKey{p.Name, p.Namespace}
		if strings.Contains(p.Name, "_") || strings.Contains(p.Namespace, "_") {
			name = fullNameKey{name: kubecontainer.GetPodFullName(p), namespace: "_"}
		}
		if _, dup := names[name]; dup {
			dups = append(dups, i)
			s.reportDuplicate(source, p)
			continue
		}
		names[name] = struct{}{}
	}
	if len(dups) == 0 {
		return batch
	}
	kept := make([]*v1.Pod, 0, len(batch)-len(dups))
	for i, p := range batch {
		if len(dups) > 0 && dups[0] == i {
			dups = dups[1:]
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// nameSet is one source's filterDuplicates map, and the most names it held since it was made.
type nameSet struct {
	m    map[fullNameKey]struct{}
	peak int
}

// keptNames is how many names a source's map may have held and still be kept whatever the
// batches that follow: a small map is not worth making again.
const keptNames = 64

// done empties the map after a call. A map does not shrink when cleared, so a map that held a
// large batch once (a static pod directory emptied, an api source's first list) would keep that
// batch's room for good: once a call fills a quarter of the most it held or less, it is let go,
// and the next call makes one of its own size. A source whose batches keep their size (the file
// source's relist every 20s) keeps its map.
func (n *nameSet) done() {
	size := len(n.m)
	n.peak = max(n.peak, size)
	if n.peak > keptNames && size*4 <= n.peak {
		n.m, n.peak = nil, 0
		return
	}
	clear(n.m)
}

// fullNameKey stands for a pod's full name in filterDuplicates: its name and namespace when
// neither has "_", else the full name and "_" (which no namespace of the first kind is).
type fullNameKey struct{ name, namespace string }

// reportDuplicate records the kubelet's FailedValidation event for a pod dropped as a duplicate.
func (s *Storage) reportDuplicate(source string, p *v1.Pod) {
	desc := fmt.Sprintf("%s_%s(%s)", p.Name, p.Namespace, p.UID)
	msg := fmt.Sprintf("Error validating pod %s from %s due to duplicate pod name %q, ignoring", desc, source, p.Name)
	s.opts.Tracer.Emit(trace.Event{
		Component: trace.PodConfig,
		Event:     trace.KindError,
		Source:    source,
		Pod:       podkey.Of(p),
		UID:       string(p.UID),
		Reason:    "FailedValidation",
		Message:   msg,
		Func:      "filterInvalidPods",
	})
	if s.opts.Recorder != nil {
		s.opts.Recorder.Eventf(p.DeepCopy(), v1.EventTypeWarning, "FailedValidation",
			"Error validating pod %s from %s due to duplicate pod name %q, ignoring", desc, source, p.Name)
	}
}

// labelsDeepEqual is reflect.DeepEqual for two string maps, without its reflection: nil equals
// only nil, otherwise the same keys with the same values.
func labelsDeepEqual(a, b map[string]string) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}

// int64PtrDeepEqual is reflect.DeepEqual for two *int64: both nil, or both set to the same value.
func int64PtrDeepEqual(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// annotationsEqual reports whether the non-local annotations of existing and ref are the same.
// Indexing a nil map yields nothing, which is how nil counts as empty.
func annotationsEqual(existing, ref map[string]string) bool {
	for k, v := range ref {
		if isLocalAnnotation(k) {
			continue
		}
		if ev, ok := existing[k]; !ok || ev != v {
			return false
		}
	}
	for k := range existing {
		if isLocalAnnotation(k) {
			continue
		}
		if _, ok := ref[k]; !ok {
			return false
		}
	}
	return true
}
