package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
)

// wireCopy is what wireObject makes of obj (the object the handler decodes from obj's JSON),
// made without the JSON of the whole object: a deep copy of obj with what the encoding and the
// decoding change changed the same way, field by field. It says false where it cannot be sure of
// the outcome, and wireObject then takes the round trip itself:
//
//   - the object must be the resource's Go type with an empty apiVersion and kind, or exactly the
//     resource's (the decoder keeps what the body names, and refuses another kind);
//   - a value whose type has JSON or text methods of its own (times, quantities, int-or-strings,
//     managed fields' sets, raw extensions) goes through those methods and the decoder alone, as
//     in the body: a time loses what its format does not keep (a Time its fraction of a second,
//     a MicroTime its nanoseconds, both their location);
//   - an empty list or map of a field marked omitempty is left out of the body and decodes as
//     none (nil); one without omitempty is sent as [] or {} and decodes empty but not nil;
//   - strings and map keys must be valid UTF-8 (the encoding replaces invalid bytes), floats,
//     interfaces, channels and functions, fields marked "-" or ",string", and unexported
//     fields that are set are refused: the kubelet's objects have none of them;
//   - a pointer to a nil list, map or pointer is sent as null and decodes as a nil pointer, as
//     does a pointer to a zero time or to a managed fields' set whose bytes are none or null.
//
// Everything else (booleans, integers, strings, other pointers, structs) decodes as it was.
func wireCopy(res *resource, obj runtime.Object) (runtime.Object, bool) {
	into := res.newObj()
	if reflect.TypeOf(obj) != reflect.TypeOf(into) {
		return nil, false
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if !gvk.Empty() && gvk != res.gvk() {
		return nil, false
	}
	out := obj.DeepCopyObject()
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, false
	}
	if !wireValue(v.Elem()) {
		return nil, false
	}
	return out, true
}

var (
	stringMapType   = reflect.TypeFor[map[string]string]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// roundTrip sets the settable v to what the body's JSON of v decodes to: v encoded alone (as
// encoding/json encodes it inside the object) and decoded by the server's decoder into a zero
// value of its type.
func roundTrip(v reflect.Value) bool {
	// Inside the object the value is addressable, so that encoding/json calls an encoding
	// method with a pointer receiver too.
	in := v.Interface()
	if v.CanAddr() {
		in = v.Addr().Interface()
	}
	data, err := json.Marshal(in)
	if err != nil {
		return false
	}
	out := reflect.New(v.Type())
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, out.Interface()); err != nil {
		return false
	}
	v.Set(out.Elem())
	return true
}

