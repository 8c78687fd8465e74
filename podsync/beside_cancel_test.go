package podsync

import (
	"context"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/podworkers"
)

// TestSyncPodBesideCancelEndsVolumeWait: a cancel while the mirror pod calls are in flight
// reaches the volume wait that follows them (its first poll is told canceled), as the kubelet's
// cancelled worker context ends WaitForAttachAndMount.
func TestSyncPodBesideCancelEndsVolumeWait(t *testing.T) {
	f := newFixture(t)
	opts := f.s.opts
	vols := &scriptedVolumes{}
	vols.mount = &scriptedWait{looks: []look{{}, {}}, now: f.clk.Now, log: &vols.log}
	opts.Mirror, opts.Nodes, opts.Volumes = &logMirror{}, nodes{node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}, vols
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	b := &heldBeside{}
	s.SetBeside(b)
	res, err := s.SyncPod(context.Background(), podworkers.SyncPodCreate, staticPod(), nil, nil)
	if err != nil || !res.Blocked {
		t.Fatalf("SyncPod() = %+v, %v; want a blocked wait", res, err)
	}
	if res, err = res.Wait(context.Background(), true); err != nil || !res.Blocked {
		t.Fatalf("cancelled look = %+v, %v", res, err)
	}
	b.calls[0](context.Background())
	b.returned[0]()
	_, _ = res.Wait(context.Background(), true)
	if diff := gocmp.Diff([]string{"WaitForAttachAndMount web-node-1", "poll canceled=true"}, vols.log); diff != "" {
		t.Errorf("volume wait (-want +got):\n%s", diff)
	}
}
