package fakeapiserver

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestScalarUpdateOnAForeignDataDir: a lease loaded from a --data-dir whose bytes are valid
// JSON of the same value but not json.Marshal's spelling of it (here an escaped '-', as any
// other JSON writer may spell it) is written back unchanged by its holder. Without the
// shortcuts (the library, as kube-apiserver compares the decoded objects) nothing changed and
// the holder's entry keeps its time; with them it must be the same, which holds because a loaded
// entry keeps the object's own encoding, not the disk's bytes (scalarUpdate reading those would
// see spec.holderIdentity changed and move the entry to the server's time).
func TestScalarUpdateOnAForeignDataDir(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(fieldmanager.Shortcuts.On())
	ctx := context.Background()
	var got [2][]metav1.ManagedFieldsEntry
	for i, shortcuts := range []bool{false, true} {
		fieldmanager.Shortcuts.Set(shortcuts)
		dir := t.TempDir()
		clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
		s, err := New(Options{Clock: clk, Tracer: trace.Discard, DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Direct("kubelet/v1.35.4").CreateLease(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-node-lease", Name: "node-1"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &metav1.MicroTime{Time: clk.Now()}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(filepath.Join(dir, dataFile), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("leases"))
			k := []byte("kube-node-lease/node-1")
			v := bytes.Replace(b.Get(k), []byte(`"holderIdentity":"node-1"`), []byte(`"holderIdentity":"node\u002d1"`), 1)
			if !bytes.Contains(v, []byte(`\u002d`)) {
				t.Fatalf("no holderIdentity in %s", b.Get(k))
			}
			return b.Put(k, v)
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		clk.Step(10 * time.Second)
		s, err = New(Options{Clock: clk, Tracer: trace.Discard, DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		d := s.Direct("kubelet/v1.35.4")
		lease, err := d.GetLease(ctx, "kube-node-lease", "node-1")
		if err != nil {
			t.Fatal(err)
		}
		out, err := d.UpdateLease(ctx, lease)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = out.ManagedFields
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("a holder's unchanged write of a lease loaded from a foreign data dir: managed fields (-library +shortcuts):\n%s", diff)
	}
}
