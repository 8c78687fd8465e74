package fakeapiserver

import (
	"bytes"
	"runtime"
	"testing"
)

// A shared encoding is shared while a reader holds its bytes, and goes at the first collection
// once none does; a second reader's encoding does not replace a first one still held.
func TestSharedEncodingWhileHeld(t *testing.T) {
	var s sharedEncoding
	if _, ok := s.load(); ok {
		t.Fatal("a new sharedEncoding shares an encoding")
	}
	first := bytes.Repeat([]byte("pod"), 100)
	got, held := s.keep(protoEncoding{envelope: first, message: 7})
	if held == nil || &got.envelope[0] != &first[0] {
		t.Fatal("the first encoding was not kept")
	}
	second := bytes.Clone(first)
	if got, held := s.keep(protoEncoding{envelope: second}); held != nil || &got.envelope[0] != &first[0] || got.message != 7 {
		t.Fatalf("a second reader's encoding replaced the first, held (kept %v, message %d)", held != nil, got.message)
	}
	runtime.GC()
	if kept, ok := s.load(); !ok || &kept.envelope[0] != &first[0] || len(kept.envelope) != len(first) {
		t.Fatal("a collection took the encoding a reader still holds")
	}
	runtime.KeepAlive(first)
	first = nil
	runtime.GC()
	if kept, ok := s.load(); ok {
		t.Fatalf("the encoding outlived its readers and a collection (%d bytes)", len(kept.envelope))
	}
	// The next reader's encoding is kept in place of the collected one.
	if got, held := s.keep(protoEncoding{envelope: second}); held == nil || &got.envelope[0] != &second[0] {
		t.Fatal("an encoding was not kept after the last one was collected")
	}
	s.unkeep(held) // the first keep's: replaced since, so nothing happens
	if _, ok := s.load(); !ok {
		t.Fatal("unkeep of a replaced encoding dropped the current one")
	}
	s.drop()
	if _, ok := s.load(); ok {
		t.Fatal("drop left the encoding shared")
	}
	runtime.KeepAlive(second)
}
