package nodestatus

import (
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quantities are values a random status draws its quantities from: several spell the same
// amount, which the semantic walk finds equal.
var quantities = []resource.Quantity{
	resource.MustParse("0"), resource.MustParse("1"), resource.MustParse("1000m"),
	resource.MustParse("1k"), resource.MustParse("1000"), resource.MustParse("1Ki"), resource.MustParse("1024"),
}

// fill sets v (settable) to a random value: strings from a small alphabet, small numbers, lists
// and maps of up to two entries, nil or empty ones too, so that two values drawn apart are often
// equal, or equal but for a nil and an empty list.
func fill(r *rand.Rand, v reflect.Value) {
	if v.Type() == reflect.TypeFor[resource.Quantity]() {
		v.Set(reflect.ValueOf(quantities[r.IntN(len(quantities))].DeepCopy()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString([]string{"", "a", "b"}[r.IntN(3)])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.IntN(3)))
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem())
	case reflect.Slice:
		n := r.IntN(3)
		if n == 0 && r.IntN(2) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(r, v.Index(i))
		}
	case reflect.Map:
		n := r.IntN(3)
		if n == 0 && r.IntN(2) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for range n {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(r, k)
			fill(r, e)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	default:
		panic("fill: no values for " + v.Type().String())
	}
}

// mutate draws again one part of v: itself, or, going down a random path, a field, an element or
// what a pointer points to.
func mutate(r *rand.Rand, v reflect.Value) {
	for r.IntN(4) != 0 {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeFor[resource.Quantity]() {
				break
			}
			f := r.IntN(v.NumField())
			if !v.Type().Field(f).IsExported() {
				break
			}
			v = v.Field(f)
			continue
		case reflect.Pointer:
			if !v.IsNil() {
				v = v.Elem()
				continue
			}
		case reflect.Slice:
			if v.Len() > 0 {
				v = v.Index(r.IntN(v.Len()))
				continue
			}
		}
		break
	}
	fill(r, v)
}

// pureUnderRace is why a test of functions that only read their arguments and answer, which
// takes tens of seconds under -race, skips there: the race detector needs a second goroutine to
// find anything; the plain suite runs it.
const pureUnderRace = "pure functions on the test's goroutine, nothing for the race detector"

// TestRestEqualIsTheSemanticWalk compares restEqual with apiequality.Semantic.DeepEqual, which the
// kubelet compares the statuses with, on random statuses and random changes of them. Every
// exported field is drawn, so a field the API adds to one of the types restEqual compares by
// hand, and that restEqual leaves out, makes the answers differ.
func TestRestEqualIsTheSemanticWalk(t *testing.T) {
	if raceEnabled {
		t.Skip(pureUnderRace)
	}
	r := rand.New(rand.NewPCG(22, 28))
	var equal, differ int
	for i := range 20000 {
		var a v1.NodeStatus
		fill(r, reflect.ValueOf(&a).Elem())
		b := a.DeepCopy()
		if i%10 == 0 {
			fill(r, reflect.ValueOf(b).Elem())
		} else {
			for range 1 + r.IntN(2) {
				mutate(r, reflect.ValueOf(b).Elem())
			}
		}
		x, y := a, *b
		x.Conditions, y.Conditions = nil, nil
		want := apiequality.Semantic.DeepEqual(&x, &y)
		if got := restEqual(&a, b); got != want {
			t.Fatalf("restEqual(\n%#v,\n%#v) = %v, the semantic walk finds %v", a, *b, got, want)
		}
		if want {
			equal++
		} else {
			differ++
		}
	}
	// Both answers must be common for the comparison to say anything.
	if equal < 2000 || differ < 2000 {
		t.Errorf("random statuses: %d equal, %d different; want at least 2000 of each", equal, differ)
	}
}

// TestRestEqualFields pins the fields of the types restEqual compares by hand (with ==, or each
// field named): a field the API adds must be added to the comparison.
func TestRestEqualFields(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[v1.NodeStatus](), []string{"Capacity", "Allocatable", "Phase", "Conditions", "Addresses", "DaemonEndpoints", "NodeInfo", "Images", "VolumesInUse", "VolumesAttached", "Config", "RuntimeHandlers", "Features", "DeclaredFeatures"}},
		{reflect.TypeFor[v1.NodeSystemInfo](), []string{"MachineID", "SystemUUID", "BootID", "KernelVersion", "OSImage", "ContainerRuntimeVersion", "KubeletVersion", "KubeProxyVersion", "OperatingSystem", "Architecture", "Swap"}},
		{reflect.TypeFor[v1.ContainerImage](), []string{"Names", "SizeBytes"}},
		{reflect.TypeFor[v1.NodeRuntimeHandler](), []string{"Name", "Features"}},
		{reflect.TypeFor[v1.NodeAddress](), []string{"Type", "Address"}},
		{reflect.TypeFor[v1.AttachedVolume](), []string{"Name", "DevicePath"}},
		{reflect.TypeFor[v1.NodeDaemonEndpoints](), []string{"KubeletEndpoint"}},
		{reflect.TypeFor[v1.DaemonEndpoint](), []string{"Port"}},
	} {
		var got []string
		for i := range tc.typ.NumField() {
			got = append(got, tc.typ.Field(i).Name)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("fields of %v = %v, restEqual compares %v", tc.typ, got, tc.want)
		}
	}
}
