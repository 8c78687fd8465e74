package allocation

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// sameResources must agree with equality.Semantic.DeepEqual, which it stands in for.
func TestSameResourcesIsSemanticEqual(t *testing.T) {
	list := func(kv ...string) v1.ResourceList {
		l := v1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	cases := []struct {
		name string
		r    v1.ResourceRequirements
	}{
		{"zero", v1.ResourceRequirements{}},
		{"empty lists", v1.ResourceRequirements{Limits: v1.ResourceList{}, Requests: v1.ResourceList{}, Claims: []v1.ResourceClaim{}}},
		{"cpu request", v1.ResourceRequirements{Requests: list("cpu", "100m")}},
		{"cpu request, other format", v1.ResourceRequirements{Requests: list("cpu", "0.1")}},
		{"cpu request, more", v1.ResourceRequirements{Requests: list("cpu", "200m")}},
		{"cpu limit", v1.ResourceRequirements{Limits: list("cpu", "100m")}},
		{"memory request", v1.ResourceRequirements{Requests: list("memory", "100m")}},
		{"two requests", v1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "64Mi")}},
		{"two requests, other memory", v1.ResourceRequirements{Requests: list("cpu", "100m", "memory", "67108864")}},
		{"both", v1.ResourceRequirements{Requests: list("cpu", "100m"), Limits: list("cpu", "1")}},
		{"claim", v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}},
		{"claim with request", v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu", Request: "one"}}}},
		{"two claims", v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}, {Name: "nic"}}}},
	}
	for _, a := range cases {
		for _, b := range cases {
			if got, want := sameResources(&a.r, &b.r), equality.Semantic.DeepEqual(a.r, b.r); got != want {
				t.Errorf("sameResources(%s, %s) = %v, want %v as equality.Semantic.DeepEqual", a.name, b.name, got, want)
			}
		}
	}
}
