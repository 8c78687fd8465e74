package podconfig

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// oneGoroutineUnderRace is why a test that drives the pure core from the test's goroutine alone,
// and takes tens of seconds under -race, skips there: the race detector needs a second goroutine
// to find anything in this module's code, and the test starts no goroutines of this module (go-cmp
// may start its own); the tests of Config.Run, which start this module's, run under it, and the
// plain suite runs this one.
const oneGoroutineUnderRace = "drives Storage on the test's goroutine, no goroutines of this module for the race detector"

// TestCopiesRandom drives Storage with random sequences of every operation, in every mode, over
// pods whose labels, annotations, spec, status, resource version, deletion and managed fields vary,
// and checks the two promises the sharing between copies rests on: every emitted pod equals the
// stored pod it came from (a real change is never hidden behind a shared part), and no copy
// emitted earlier changes later (no generation writes into another's parts). Snapshot modes,
// a UID sent twice in one SET, a Sync between updates and a UID re-added after a REMOVE are all
// reached, which the hand-written cases do not each cover.
func TestCopiesRandom(t *testing.T) {
	if raceEnabled {
		t.Skip(oneGoroutineUnderRace)
	}
	ts := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 9, 0, time.UTC))
	variant := func(name string, uid types.UID, r *rand.Rand) *v1.Pod {
		p := newPod(name, "ns")
		p.UID = uid
		if r.IntN(2) == 0 {
			p.Labels = map[string]string{"l": fmt.Sprint(r.IntN(2))}
		}
		if r.IntN(3) == 0 {
			p.Annotations = map[string]string{"a": fmt.Sprint(r.IntN(2))}
		}
		if r.IntN(4) == 0 { // a mirror pod's, or the kubelet's own annotations sent back
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[kubecontainer.ConfigMirrorAnnotationKey] = fmt.Sprint("hash", r.IntN(2))
			if r.IntN(2) == 0 {
				p.Annotations[kubecontainer.ConfigFirstSeenAnnotationKey] = "then"
				p.Annotations[kubecontainer.ConfigSourceAnnotationKey] = "elsewhere"
			}
		}
		if r.IntN(2) == 0 {
			p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: fmt.Sprint("Pod", r.IntN(2))}
		}
		if r.IntN(3) == 0 {
			p.OwnerReferences = []metav1.OwnerReference{{Name: fmt.Sprint("owner", r.IntN(2))}}
		}
		p.Spec.Containers[0].Image = fmt.Sprint("img", r.IntN(2))
		p.Status.Message = fmt.Sprint("m", r.IntN(3))
		p.ResourceVersion = fmt.Sprint(r.IntN(100))
		p.Generation = int64(r.IntN(3))
		if r.IntN(6) == 0 {
			deleted := ts
			grace := int64(r.IntN(2))
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &deleted, &grace
		}
		if r.IntN(3) == 0 {
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", FieldsV1: &metav1.FieldsV1{Raw: []byte(fmt.Sprint(`{"x":`, r.IntN(2), `}`))}}}
		}
		return p
	}
	type emitted struct {
		pod, was *v1.Pod
		step     int
	}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		s, _, clk := newStorage(t, Mode(r.IntN(3)))
		var all []emitted
		model := kubeletStorage{}
		lastSet := map[string][]*v1.Pod{}
		for step := range 40 {
			clk.Advance(time.Second) // a config.seen stamped again shows
			now := clk.Now().Format(seenTimeFormat)
			src := []string{"a", "b"}[r.IntN(2)]
			var out []Update
			switch k := r.IntN(10); {
			case k == 0:
				out = []Update{s.Sync()}
			case k == 1 && len(lastSet[src]) > 0: // the same UIDs and names, some objects replaced
				pods := append([]*v1.Pod(nil), lastSet[src]...)
				for i := range pods {
					if r.IntN(2) == 0 {
						pods[i] = variant(pods[i].Name, pods[i].UID, r)
					}
				}
				lastSet[src] = pods
				before := deepCopies(pods)
				out = s.Merge(src, Update{Op: SET, Source: src, Pods: pods})
				if !reflect.DeepEqual(before, pods) { // cmp.Diff only to show a difference
					d := cmp.Diff(before, pods)
					t.Errorf("seed %d step %d: Merge wrote to the source's objects (-before +after):\n%s", seed, step, d)
				}
				model.merge(src, Update{Op: SET, Source: src, Pods: pods}, now)
			default:
				var pods []*v1.Pod
				for range 1 + r.IntN(3) {
					pods = append(pods, variant(fmt.Sprint("p", r.IntN(4)), types.UID(fmt.Sprint("u", r.IntN(3))), r))
				}
				op := []Op{SET, SET, SET, ADD, UPDATE, DELETE, REMOVE}[r.IntN(7)]
				if op == SET {
					lastSet[src] = pods
				}
				before := deepCopies(pods)
				out = s.Merge(src, Update{Op: op, Source: src, Pods: pods})
				if !reflect.DeepEqual(before, pods) { // cmp.Diff only to show a difference
					d := cmp.Diff(before, pods)
					t.Errorf("seed %d step %d: Merge wrote to the source's objects (-before +after):\n%s", seed, step, d)
				}
				model.merge(src, Update{Op: op, Source: src, Pods: pods}, now)
			}
			for _, name := range []string{"a", "b"} {
				got := map[types.UID]*v1.Pod{}
				for uid := range s.pods[name] {
					got[uid] = storedView(s, name, uid)
				}
				want := model[name]
				if want == nil {
					want = map[types.UID]*v1.Pod{}
				}
				if reflect.DeepEqual(want, got) {
					continue // cmp.Diff alone would make the test several times slower
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("seed %d step %d: source %s's stored pods differ from the kubelet's (-kubelet +stored):\n%s", seed, step, name, d)
				}
			}
			for _, u := range out {
				for _, p := range u.Pods {
					all = append(all, emitted{pod: p, was: p.DeepCopy(), step: step})
					if u.Op == REMOVE {
						continue
					}
					from := u.Source
					if u.Op == SET { // a snapshot carries every source's pods: find the one source
						n := 0
						for name, pods := range s.pods {
							if _, ok := pods[p.UID]; ok {
								from, n = name, n+1
							}
						}
						if n != 1 {
							continue
						}
					}
					if stored := storedView(s, from, p.UID); stored != nil && stored.Name == p.Name {
						if d := cmp.Diff(stored, p); d != "" {
							t.Errorf("seed %d step %d %v: the emitted copy differs from the stored pod (-stored +emitted):\n%s", seed, step, u.Op, d)
						}
					}
				}
			}
		}
		for _, e := range all {
			if d := cmp.Diff(e.was, e.pod); d != "" {
				t.Errorf("seed %d: a copy emitted at step %d changed later (-then +now):\n%s", seed, e.step, d)
			}
		}
	}
}

