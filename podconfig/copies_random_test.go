package podconfig

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
		s, _, _ := newStorage(t, Mode(r.IntN(3)))
		var all []emitted
		lastSet := map[string][]*v1.Pod{}
		for step := range 40 {
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
				out = s.Merge(src, Update{Op: SET, Source: src, Pods: pods})
			default:
				var pods []*v1.Pod
				for range 1 + r.IntN(3) {
					pods = append(pods, variant(fmt.Sprint("p", r.IntN(4)), types.UID(fmt.Sprint("u", r.IntN(3))), r))
				}
				op := []Op{SET, SET, SET, ADD, UPDATE, DELETE, REMOVE}[r.IntN(7)]
				if op == SET {
					lastSet[src] = pods
				}
				out = s.Merge(src, Update{Op: op, Source: src, Pods: pods})
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
					if stored, ok := s.pods[from][p.UID]; ok && stored.Name == p.Name {
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
