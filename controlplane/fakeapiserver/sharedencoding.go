package fakeapiserver

import (
	"sync/atomic"
	"unsafe"
	"weak"
)

// sharedEncoding is an encoding of a stored version that its readers share: the first reader
// makes it, and a later one takes it rather than encoding the version again. It holds the bytes
// weakly: they stay shared while any reader still holds them, and go at the first collection
// after the last one let go, as kube-apiserver's watch cache keeps an object's serialization
// with the event being sent, not with the object for as long as it is current. A watch event's
// readers (every watch woken by one write) read it within moments of each other and share one
// encoding; a reader that comes after a collection (a list, a watch that lags) makes the same
// bytes again (encoded, protobuf). Kept strongly, a fleet's current pods held their protobuf
// encodings (about 2.2 KB a pod) for as long as they ran, read by one watch once.
type sharedEncoding struct {
	p atomic.Pointer[heldEncoding]
}

// heldEncoding is the weak form of an encoding: where its bytes start, how many there are, and,
// for a protobuf envelope, where the object's own message starts in it.
type heldEncoding struct {
	first         weak.Pointer[byte]
	size, message int
}

// value is the held encoding, or false once its bytes were collected.
func (h *heldEncoding) value() (protoEncoding, bool) {
	p := h.first.Value()
	if p == nil {
		return protoEncoding{}, false
	}
	return protoEncoding{envelope: unsafe.Slice(p, h.size), message: h.message}, true
}

// load returns the shared encoding, or false if there is none (never made, dropped, or
// collected).
func (s *sharedEncoding) load() (protoEncoding, bool) {
	h := s.p.Load()
	if h == nil {
		return protoEncoding{}, false
	}
	return h.value()
}

// keep shares enc, unless another reader's encoding, still held, was kept first: it returns the
// encoding to use, and the held form of enc when it was kept (for unkeep), else nil. enc must
// not be empty, and its bytes must never change.
func (s *sharedEncoding) keep(enc protoEncoding) (protoEncoding, *heldEncoding) {
	for {
		old := s.p.Load()
		if old != nil {
			if kept, ok := old.value(); ok {
				return kept, nil
			}
		}
		h := &heldEncoding{first: weak.Make(unsafe.SliceData(enc.envelope)), size: len(enc.envelope), message: enc.message}
		if s.p.CompareAndSwap(old, h) {
			return enc, h
		}
	}
}

// unkeep takes back h, what keep kept, unless another encoding replaced it since.
func (s *sharedEncoding) unkeep(h *heldEncoding) { s.p.CompareAndSwap(h, nil) }

// drop forgets the shared encoding.
func (s *sharedEncoding) drop() { s.p.Store(nil) }
