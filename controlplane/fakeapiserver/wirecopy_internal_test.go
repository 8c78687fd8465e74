package fakeapiserver

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// filler fills Go values with random content of the kinds the JSON round trip treats apart:
// times with fractions of a second and locations (and years the format cannot carry), zero
// times behind pointers, quantities and int-or-strings, raw managed fields' sets and extensions
// with and without spaces or null, nil, empty and full lists and maps, strings that the encoding
// escapes, and now and then invalid UTF-8 and a kind in the type meta.
type filler struct {
	rng     *rand.Rand
	invalid bool // whether strings may be invalid UTF-8
}

var (
	timeType      = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
	quantityType  = reflect.TypeFor[apiresource.Quantity]()
	intOrStrType  = reflect.TypeFor[intstr.IntOrString]()
	fieldsV1Type  = reflect.TypeFor[metav1.FieldsV1]()
	rawExtType    = reflect.TypeFor[runtime.RawExtension]()
	typeMetaType  = reflect.TypeFor[metav1.TypeMeta]()
)

func (f filler) instant() time.Time {
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("X", 3600)}
	switch f.rng.Intn(40) {
	case 0:
		return time.Date(10000+f.rng.Intn(3), 1, 1, 0, 0, 0, 0, time.UTC)
	case 1:
		return time.Time{}.In(locs[f.rng.Intn(len(locs))]) // zero, with a location
	}
	return time.Unix(f.rng.Int63n(4e9), f.rng.Int63n(1e9)).In(locs[f.rng.Intn(len(locs))])
}

func (f filler) str() string {
	if f.invalid && f.rng.Intn(100) == 0 {
		return "bad\xff"
	}
	return []string{"", "a", "node-1", "<&>", "ü", "\u2028", `"q"`, "x y"}[f.rng.Intn(8)]
}

