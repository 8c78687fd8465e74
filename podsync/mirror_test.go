package podsync

import (
	"context"
	"errors"
	"testing"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// logMirror logs mirror client calls; deletes succeed unless gone is set, as when the API
// server answers a UID precondition with NotFound or Conflict.
type logMirror struct {
	calls []string
	gone  bool
}

func (m *logMirror) CreateMirrorPod(_ context.Context, static *v1.Pod) error {
	m.calls = append(m.calls, "create "+kubecontainer.GetPodFullName(static))
	return nil
}

func (m *logMirror) DeleteMirrorPod(_ context.Context, fullName string, uid *types.UID) (bool, error) {
	m.calls = append(m.calls, "delete "+fullName+" uid="+string(*uid))
	return !m.gone, nil
}

// nodes answers GetNode with node, or err.
type nodes struct {
	node *v1.Node
	err  error
}

func (n nodes) GetNode(context.Context, string) (*v1.Node, error) { return n.node, n.err }

func staticPod() *v1.Pod { return podtest.New("web-node-1", podtest.Static("hash-2")) }

func mirrorOf(hash string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-node-1", Namespace: "default", UID: "mirror-uid",
		Annotations: map[string]string{kubecontainer.ConfigMirrorAnnotationKey: hash}}}
}

func TestSyncPodReconcilesTheMirrorPod(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	deleted := node.DeepCopy()
	deleted.DeletionTimestamp = &metav1.Time{}
	deleting := mirrorOf("hash-2")
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name       string
		mirror     *v1.Pod
		gone       bool
		nodes      nodes
		wantCalls  []string
		wantReason []string
	}{
		{name: "missing", nodes: nodes{node: node},
			wantCalls: []string{"create web-node-1_default"}, wantReason: []string{"MirrorPodMissing"}},
		{name: "current", mirror: mirrorOf("hash-2"), nodes: nodes{node: node}},
		{name: "outdated", mirror: mirrorOf("hash-1"), nodes: nodes{node: node},
			wantCalls:  []string{"delete web-node-1_default uid=mirror-uid", "create web-node-1_default"},
			wantReason: []string{"MirrorPodOutdated", "MirrorPodMissing"}},
		{name: "being deleted", mirror: deleting, nodes: nodes{node: node},
			wantCalls:  []string{"delete web-node-1_default uid=mirror-uid", "create web-node-1_default"},
			wantReason: []string{"MirrorPodDeleting", "MirrorPodMissing"}},
		// A sync that gets a mirror pod its own earlier sync already deleted (HandlePodRemoves
		// hands over the removed object while the replacement's ADD is still to come) deletes
		// it again, as v1.35 does; the precondition fails and nothing is created.
		{name: "being deleted, already replaced", mirror: deleting, gone: true, nodes: nodes{node: node},
			wantCalls:  []string{"delete web-node-1_default uid=mirror-uid"},
			wantReason: []string{"MirrorPodDeleting"}},
		{name: "node missing", nodes: nodes{err: errors.New(`nodes "node-1" not found`)},
			wantReason: []string{"NodeUnavailable"}},
		{name: "node deleted", nodes: nodes{node: deleted}, wantReason: []string{"NodeDeleted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			m := &logMirror{gone: tc.gone}
			opts := f.s.opts
			opts.Mirror, opts.Nodes = m, tc.nodes
			s, err := New(opts)
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if _, err := s.SyncPod(context.Background(), podworkers.SyncPodSync, staticPod(), tc.mirror, nil); err != nil {
				t.Fatalf("SyncPod() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantCalls, m.calls); diff != "" {
				t.Errorf("mirror client calls (-want +got):\n%s", diff)
			}
			var reasons []string
			for _, e := range f.rec.Events() {
				if e.Component == trace.Mirror {
					reasons = append(reasons, e.Reason)
				}
			}
			if diff := cmp.Diff(tc.wantReason, reasons); diff != "" {
				t.Errorf("mirror trace reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFastStaticPodsRegistration checks that every static pod known when the node appears gets
// its mirror pod reconciled, in key order, and that a current mirror pod is left alone.
func TestFastStaticPodsRegistration(t *testing.T) {
	f := newFixture(t)
	m := &logMirror{}
	opts := f.s.opts
	opts.Mirror, opts.Nodes = m, nodes{node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	other := staticPod()
	other.Name, other.UID = "db-node-1", "uid-db"
	s.FastStaticPodsRegistration(context.Background(), map[*v1.Pod]*v1.Pod{staticPod(): mirrorOf("hash-2"), other: nil})
	if diff := cmp.Diff([]string{"create db-node-1_default"}, m.calls); diff != "" {
		t.Errorf("mirror client calls (-want +got):\n%s", diff)
	}
}
