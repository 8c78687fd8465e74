package status

import (
	"math/rand"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/randfill"
)

// samePatch fails t unless statusPatch and the kubelet's way through the JSON text give the same
// bytes, the same unchanged and the same error for old and next.
func samePatch(t *testing.T, uid types.UID, old, next v1.PodStatus) {
	t.Helper()
	want, wantUnchanged, wantErr := statusPatchJSON(uid, old, next)
	got, gotUnchanged, gotErr := statusPatch(uid, old, next)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("statusPatch error = %v, the kubelet's way %v", gotErr, wantErr)
	}
	if string(got) != string(want) || gotUnchanged != wantUnchanged {
		t.Errorf("statusPatch = %s, %v\nthe kubelet's way %s, %v", got, gotUnchanged, want, wantUnchanged)
	}
}

// TestStatusPatchAsTheKubelet checks statusPatch against the JSON text's way on the writes a pod's
// life makes and on what the JSON text changes: times below the second, quantities written
// another way, empty lists, and strings that are not valid UTF-8.
func TestStatusPatchAsTheKubelet(t *testing.T) {
	pod := apiPod("web", "uid-web")
	pending := pod.Status
	running := cachedRunning(t)
	for _, tc := range []struct {
		name      string
		old       v1.PodStatus
		change    func(s *v1.PodStatus)
		unchanged bool
	}{
		{"the first status", pending, func(*v1.PodStatus) {}, false},
		{"the same status", running, func(*v1.PodStatus) {}, true},
		{"a condition's status", running, func(s *v1.PodStatus) {
			s.Conditions[0].Status = v1.ConditionFalse
			s.Conditions[0].Reason, s.Conditions[0].Message = "ContainersNotReady", "containers with unready status: [a]"
		}, false},
		{"a condition removed and one added", running, func(s *v1.PodStatus) {
			s.Conditions = append(s.Conditions[1:], v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
		}, false},
		{"the conditions reordered", running, func(s *v1.PodStatus) {
			s.Conditions[0], s.Conditions[1] = s.Conditions[1], s.Conditions[0]
		}, false},
		{"a time below the second", running, func(s *v1.PodStatus) {
			s.StartTime = &metav1.Time{Time: s.StartTime.Add(300 * time.Millisecond)}
		}, true},
		{"a time in another location", running, func(s *v1.PodStatus) {
			s.StartTime = &metav1.Time{Time: s.StartTime.In(time.FixedZone("x", 3600))}
		}, true},
		{"a quantity written another way", running, func(s *v1.PodStatus) {
			s.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("0.1")}
		}, true},
		{"an empty list for none", running, func(s *v1.PodStatus) { s.InitContainerStatuses = []v1.ContainerStatus{} }, true},
		{"terminated, with a message", running, func(s *v1.PodStatus) {
			s.Phase = v1.PodFailed
			s.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", Message: "a <b> & \"c\"\n", FinishedAt: metav1.NewTime(time.Unix(2000, 0))}}
		}, false},
		{"a message cut inside a rune", running, func(s *v1.PodStatus) { s.Message = "caf\xc3" }, false},
		{"two bad bytes that the text makes equal", func() v1.PodStatus {
			s := *running.DeepCopy()
			s.Message = "x\xff"
			return s
		}(), func(s *v1.PodStatus) { s.Message = "x\xfe" }, true},
		{"a resource name that is not valid UTF-8", running, func(s *v1.PodStatus) {
			s.ContainerStatuses[0].AllocatedResources = v1.ResourceList{"example.com/\xff": resource.MustParse("1")}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := *running.DeepCopy()
			tc.change(&next)
			samePatch(t, "uid-web", tc.old, next)
			if _, unchanged, _ := statusPatch("uid-web", tc.old, next); unchanged != tc.unchanged {
				t.Errorf("unchanged = %v, want %v", unchanged, tc.unchanged)
			}
		})
	}
}

