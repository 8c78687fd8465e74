package staticpod

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// cacheQuantityStrings makes every Quantity of the pod that an encoder reaches through a pointer
// hold its canonical string. Quantity.String caches the string in the Quantity when it has none,
// and a decoded Quantity often has none: a quantity left out (a zero divisor), one not spelt
// canonically ("1024Ki"), and many canonical ones, since ParseQuantity keeps the text it parsed
// only for some forms ("1Gi", "100Mi" and "500m" keep it, "64Mi" and "8Gi" do not). A Quantity's
// protobuf encoding calls String: on a pod shared read-only from PodConfig on, the mirror pod's
// create (which shares the pod's spec) would write into it while the kubelet server's handlers
// read it. The quantities in resource lists need nothing: a map's values are encoded, and their
// String called, on copies. Caching a string changes no value and no encoding.
func cacheQuantityStrings(pod *v1.Pod) {
	for _, c := range allContainers(&pod.Spec) {
		for i := range c.Env {
			if from := c.Env[i].ValueFrom; from != nil {
				cacheFieldRef(from.ResourceFieldRef)
			}
		}
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.EmptyDir != nil {
			cacheString(v.EmptyDir.SizeLimit)
		}
		if v.DownwardAPI != nil {
			for j := range v.DownwardAPI.Items {
				cacheFieldRef(v.DownwardAPI.Items[j].ResourceFieldRef)
			}
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.DownwardAPI != nil {
					for j := range src.DownwardAPI.Items {
						cacheFieldRef(src.DownwardAPI.Items[j].ResourceFieldRef)
					}
				}
			}
		}
	}
}

func cacheFieldRef(ref *v1.ResourceFieldSelector) {
	if ref != nil {
		cacheString(&ref.Divisor)
	}
}

func cacheString(q *resource.Quantity) {
	if q != nil {
		_ = q.String()
	}
}