func (f filler) fill(v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	switch v.Type() {
	case timeType:
		if f.rng.Intn(4) != 0 {
			v.Set(reflect.ValueOf(metav1.Time{Time: f.instant()}))
		}
		return
	case microTimeType:
		if f.rng.Intn(4) != 0 {
			v.Set(reflect.ValueOf(metav1.MicroTime{Time: f.instant()}))
		}
		return
	case quantityType:
		v.Set(reflect.ValueOf(apiresource.MustParse([]string{"0", "1", "100m", "1Gi", "0.5", "1e3", "1024Ki"}[f.rng.Intn(7)])))
		return
	case intOrStrType:
		if f.rng.Intn(2) == 0 {
			v.Set(reflect.ValueOf(intstr.FromInt32(f.rng.Int31n(100))))
		} else {
			v.Set(reflect.ValueOf(intstr.FromString(f.str())))
		}
		return
	case fieldsV1Type:
		v.Set(reflect.ValueOf(metav1.FieldsV1{Raw: []byte([]string{`{"f:a":{}}`, `{ "f:a" : {} }`, `{}`, `{"f:&lt;":{}}`, `{"f:<a>":{}}`, `{"f:\u003c":{}}`, `null`}[f.rng.Intn(7)])}))
		return
	case rawExtType:
		if f.rng.Intn(2) == 0 {
			v.Set(reflect.ValueOf(runtime.RawExtension{Raw: []byte([]string{`{"a":1}`, `{ "a": [1, 2] }`}[f.rng.Intn(2)])}))
		}
		return
	case typeMetaType:
		return // set by the test
	}
	if depth > 14 {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.rng.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.rng.Intn(200) - 50))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.rng.Intn(200)))
	case reflect.String:
		v.SetString(f.str())
	case reflect.Pointer:
		if f.rng.Intn(3) != 0 {
			p := reflect.New(v.Type().Elem())
			f.fill(p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		switch n := f.rng.Intn(6); {
		case n == 0:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		case n <= 2:
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := 0; i < n; i++ {
				f.fill(s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := f.rng.Intn(6); {
		case n == 0:
			v.Set(reflect.MakeMap(v.Type()))
		case n <= 2:
			m := reflect.MakeMap(v.Type())
			for i := 0; i < n; i++ {
				k := reflect.New(v.Type().Key()).Elem()
				f.fill(k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				f.fill(e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f.fill(v.Field(i), depth+1)
		}
	}
}

// TestWireCopyMatchesTheRoundTrip fills objects of every kind Direct sends (pods, nodes, leases,
// events, token requests) with random content (filler) and wants wireCopy, where it answers, to
// give exactly what the JSON round trip gives (reflect.DeepEqual: times' locations and
// monotonic readings, nil against empty, quantities' cached forms), and to leave the object
// it copies as it was.
func TestWireCopyMatchesTheRoundTrip(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	kinds := []*resource{podsTarget, nodesTarget, leasesTarget, eventsTarget, tokenRequestResource}
	copied := map[string]int{}
	const seeds = 400
	for seed := int64(0); seed < seeds; seed++ {
		for _, res := range kinds {
			f := filler{rng: rand.New(rand.NewSource(seed)), invalid: seed%4 == 3}
			obj := res.newObj()
			f.fill(reflect.ValueOf(obj).Elem(), 0)
			switch f.rng.Intn(8) {
			case 0:
				obj.GetObjectKind().SetGroupVersionKind(res.gvk())
			case 1:
				obj.GetObjectKind().SetGroupVersionKind(res.gv.WithKind("Other"))
			case 2:
				gvk := res.gvk()
				gvk.Version = "v0"
				obj.GetObjectKind().SetGroupVersionKind(gvk)
			}
			before := obj.DeepCopyObject()
			got, ok := wireCopy(res, obj)
			if !reflect.DeepEqual(before, obj) {
				t.Fatalf("seed %d %s: wireCopy changed the object it copies", seed, res.kind)
			}
			if !ok {
				continue
			}
			copied[res.kind]++
			want, err := wireRoundTrip(res, obj)
			if err != nil {
				t.Fatalf("seed %d %s: wireCopy answered where the round trip fails with %v", seed, res.kind, err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("seed %d %s: wireCopy differs from the round trip:\n got %s\nwant %s\n(equal JSON: %v)", seed, res.kind, g, w, string(g) == string(w))
			}
		}
	}
	t.Logf("wireCopy answered for %v of %d objects of each kind", copied, seeds)
	// The comparison means something only if wireCopy answered for many objects of each kind.
	for _, res := range kinds {
		if copied[res.kind] < seeds/4 {
			t.Errorf("wireCopy answered for %d of %d %s objects, want at least %d", copied[res.kind], seeds, res.kind, seeds/4)
		}
	}
}

// TestWireCopyNullSet wants a managed fields' set whose bytes are null to come out as the round
// trip makes it: the entry's pointer to the set nil, a set held by value empty.
func TestWireCopyNullSet(t *testing.T) {
	obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{
		Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte("null")}}}}}
	got, ok := wireCopy(podsTarget, obj)
	if !ok {
		t.Fatal("wireCopy refused a pod whose managed fields' set is null")
	}
	want, err := wireRoundTrip(podsTarget, obj)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.(*corev1.Pod).ManagedFields[0].FieldsV1, want.(*corev1.Pod).ManagedFields[0].FieldsV1; !reflect.DeepEqual(g, w) {
		t.Errorf("wireCopy's set = %#v, the round trip's = %#v", g, w)
	}

	type byValue struct {
		F metav1.FieldsV1 `json:"f"`
	}
	v := byValue{F: metav1.FieldsV1{Raw: []byte("null")}}
	w := v
	if !wireValue(reflect.ValueOf(&v).Elem()) || !roundTrip(reflect.ValueOf(&w).Elem()) {
		t.Fatal("refused a set held by value whose bytes are null")
	}
	if !reflect.DeepEqual(v, w) || v.F.Raw != nil {
		t.Errorf("a set held by value whose bytes are null = %q, the round trip's %q, want both none", v.F.Raw, w.F.Raw)
	}
}

// TestWireValuePointerToNil wants a pointer to a nil list, map or pointer, which the body
// carries as null, to come out nil as from the round trip.
func TestWireValuePointerToNil(t *testing.T) {
	type S struct {
		L  *[]string          `json:"l,omitempty"`
		M  *map[string]string `json:"m,omitempty"`
		P  **string           `json:"p,omitempty"`
		E  *[]string          `json:"e,omitempty"` // a pointer to an empty list stays one
		LL []*[]string        `json:"ll"`
	}
	var l []string
	var m map[string]string
	var p *string
	e := []string{}
	in := S{L: &l, M: &m, P: &p, E: &e, LL: []*[]string{&l}}
	got := in
	got.LL = []*[]string{&l}
	if !wireValue(reflect.ValueOf(&got).Elem()) {
		t.Fatal("wireValue refused")
	}
	want := in
	want.LL = []*[]string{&l}
	if !roundTrip(reflect.ValueOf(&want).Elem()) {
		t.Fatal("the round trip failed")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wireValue = %+v, the round trip = %+v", got, want)
	}
	if got.L != nil || got.M != nil || got.P != nil || got.LL[0] != nil || got.E == nil {
		t.Errorf("wireValue = %+v, want nil pointers but for E", got)
	}
}

// TestWireCopyRefuses wants wireCopy to leave to the round trip what it cannot tell: another
// kind or type, invalid UTF-8, a year the time format cannot carry.
func TestWireCopyRefuses(t *testing.T) {
	lease := func(change func(*coordinationv1.Lease)) runtime.Object {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), RenewTime: &metav1.MicroTime{Time: time.Unix(1e9, 123456789)}}}
		change(l)
		return l
	}
	if _, ok := wireCopy(leasesTarget, lease(func(*coordinationv1.Lease) {})); !ok {
		t.Error("wireCopy() refused a lease renewal")
	}
	for name, obj := range map[string]runtime.Object{
		"another kind":  lease(func(l *coordinationv1.Lease) { l.Kind, l.APIVersion = "Node", "v1" }),
		"another type":  &corev1.Node{},
		"invalid UTF-8": lease(func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("\xff") }),
		"a label key":   lease(func(l *coordinationv1.Lease) { l.Labels = map[string]string{"\xfe": "a"} }),
		"a late year": lease(func(l *coordinationv1.Lease) {
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
		}),
	} {
		if _, ok := wireCopy(leasesTarget, obj); ok {
			t.Errorf("%s: wireCopy() = true, want false", name)
		}
	}
}
