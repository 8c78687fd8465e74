package volumemanager

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// TestUnmountLooksBeforeSorting checks the reconciler's unmount step: with no pod gone from the
// desired state (the pass after nearly every pod sync) it unmounts nothing and allocates
// nothing; a mounted pod no longer desired, among others that are, is still unmounted, once.
func TestUnmountLooksBeforeSorting(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone types.UID // the pod no longer desired; empty for none
		want []string
	}{
		{name: "every volume desired"},
		{name: "a pod no longer desired", gone: "b", want: []string{"unmount creds", "unmount kube-api-access-x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, m := mountedWorld(t, "a", "b", "c")
			if n := testing.AllocsPerRun(100, m.unmountVolumes); n != 0 {
				t.Errorf("unmount step with every volume desired: %v allocations, want 0", n)
			}
			mark := len(w.trace)
			if tc.gone != "" {
				w.terminated[tc.gone] = true
				m.PodsChanged() // as the workers tell of the change
			}
			m.populate(w.clk.Now())
			m.unmountVolumes()
			m.unmountVolumes()
			var got []string
			for _, line := range w.trace[mark:] {
				_, rest, _ := strings.Cut(line, " ") // the time
				got = append(got, rest)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unmount step traced (-want +got):\n%s", diff)
			}
		})
	}
}