// kubeletStorage is the v1.35 kubelet's podStorage as it keeps pods, written out plainly to check
// Storage's stored pods against: it stores each source's object for a new UID (here a deep copy,
// since the kubelet writes into the object it stores and into the one it compares) and annotates
// it, and checkAndUpdatePod assigns a newer object's fields to it.
type kubeletStorage map[string]map[types.UID]*v1.Pod

// merge applies u from source as the kubelet's merge does, seen being the first-seen time.
func (k kubeletStorage) merge(source string, u Update, seen string) {
	pods := k[source]
	if pods == nil {
		pods = map[types.UID]*v1.Pod{}
	}
	update := func(old, into map[types.UID]*v1.Pod) {
		names := map[string]bool{}
		for _, in := range u.Pods {
			if in == nil || names[kubecontainer.GetPodFullName(in)] {
				continue // filterInvalidPods
			}
			names[kubecontainer.GetPodFullName(in)] = true
			ref := in.DeepCopy()
			if ref.Annotations == nil {
				ref.Annotations = map[string]string{}
			}
			ref.Annotations[kubecontainer.ConfigSourceAnnotationKey] = source
			if existing, ok := old[ref.UID]; ok {
				into[ref.UID] = existing
				kubeletCheckAndUpdatePod(existing, ref)
				continue
			}
			ref.Annotations[kubecontainer.ConfigFirstSeenAnnotationKey] = seen
			into[ref.UID] = ref
		}
	}
	switch u.Op {
	case ADD, UPDATE, DELETE:
		update(pods, pods)
	case REMOVE:
		for _, ref := range u.Pods {
			if ref != nil {
				delete(pods, ref.UID)
			}
		}
	case SET:
		old := pods
		pods = map[types.UID]*v1.Pod{}
		update(old, pods)
	}
	k[source] = pods
}

// kubeletCheckAndUpdatePod is the kubelet's checkAndUpdatePod and updateAnnotations, without the
// outcome, which the other tests check.
func kubeletCheckAndUpdatePod(existing, ref *v1.Pod) {
	if !reflect.DeepEqual(existing.Spec, ref.Spec) || !reflect.DeepEqual(existing.Labels, ref.Labels) ||
		!reflect.DeepEqual(existing.DeletionTimestamp, ref.DeletionTimestamp) ||
		!reflect.DeepEqual(existing.DeletionGracePeriodSeconds, ref.DeletionGracePeriodSeconds) ||
		!annotationsEqual(existing.Annotations, ref.Annotations) {
		ref.Annotations[kubecontainer.ConfigFirstSeenAnnotationKey] = existing.Annotations[kubecontainer.ConfigFirstSeenAnnotationKey]
		existing.Spec = ref.Spec
		existing.Labels = ref.Labels
		existing.DeletionTimestamp = ref.DeletionTimestamp
		existing.DeletionGracePeriodSeconds = ref.DeletionGracePeriodSeconds
		existing.Generation = ref.Generation
		existing.Status = ref.Status
		annotations := make(map[string]string, len(ref.Annotations))
		maps.Copy(annotations, ref.Annotations)
		for _, key := range localAnnotations {
			if v, ok := existing.Annotations[key]; ok {
				annotations[key] = v
			}
		}
		existing.Annotations = annotations
		return
	}
	if !reflect.DeepEqual(existing.Status, ref.Status) {
		existing.Status = ref.Status
	}
}

// deepCopies returns a deep copy of each pod, to check later that nobody wrote to them.
func deepCopies(pods []*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
