package fakeapiserver

import (
	"bytes"
	"encoding/binary"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TestWatchFrameBytes: a protobuf watch frame written straight into the watch's buffer is the
// bytes of metav1.WatchEvent's generated Marshal after their length, for every event type and
// for objects whose lengths take one to three bytes as varints (and none, and empty), appended
// after what the buffer already holds.
func TestWatchFrameBytes(t *testing.T) {
	stored, err := encodeProtobuf(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: 410})
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{
		"nil":     nil,
		"empty":   {},
		"status":  stored,
		"127":     bytes.Repeat([]byte{'a'}, 127),
		"128":     bytes.Repeat([]byte{'b'}, 128),
		"16383":   bytes.Repeat([]byte{'c'}, 16383),
		"16384":   bytes.Repeat([]byte{'d'}, 16384),
		"100,000": bytes.Repeat([]byte{'e'}, 100000),
	}
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		for name, pb := range objects {
			ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: pb}}
			msg, err := ev.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			want := append([]byte("before"), binary.BigEndian.AppendUint32(nil, uint32(len(msg)))...)
			want = append(want, msg...)
			if got := appendWatchFrame([]byte("before"), typ, pb); !bytes.Equal(got, want) {
				t.Errorf("%s %s: frame differs from WatchEvent.Marshal's:\n got %x\nwant %x", typ, name, frameHead(got), frameHead(want))
			}
		}
	}
}

// frameHead is the start of a frame, enough to see where two differ.
func frameHead(b []byte) []byte { return b[:min(len(b), 64)] }

// TestWatchFrameAllocations: a frame in a buffer with room for it allocates nothing.
func TestWatchFrameAllocations(t *testing.T) {
	pb := bytes.Repeat([]byte{'p'}, 3000)
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { _ = appendWatchFrame(buf[:0], watch.Modified, pb) }); n != 0 {
		t.Errorf("a frame allocates %v times, want 0", n)
	}
}
