package compactjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// ownCodec tells whether values of t encode or decode through methods of their own.
func ownCodec(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler) || p.Implements(jsonUnmarshaler) ||
		t.Implements(textMarshaler) || p.Implements(textMarshaler) || p.Implements(textUnmarshaler)
}

// ownCodecs caches ownCodec by type.
var ownCodecs sync.Map

// HasOwnCodec tells whether values of t encode or decode through methods of their own (times,
// quantities, int-or-strings, managed fields' sets, raw extensions), cached by type.
func HasOwnCodec(t reflect.Type) bool {
	if c, ok := ownCodecs.Load(t); ok {
		return c.(bool)
	}
	c := ownCodec(t)
	ownCodecs.Store(t, c)
	return c
}

// replacementEscape is how encoding/json writes every invalid UTF-8 sequence (a valid U+FFFD it
// writes as itself).
var replacementEscape = []byte(`\ufffd`)

// HasReplacementEscape tells whether the encoding raw holds the escape of U+FFFD, which
// encoding/json writes for every invalid UTF-8 sequence, so that two different invalid strings
// encode alike. The bytes also occur in a string that holds a backslash before "ufffd", which
// encodes as an escaped backslash followed by them: the checks that refuse on them refuse a
// little more than they need to, which costs such a value only the shortcut.
func HasReplacementEscape(raw []byte) bool { return bytes.Contains(raw, replacementEscape) }

// Field is what encoding/json does with a field of a struct, and so what a round trip through
// its JSON does.
type Field struct {
	Index int
	// Skip: unexported, or marked "-": the encoding leaves it out and the round trip leaves it
	// zero.
	Skip bool
	// Refuse: an embedded pointer (all of whose fields left out decode as nil), or ",string":
	// the callers do not follow what the encoding does with it.
	Refuse bool
	// OmitEmpty: an empty list or map is left out and decodes as nil.
	OmitEmpty bool
}

// structFields caches the Fields of struct types.
var structFields sync.Map

// Fields lists, by index, how each field of the struct type t is treated, which is what
// encoding/json does with it except for an embedded struct: an unexported embedded non-pointer
// struct is marked Skip, though encoding/json writes its exported fields as the outer struct's,
// and an exported one is listed as one field, not flattened (the callers tell embedded fields
// apart themselves). The slice is cached per type and shared by every caller: read it, never
// write to it.
func Fields(t reflect.Type) []Field {
	if f, ok := structFields.Load(t); ok {
		return f.([]Field)
	}
	out := make([]Field, t.NumField())
	for i := range out {
		f := t.Field(i)
		out[i].Index = i
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Pointer:
			out[i].Refuse = true
		case !f.IsExported(), name == "-" && opts == "":
			out[i].Skip = true
		}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				out[i].OmitEmpty = true
			case "string":
				out[i].Refuse = true
			}
		}
	}
	structFields.Store(t, out)
	return out
}