// randomStatuses fills two pod statuses from seed, every field of the type reached, the second
// sometimes the first with a few fields filled again, so that the patch has both kinds of lists
// and maps to compare.
func randomStatuses(seed int64, text string) (old, next v1.PodStatus) {
	f := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(5000), resource.DecimalSI)
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(c.Int63n(1<<31), c.Int63n(1e9)))
		},
		// Zero numbers, often: an omitempty field leaves them out, another writes them.
		func(n *int64, c randfill.Continue) {
			if c.Intn(3) > 0 {
				*n = c.Int63() - c.Int63()
			} else {
				*n = 0
			}
		},
		func(n *int32, c randfill.Continue) {
			if c.Intn(3) > 0 {
				*n = c.Int31() - c.Int31()
			} else {
				*n = 0
			}
		},
	)
	f.Fill(&old)
	r := rand.New(rand.NewSource(seed))
	if r.Intn(2) == 0 {
		f.Fill(&next)
	} else {
		next = *old.DeepCopy()
		f.Fill(&next.Message)
		if len(next.Conditions) > 0 {
			f.Fill(&next.Conditions[r.Intn(len(next.Conditions))])
		}
		if len(next.ContainerStatuses) > 0 {
			f.Fill(&next.ContainerStatuses[r.Intn(len(next.ContainerStatuses))].State)
		}
	}
	if text != "" {
		next.Reason = text
		if len(next.Conditions) > 0 {
			next.Conditions[0].Message = text
		}
	}
	return old, next
}

// pureUnderRace is why a test of functions that only read their arguments and answer, which
// takes seconds under -race, skips there: the race detector needs a second goroutine to find
// anything in this module's code, and the test starts no goroutines of this module (go-cmp may
// start its own); the plain suite runs it.
const pureUnderRace = "pure functions on the test's goroutine, no goroutines of this module for the race detector"

// TestStatusPatchRandomStatuses holds statusPatch to the JSON text's way on random statuses.
func TestStatusPatchRandomStatuses(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	for seed := range int64(300) {
		old, next := randomStatuses(seed, "")
		samePatch(t, "uid-r", old, next)
	}
}

// FuzzStatusPatch holds statusPatch to the JSON text's way and to the whole maps on random
// statuses with any text in them, not valid UTF-8 included.
func FuzzStatusPatch(f *testing.F) {
	f.Add(int64(1), "")
	f.Add(int64(2), "caf\xc3")
	f.Add(int64(3), "<&>\u2028")
	f.Fuzz(func(t *testing.T, seed int64, text string) {
		old, next := randomStatuses(seed, text)
		samePatch(t, "uid-f", old, next)
		sameAsWholeMaps(t, "uid-f", old, next)
	})
}

// BenchmarkStatusPatch measures the patch of a pod's first running status over its pending one,
// the write every pod makes, and of its ready status over its running, not yet ready one, the
// write that follows; each as statusPatch builds it, from the whole maps (statusPatchWholeMaps,
// the way before statusPatch left out what both sides share), and through the JSON text.
func BenchmarkStatusPatch(b *testing.B) {
	pending := apiPod("web", "uid-web").Status
	running := cachedRunning(b)
	notReady := *running.DeepCopy()
	notReady.ContainerStatuses[0].Ready = false
	for i := range notReady.Conditions {
		if c := &notReady.Conditions[i]; c.Type == v1.PodReady || c.Type == v1.ContainersReady {
			c.Status, c.Reason = v1.ConditionFalse, "ContainersNotReady"
			c.Message = "containers with unready status: [a]"
		}
	}
	for _, write := range []struct {
		name      string
		old, next v1.PodStatus
	}{{"first", pending, notReady}, {"ready", notReady, running}} {
		for _, bc := range []struct {
			name  string
			patch func(types.UID, v1.PodStatus, v1.PodStatus) ([]byte, bool, error)
		}{{"maps", statusPatch}, {"wholemaps", statusPatchWholeMaps}, {"json", statusPatchJSON}} {
			b.Run(write.name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := bc.patch("uid-web", write.old, write.next); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
