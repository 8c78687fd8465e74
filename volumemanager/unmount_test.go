package volumemanager

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/vclock"
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
			if n := testing.AllocsPerRun(100, func() { m.unmountVolumes(w.clk.Now()) }); n != 0 {
				t.Errorf("unmount step with every volume desired: %v allocations, want 0", n)
			}
			mark := len(w.trace)
			if tc.gone != "" {
				w.terminated[tc.gone] = true
				m.PodsChanged() // as the workers tell of the change
			}
			m.populate(w.clk.Now())
			m.unmountVolumes(w.clk.Now())
			m.unmountVolumes(w.clk.Now())
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

// TestUnmountWaitsForSources checks that the reconciler unmounts nothing before the first pass
// after the sources were all seen (readyToUnmount), for the volumes this process mounted too: a
// pod mounted at 1.1s, whose runtime may be removed and which no source has from 1.5s, keeps its
// volumes until the pass at 3s, when the sources are ready.
func TestUnmountWaitsForSources(t *testing.T) {
	w := newWorld()
	w.secrets["ns/db"] = &v1.Secret{}
	ready := func() bool { return w.clk.Since(vclock.Epoch) >= 3*time.Second }
	m := newManagerWith(t, w, nil, ready)
	a := secretPod("a")
	w.pods = append(w.pods, a)
	m.PodsChanged()
	if _, err := run(t, w, m, m.WaitForAttachAndMount(a), vclock.Epoch.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	step(w, m, 1500*time.Millisecond)
	w.clk.Set(vclock.Epoch.Add(1500 * time.Millisecond))
	w.terminated["a"], w.pods = true, nil
	m.PodsChanged()
	step(w, m, 10*time.Second)
	var got []string
	for _, line := range w.trace {
		if strings.Contains(line, "unmount") {
			got = append(got, line)
		}
	}
	if diff := cmp.Diff([]string{"3s unmount creds", "3s unmount kube-api-access-x"}, got); diff != "" {
		t.Errorf("unmounts (-want +got):\n%s", diff)
	}
}
