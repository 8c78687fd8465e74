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

// heldBeside is a Beside that runs nothing until the test says: it keeps each call, with its
// context's cancel and what it runs once returned.
type heldBeside struct {
	uids     []types.UID
	calls    []func(context.Context)
	returned []func()
	canceled int
}

func (b *heldBeside) Go(_ context.Context, uid types.UID, call func(context.Context), returned func()) func() {
	b.uids, b.calls, b.returned = append(b.uids, uid), append(b.calls, call), append(b.returned, returned)
	return func() { b.canceled++ }
}

// TestSyncPodMirrorCallsBeside checks that beside the pod workers SyncPod hands its mirror pod
// calls over and waits (Result.Blocked) before the runtime sync, that it goes on to the runtime
// only once the calls have returned, that a cancel cancels the calls, and that a static pod with
// its own mirror pod, or a pod that is not static, hands nothing over.
func TestSyncPodMirrorCallsBeside(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		mirror *v1.Pod
		cancel bool
		// handed is whether the mirror step goes beside.
		handed bool
	}{
		{name: "missing", pod: staticPod(), handed: true},
		{name: "outdated", pod: staticPod(), mirror: mirrorOf("hash-1"), handed: true},
		{name: "missing, canceled", pod: staticPod(), handed: true, cancel: true},
		{name: "current", pod: staticPod(), mirror: mirrorOf("hash-2")},
		{name: "not static", pod: pod("web")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			m := &logMirror{}
			opts := f.s.opts
			opts.Mirror, opts.Nodes = m, nodes{node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}
			s, err := New(opts)
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			b := &heldBeside{}
			s.SetBeside(b)
			res, err := s.SyncPod(context.Background(), podworkers.SyncPodSync, tc.pod, tc.mirror, nil)
			if err != nil {
				t.Fatalf("SyncPod() error = %v", err)
			}
			if !tc.handed {
				if len(b.calls) != 0 || res.Blocked || len(f.rt.calls) != 1 {
					t.Errorf("SyncPod handed %d calls over, Blocked %t, runtime calls %q; want none, false and the runtime sync", len(b.calls), res.Blocked, f.rt.calls)
				}
				return
			}
			if len(b.calls) != 1 || b.uids[0] != tc.pod.UID || !res.Blocked || res.Wait == nil {
				t.Fatalf("SyncPod handed %d calls over (uids %q), Blocked %t; want one for %q and a blocked wait", len(b.calls), b.uids, res.Blocked, tc.pod.UID)
			}
			if len(f.rt.calls) != 0 || len(m.calls) != 0 {
				t.Fatalf("before the calls ran: runtime %q, mirror %q; want none", f.rt.calls, m.calls)
			}
			// A look before the calls have returned waits on; a cancelled one cancels them.
			if res, err = res.Wait(context.Background(), tc.cancel); err != nil || !res.Blocked {
				t.Fatalf("Wait() before the calls returned = Blocked %t, %v; want a blocked wait", res.Blocked, err)
			}
			if want := map[bool]int{false: 0, true: 1}[tc.cancel]; b.canceled != want {
				t.Errorf("calls canceled %d times, want %d", b.canceled, want)
			}
			b.calls[0](context.Background())
			b.returned[0]()
			if res, err = res.Wait(context.Background(), tc.cancel); err != nil || res.Blocked || res.Wait != nil {
				t.Fatalf("Wait() once the calls returned = %+v, %v; want the sync's end", res, err)
			}
			if diff := cmp.Diff([]string{"SyncPod web-node-1"}, f.rt.calls); diff != "" {
				t.Errorf("runtime calls (-want +got):\n%s", diff)
			}
			if len(m.calls) == 0 || m.calls[len(m.calls)-1] != "create web-node-1_default" {
				t.Errorf("mirror client calls = %q, want the create last", m.calls)
			}
		})
	}
}
