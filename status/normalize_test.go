package status

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// toSecond must be Rfc3339Copy to the bit (the same wall, monotonic and location fields), as
// statuses are compared with == on their times and encoded into the trace.
func TestToSecondIsRfc3339Copy(t *testing.T) {
	plus2 := time.FixedZone("UTC+2", 2*3600)
	for _, tt := range []struct {
		name string
		t    time.Time
	}{
		{"zero", time.Time{}},
		{"virtual epoch", vclock.Epoch},
		{"virtual, with nanoseconds", vclock.Epoch.Add(1500 * time.Millisecond)},
		{"real clock, monotonic reading", time.Now().UTC()},
		{"local real clock", time.Now()},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 999, time.UTC)},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 1, time.UTC)},
		{"fixed zone", time.Date(2026, 11, 28, 6, 0, 0, 42, plus2)},
	} {
		in := metav1.NewTime(tt.t)
		got, want := toSecond(in), in.Rfc3339Copy()
		if got != want { // ==, not Equal: the representation must match too
			t.Errorf("%s: toSecond(%v) = %#v, want Rfc3339Copy's %#v", tt.name, tt.t, got, want)
		}
	}
}

func TestNormalizeStatusSortsContainerStatuses(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "z-first"}, {Name: "a-second"}, {Name: "m-third"}},
		Containers:     []v1.Container{{Name: "b"}, {Name: "a"}},
	}}
	status := &v1.PodStatus{
		InitContainerStatuses:      []v1.ContainerStatus{{Name: "m-third"}, {Name: "a-second"}, {Name: "z-first"}, {Name: "unknown"}},
		ContainerStatuses:          []v1.ContainerStatus{{Name: "b"}, {Name: "a"}, {Name: "a", Image: "second a"}},
		EphemeralContainerStatuses: []v1.ContainerStatus{{Name: "y"}, {Name: "x"}},
	}
	normalizeStatus(pod, status)
	names := func(list []v1.ContainerStatus) []string {
		var out []string
		for _, s := range list {
			out = append(out, s.Name+s.Image)
		}
		return out
	}
	// Init containers take the spec's order, as the kubelet's swaps leave it (a status that
	// names no spec container ends up last); the others sort by name, equal names keeping their
	// order.
	if diff := cmp.Diff([]string{"z-first", "a-second", "m-third", "unknown"}, names(status.InitContainerStatuses)); diff != "" {
		t.Errorf("init container statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "asecond a", "b"}, names(status.ContainerStatuses)); diff != "" {
		t.Errorf("container statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x", "y"}, names(status.EphemeralContainerStatuses)); diff != "" {
		t.Errorf("ephemeral container statuses (-want +got):\n%s", diff)
	}
}

// containersMessage writes what the kubelet's fmt.Sprintf with %v of the name lists writes.
func TestContainersMessageIsKubeletFormat(t *testing.T) {
	kubelet := func(unknown []string, kind string, others []string) string {
		var msgs []string
		if len(unknown) > 0 {
			msgs = append(msgs, fmt.Sprintf("containers with unknown status: %v", unknown))
		}
		if len(others) > 0 {
			msgs = append(msgs, fmt.Sprintf("containers with %s status: %v", kind, others))
		}
		return strings.Join(msgs, ", ")
	}
	lists := [][]string{nil, {}, {"app"}, {"app", "sidecar"}, {"a b", ""}}
	for _, unknown := range lists {
		for _, others := range lists {
			if got, want := containersMessage(unknown, "unready", others), kubelet(unknown, "unready", others); got != want {
				t.Errorf("containersMessage(%q, unready, %q) = %q, want %q", unknown, others, got, want)
			}
		}
	}
}

// toSecond gives the Time of metav1.Time's Rfc3339Copy compared with == (the same instant,
// location and representation) for the clocks' times, UTC and Local; for the times it leaves to
// Rfc3339Copy, whose parse may make a new location each time, the same instant in the same zone.
func TestToSecondKeepsTheZone(t *testing.T) {
	base := time.Date(2026, 11, 28, 6, 15, 42, 123456789, time.UTC)
	for _, tc := range []struct {
		name string
		t    time.Time
	}{
		{"UTC on the second", base.Truncate(time.Second)},
		{"UTC before 1970", time.Date(1901, 2, 3, 4, 5, 6, 7, time.UTC)},
		{"Local", base.Local()},
		{"a monotonic reading", time.Now()},
		{"a fixed zone of whole minutes", base.In(time.FixedZone("x", 5*3600+30*60))},
		{"a fixed zone of zero offset", base.In(time.FixedZone("y", 0))},
		{"an offset with seconds", base.In(time.FixedZone("lmt", 561))},
		{"the epoch", time.Unix(0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := metav1.NewTime(tc.t).Rfc3339Copy().Time
			got := toSecond(metav1.NewTime(tc.t)).Time
			if loc := want.Location(); loc != time.UTC && loc != time.Local {
				gotName, gotOffset := got.Zone()
				wantName, wantOffset := want.Zone()
				if !got.Equal(want) || gotName != wantName || gotOffset != wantOffset {
					t.Errorf("toSecond(%v) = %v, want Rfc3339Copy's %v", tc.t, got, want)
				}
				return
			}
			if got != want {
				t.Errorf("toSecond(%v) = %#v, want Rfc3339Copy's %#v", tc.t, got, want)
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
