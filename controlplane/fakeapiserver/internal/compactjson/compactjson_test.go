package compactjson

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMembers wants an object read member by member, a list split into its elements, and a
// member found by name, with malformed input refused.
func TestMembers(t *testing.T) {
	obj := []byte(`{"a":1,"b":{"c":[1,"x,]}"]},"d\"e":"f","g":null}`)
	var got [][2]string
	for i := 1; ; {
		k, v, next, ok := Member(obj, i)
		if !ok {
			t.Fatalf("Member(%d) refused", i)
		}
		if k == nil {
			if next != len(obj) {
				t.Errorf("the object ended at %d, want %d", next, len(obj))
			}
			break
		}
		got = append(got, [2]string{string(k), string(v)})
		i = next
	}
	want := [][2]string{{`"a"`, `1`}, {`"b"`, `{"c":[1,"x,]}"]}`}, {`"d\"e"`, `"f"`}, {`"g"`, `null`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		want string
		ok   bool
	}{{"b", `{"c":[1,"x,]}"]}`, true}, {"g", "null", true}, {"z", "", false}} {
		v, ok := MemberValue(obj, tc.name)
		if string(v) != tc.want || ok != tc.ok {
			t.Errorf("MemberValue(%q) = %q, %v; want %q, %v", tc.name, v, ok, tc.want, tc.ok)
		}
	}
	if _, _, _, ok := Member([]byte(`{"a"1}`), 1); ok {
		t.Error("Member() read a member without a colon")
	}

	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{`[]`, nil, true},
		{`[1,{"a":[2,3]},"]"]`, []string{`1`, `{"a":[2,3]}`, `"]"`}, true},
		{`[1,2`, nil, false},
		{`{}`, nil, false},
	} {
		els, ok := Elements([]byte(tc.in))
		var got []string
		for _, e := range els {
			got = append(got, string(e))
		}
		if ok != tc.ok || !cmp.Equal(got, tc.want) {
			t.Errorf("Elements(%s) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestScalars wants the kinds of values, integers told from other numbers, and keys unquoted.
func TestScalars(t *testing.T) {
	for in, want := range map[string]byte{`{}`: '{', `[]`: '[', `"s"`: '"', `true`: 't', `false`: 't', `null`: 'n', `-1`: '0', `2.5`: '0'} {
		if got := Kind(in[0]); got != want {
			t.Errorf("Kind(%s) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{`12`: true, `-3`: true, `1.5`: false, `1e3`: false, `2E1`: false} {
		if got := IsInteger([]byte(in)); got != want {
			t.Errorf("IsInteger(%s) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]string{`"plain"`: "plain", `"a\"b"`: `a"b`, `"\u00e9"`: "é"} {
		if got, ok := Unquote([]byte(in)); !ok || got != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// TestFields wants each struct field's treatment by encoding/json, and the types that encode
// themselves told apart.
func TestFields(t *testing.T) {
	type inner struct{}
	type sample struct {
		Plain    string
		Omitted  []int `json:"o,omitempty"`
		Dropped  int   `json:"-"`
		AsString int   `json:"n,string"`
		hidden   int
		*inner
	}
	// Fields reads the type alone; the value only marks the unexported fields as used.
	_ = sample{hidden: 1, inner: &inner{}}
	got := Fields(reflect.TypeFor[sample]())
	want := []Field{{Index: 0}, {Index: 1, OmitEmpty: true}, {Index: 2, Skip: true}, {Index: 3, Refuse: true}, {Index: 4, Skip: true}, {Index: 5, Refuse: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fields() (-want +got):\n%s", diff)
	}
	_ = sample{}.hidden
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[metav1.Time](): true,
		reflect.TypeFor[time.Time]():   true,
		reflect.TypeFor[string]():      false,
		reflect.TypeFor[sample]():      false,
	} {
		if got := HasOwnCodec(typ); got != want {
			t.Errorf("HasOwnCodec(%v) = %v, want %v", typ, got, want)
		}
	}
}

// TestHasReplacementEscape wants the escape encoding/json writes for invalid UTF-8 found, and a
// valid U+FFFD, which it writes as itself, not.
func TestHasReplacementEscape(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want bool
	}{
		{name: "plain", in: map[string]string{"a": "b"}},
		{name: "valid U+FFFD", in: "x\uFFFDy"},
		{name: "invalid UTF-8", in: "x\xffy", want: true},
		{name: "invalid UTF-8 in a key", in: map[string]int{"\xfe": 1}, want: true},
	} {
		raw, err := json.Marshal(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := HasReplacementEscape(raw); got != tc.want {
			t.Errorf("%s: HasReplacementEscape(%s) = %v, want %v", tc.name, raw, got, tc.want)
		}
	}
}
