package fakeapiserver

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestNewUIDSpelling wants newUID to spell the 16 bytes it draws as fmt's %x of the RFC 4122
// groups, joined by dashes (the spelling the UIDs had when fmt wrote them): replay's traces
// carry the UIDs, so the same seed must give the same text.
func TestNewUIDSpelling(t *testing.T) {
	st := newStore(storeOptions{rand: rand.New(rand.NewSource(7))})
	draws := rand.New(rand.NewSource(7))
	for i := range 1000 {
		var b [16]byte
		_, _ = draws.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		want := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		if got := string(st.newUID()); got != want {
			t.Fatalf("draw %d: newUID() = %q, want %q", i, got, want)
		}
	}
}
