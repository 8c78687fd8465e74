package fakeapiserver

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestNoOpPatchOfAForeignLoadedEvent: an event loaded from a data directory whose bytes spell a
// value otherwise than json.Marshal (an escaped letter) is patched with an empty merge patch:
// nothing changes, so the write must be a no-op (same resource version), as it is when the
// no-op check compares the candidate with the re-encoded stored object.
func TestNoOpPatchOfAForeignLoadedEvent(t *testing.T) {
	start := time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	srv, err := New(Options{Clock: clk, Tracer: trace.Discard, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	d := srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	if _, err := d.CreateEvent(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}, Reason: "Started", Message: "started", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, dataFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		k := []byte("default/web.1")
		v := bytes.Replace(b.Get(k), []byte(`"reason":"Started"`), []byte(`"reason":"St\u0061rted"`), 1)
		if !bytes.Contains(v, []byte(`\u0061`)) {
			t.Fatalf("no reason in %s", b.Get(k))
		}
		return b.Put(k, v)
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	srv, err = New(Options{Clock: clk, Tracer: trace.Discard, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	d = srv.Direct("kubelet/v1.35.4 (linux/amd64) kubernetes/fake")
	before := srv.store.buckets["events"].objects["default/web.1"].meta().GetResourceVersion()
	out, err := d.PatchEvent(ctx, "default", "web.1", types.MergePatchType, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if out.ResourceVersion != before {
		t.Errorf("empty patch of a loaded event: resourceVersion %s, want the stored %s (a no-op)", out.ResourceVersion, before)
	}
}