// wireValue changes the settable v in place as the round trip would (see wireCopy).
func wireValue(v reflect.Value) bool {
	t := v.Type()
	if t.Kind() != reflect.Pointer {
		// (A pointer has the methods of what it points to; it is handled below.)
		if done, ok := wireKnown(v); done {
			return ok
		}
		if compactjson.HasOwnCodec(t) {
			return roundTrip(v)
		}
	}
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		if compactjson.HasOwnCodec(t.Elem()) {
			if isKnown(t.Elem()) {
				// A pointer to a value that encodes as null decodes as nil.
				if encodesNull(v.Elem()) {
					v.SetZero()
					return true
				}
				return wireValue(v.Elem())
			}
			return roundTrip(v)
		}
		switch t.Elem().Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			// A pointer to a nil list, map or pointer encodes as null, which decodes as a
			// nil pointer.
			if v.Elem().IsNil() {
				v.SetZero()
				return true
			}
		}
		return wireValue(v.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !compactjson.HasOwnCodec(t.Elem()) {
			return true // base64, both ways
		}
		for i := 0; i < v.Len(); i++ {
			if !wireValue(v.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if t.Key().Kind() != reflect.String || compactjson.HasOwnCodec(t.Key()) {
			return false
		}
		if v.Len() == 0 {
			return true
		}
		if t == stringMapType {
			// Labels and annotations, read without reflect's map iterator, which copies every
			// key and value it hands out to the heap.
			for k, e := range v.Interface().(map[string]string) {
				if !utf8.ValidString(k) || !utf8.ValidString(e) {
					return false
				}
			}
			return true
		}
		scalar := t.Elem().Kind() == reflect.String && !compactjson.HasOwnCodec(t.Elem())
		it := v.MapRange()
		var e reflect.Value
		for it.Next() {
			if !utf8.ValidString(it.Key().String()) {
				return false
			}
			if scalar {
				if !utf8.ValidString(it.Value().String()) {
					return false
				}
				continue
			}
			if !e.IsValid() {
				e = reflect.New(t.Elem()).Elem()
			}
			e.Set(it.Value())
			if !wireValue(e) {
				return false
			}
			v.SetMapIndex(it.Key(), e)
		}
		return true
	case reflect.Struct:
		return wireStruct(v)
	}
	// Floats, interfaces, arrays, channels, functions.
	return false
}

// wireStruct changes the fields of the settable struct v as the round trip would.
func wireStruct(v reflect.Value) bool {
	for _, f := range compactjson.Fields(v.Type()) {
		fv := v.Field(f.Index)
		switch {
		case f.Refuse:
			return false
		case f.Skip:
			if !fv.IsZero() {
				return false
			}
			continue
		}
		switch fv.Kind() {
		case reflect.Slice, reflect.Map:
			if fv.Len() == 0 && !fv.IsNil() && f.OmitEmpty && !compactjson.HasOwnCodec(fv.Type()) {
				fv.SetZero()
				continue
			}
		}
		if !wireValue(fv) {
			return false
		}
	}
	return true
}

// The types with methods of their own that every object has (the creation time, the managed
// fields' times and sets; a lease's renewal time), which wireKnown treats without encoding them.
var (
	metaTimeType      = reflect.TypeFor[metav1.Time]()
	metaMicroTimeType = reflect.TypeFor[metav1.MicroTime]()
	metaFieldsV1Type  = reflect.TypeFor[metav1.FieldsV1]()
)

// jsonNull is the JSON literal null.
var jsonNull = []byte("null")

func isKnown(t reflect.Type) bool {
	return t == metaTimeType || t == metaMicroTimeType || t == metaFieldsV1Type
}

// encodesNull tells whether the value v of a type isKnown encodes as null: a zero time, a set
// without bytes or whose bytes are null (a set writes its bytes as they are, and the decoder
// makes null behind a pointer a nil pointer).
func encodesNull(v reflect.Value) bool {
	switch v.Type() {
	case metaTimeType:
		return v.Addr().Interface().(*metav1.Time).IsZero()
	case metaMicroTimeType:
		return v.Addr().Interface().(*metav1.MicroTime).IsZero()
	case metaFieldsV1Type:
		raw := v.Addr().Interface().(*metav1.FieldsV1).Raw
		return raw == nil || bytes.Equal(raw, jsonNull)
	}
	return false
}

// wireKnown does what the round trip does to a value of a type isKnown, and says done=false for
// other types. A time encodes in UTC, to the second (Time) or microsecond (MicroTime), as
// null when zero, and decodes in the local zone: the same instant cut to that precision, in the
// local zone, which is what time.Unix makes. Years before 1 or after 9999, which the format
// does not carry as it parses them, take the round trip itself. A set of managed fields whose
// bytes are null decodes with none (its decoder leaves the set as it was); otherwise it keeps
// its bytes when encoding/json would write them as they are (valid JSON without spaces outside
// strings and without the characters it escapes: <, >, & and U+2028, U+2029), and takes the
// round trip itself otherwise.
func wireKnown(v reflect.Value) (done, ok bool) {
	switch v.Type() {
	case metaTimeType:
		t := v.Addr().Interface().(*metav1.Time)
		switch {
		case t.IsZero():
			*t = metav1.Time{}
		case inYears(t.Time):
			t.Time = time.Unix(t.Unix(), 0)
		default:
			return true, roundTrip(v)
		}
		return true, true
	case metaMicroTimeType:
		t := v.Addr().Interface().(*metav1.MicroTime)
		switch {
		case t.IsZero():
			*t = metav1.MicroTime{}
		case inYears(t.Time):
			t.Time = time.Unix(t.Unix(), int64(t.Nanosecond()/1000*1000))
		default:
			return true, roundTrip(v)
		}
		return true, true
	case metaFieldsV1Type:
		f := v.Addr().Interface().(*metav1.FieldsV1)
		if bytes.Equal(f.Raw, jsonNull) {
			// The set's decoder leaves a set it reads null from as it was: empty.
			f.Raw = nil
			return true, true
		}
		if f.Raw != nil && !plainCompact(f.Raw) {
			return true, roundTrip(v)
		}
		return true, true
	}
	return false, false
}

// inYears tells whether t's year in UTC is one the time format writes and reads back.
func inYears(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// plainCompact tells whether b is valid JSON that encoding/json's compaction (with HTML
// escaping) leaves as it is.
func plainCompact(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			return false
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return json.Valid(b)
}
