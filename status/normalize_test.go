package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRFC3339Copy checks that rfc3339Copy gives exactly the Time of metav1.Time's Rfc3339Copy
// (the same instant, location and representation, compared with ==) for the clocks' times, and
// for those it leaves to Rfc3339Copy, whose parse makes a new location each time, the same
// instant in the same zone.
func TestRFC3339Copy(t *testing.T) {
	base := time.Date(2026, 11, 28, 6, 15, 42, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		t    time.Time
	}{
		{"zero", time.Time{}},
		{"UTC with nanoseconds", base},
		{"UTC on the second", base.Truncate(time.Second)},
		{"UTC before 1970", time.Date(1901, 2, 3, 4, 5, 6, 7, time.UTC)},
		{"Local", base.Local()},
		{"a monotonic reading", time.Now()},
		{"a fixed zone of whole minutes", base.In(time.FixedZone("x", 5*3600+30*60))},
		{"a fixed zone of zero offset", base.In(time.FixedZone("y", 0))},
		{"an offset with seconds", base.In(time.FixedZone("lmt", 561))},
		{"a five-digit year", time.Date(10000, 1, 1, 0, 0, 0, 5, time.UTC)},
		{"the epoch", time.Unix(0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := metav1.NewTime(tc.t).Rfc3339Copy().Time
			got := rfc3339Copy(tc.t)
			if loc := want.Location(); loc != time.UTC && loc != time.Local {
				gotName, gotOffset := got.Zone()
				wantName, wantOffset := want.Zone()
				if !got.Equal(want) || gotName != wantName || gotOffset != wantOffset {
					t.Errorf("rfc3339Copy(%v) = %v, want Rfc3339Copy's %v", tc.t, got, want)
				}
				return
			}
			if got != want {
				t.Errorf("rfc3339Copy(%v) = %#v, want Rfc3339Copy's %#v", tc.t, got, want)
			}
		})
	}
}

// BenchmarkNormalizeStatus is the normalization of the status every periodic SyncPod sets.
func BenchmarkNormalizeStatus(b *testing.B) {
	pod := apiPod("web", "uid-web")
	s := runningStatus(pod, time.Unix(1000, 5))
	b.ReportAllocs()
	for b.Loop() {
		normalizeStatus(pod, &s)
	}
}

// BenchmarkGenerateRunningStatus is the status generation of every periodic SyncPod of a
// running pod.
func BenchmarkGenerateRunningStatus(b *testing.B) {
	pod := apiPod("web", "uid-web")
	now := time.Unix(1000, 5)
	b.ReportAllocs()
	for b.Loop() {
		runningStatus(pod, now)
	}
}
