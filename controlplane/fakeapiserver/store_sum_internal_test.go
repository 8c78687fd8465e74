package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestSameEncoding wants an update's comparison with the stored version to answer byte equality
// whether the entry keeps its encoding or only its size and hash, and to compare the bytes when
// the sums agree: an entry whose sum was made to match another encoding of the same length (what
// a collision would be) still tells them apart.
func TestSameEncoding(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "7"},
		Status:     corev1.PodStatus{PodIP: "10.0.0.1"}}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	other := pod.DeepCopy()
	other.Status.PodIP = "10.0.0.2" // as long as raw
	sameLength, _ := json.Marshal(other)
	other.Status.PodIP = "10.0.0.10"
	longer, _ := json.Marshal(other)
	if len(sameLength) != len(raw) || len(longer) == len(raw) {
		t.Fatalf("lengths %d, %d, want %d and another", len(sameLength), len(longer), len(raw))
	}
	forged := summedEntry(pod, raw)
	forged.sum = encodingSum(sameLength)
	for _, tc := range []struct {
		name    string
		e       *entry
		written []byte
		want    bool
	}{
		{"kept, equal", newEntry(pod, raw), raw, true},
		{"kept, same length", newEntry(pod, raw), sameLength, false},
		{"kept, longer", newEntry(pod, raw), longer, false},
		{"summed, equal", summedEntry(pod, raw), raw, true},
		{"summed, same length", summedEntry(pod, raw), sameLength, false},
		{"summed, longer", summedEntry(pod, raw), longer, false},
		{"summed, the sum matching another encoding", forged, sameLength, false},
		{"summed, the sum matching another encoding, equal", forged, raw, false},
		{"neither kept nor summed, equal", &entry{obj: pod, size: len(raw)}, raw, true},
		{"neither kept nor summed, same length", &entry{obj: pod, size: len(raw)}, sameLength, false},
		// An event loaded from a data directory counts the bytes on disk, which may spell its
		// value otherwise (an escaped letter): the length proves nothing.
		{"neither kept nor summed, the size of other bytes, equal", &entry{obj: pod, size: len(raw) + 5}, raw, true},
		{"neither kept nor summed, the size of other bytes, same length", &entry{obj: pod, size: len(raw) + 5}, sameLength, false},
	} {
		if got := tc.e.sameEncoding(tc.written); got != tc.want {
			t.Errorf("%s: sameEncoding() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAnswerSharesTheStoredProtobuf: a pod write's answer keeps the JSON its stored entry does not,
// but makes its protobuf encoding for the stored entry, so that the watch event carrying the
// stored entry does not encode it again.
func TestAnswerSharesTheStoredProtobuf(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
	st := newStore(storeOptions{historySize: 100, historyBytes: 1 << 20, rand: rand.New(rand.NewSource(1)), now: clk.Now})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	var answer, stored *entry
	err := st.locked(func() error {
		var err error
		if answer, err = st.commit(podsTarget, watch.Added, pod, nil); err != nil {
			return err
		}
		stored, _ = st.get(podsTarget, "default", "web")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if answer == stored || answer.raw == nil || stored.raw != nil {
		t.Fatalf("answer %p keeps %d bytes, stored %p %d; want two entries, the answer's alone with the JSON", answer, len(answer.raw), stored, len(stored.raw))
	}
	pb, err := answer.protobuf()
	if err != nil {
		t.Fatal(err)
	}
	kept, ok := stored.pb.load()
	if !ok || !bytes.Equal(kept.envelope, pb) {
		t.Fatalf("stored entry keeps %v after the answer's protobuf, want the answer's %d bytes", kept.envelope, len(pb))
	}
	if again, _ := stored.protobuf(); &again[0] != &pb[0] {
		t.Error("the stored entry's protobuf is not the answer's encoding")
	}
}

// TestSummedEntryKeepsItsJSONWhileCurrent: a pod's current version makes its JSON on the first
// read and gives every later reader the same bytes, while the write path's reading of it (the
// no-op check, a patch's original) keeps nothing; once superseded it drops the JSON and a reader
// gets a fresh encoding that it does not keep. Readers race one another and a supersede, as
// readers outside the store's lock do (run with -race).
func TestSummedEntryKeepsItsJSONWhileCurrent(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "7"}}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	e := summedEntry(pod, raw)
	if got := e.encodedForWrite(); !bytes.Equal(got, raw) || keptBytes(&e.js) != nil {
		t.Fatalf("encodedForWrite() = %s, kept %v; want %s, nothing kept", got, keptBytes(&e.js), raw)
	}
	if !e.sameEncoding(raw) || keptBytes(&e.js) != nil {
		t.Fatalf("sameEncoding of its own encoding: kept %v, want true and nothing kept", keptBytes(&e.js))
	}
	first := e.encoded()
	if !bytes.Equal(first, raw) || keptBytes(&e.js) == nil {
		t.Fatalf("encoded() = %s, kept %v; want %s, kept", first, keptBytes(&e.js), raw)
	}
	if again := e.encoded(); &again[0] != &first[0] {
		t.Error("a second reader encoded the current version again")
	}
	if w := e.encodedForWrite(); &w[0] != &first[0] {
		t.Error("the write path encoded the version again though it is kept")
	}

	// Readers at once with a supersede: each gets the bytes, and the superseded entry keeps none.
	e = summedEntry(pod, raw)
	const readers = 8
	got := make([][]byte, readers)
	done := make(chan struct{})
	for i := range readers {
		go func() {
			defer func() { done <- struct{}{} }()
			got[i] = e.encoded()
		}()
	}
	e.supersede()
	for range readers {
		<-done
	}
	for i, g := range got {
		if !bytes.Equal(g, raw) {
			t.Errorf("reader %d got %s, want %s", i, g, raw)
		}
	}
	if kept := keptBytes(&e.js); kept != nil {
		t.Errorf("superseded entry keeps %d bytes of JSON, want none", len(kept))
	}
	if again := e.encoded(); !bytes.Equal(again, raw) || keptBytes(&e.js) != nil {
		t.Errorf("superseded encoded() = %s, kept %v; want %s, nothing kept", again, keptBytes(&e.js), raw)
	}

	// The interleaving the readers above can miss: a reader saw the version current, a
	// supersede ran, then the reader swapped its encoding in. keepJSON must take it back.
	e = summedEntry(pod, raw)
	e.supersede()
	if got := e.keepJSON(raw); !bytes.Equal(got, raw) {
		t.Errorf("keepJSON after a supersede = %s, want %s", got, raw)
	}
	if kept := keptBytes(&e.js); kept != nil {
		t.Errorf("a swap after the supersede kept %d bytes of JSON, want none", len(kept))
	}
	// And the other reader's side: one kept its encoding first, the next gets those bytes.
	e = summedEntry(pod, raw)
	mine := append([]byte(nil), raw...)
	if got := e.keepJSON(mine); &got[0] != &mine[0] {
		t.Error("the first keepJSON did not answer with its own encoding")
	}
	if got := e.keepJSON(append([]byte(nil), raw...)); &got[0] != &mine[0] {
		t.Error("a later keepJSON did not answer with the kept encoding")
	}

	// Neither kept nor summed (an event's): encoded anew for each reader and never kept.
	ev := &entry{obj: pod, size: len(raw), keepsNone: true}
	if a, b := ev.encoded(), ev.encoded(); !bytes.Equal(a, raw) || &a[0] == &b[0] || keptBytes(&ev.js) != nil {
		t.Errorf("an event's entry kept its JSON (%v)", keptBytes(&ev.js))
	}
}

// keptBytes is the encoding s shares, nil if none.
func keptBytes(s *sharedEncoding) []byte {
	enc, _ := s.load()
	return enc.envelope
}
