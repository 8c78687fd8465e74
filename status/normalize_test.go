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
	// Init containers keep the spec's order (an unknown one counts as the first); the others sort
	// by name, equal names keeping their order.
	if diff := cmp.Diff([]string{"z-first", "unknown", "a-second", "m-third"}, names(status.InitContainerStatuses)); diff != "" {
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
