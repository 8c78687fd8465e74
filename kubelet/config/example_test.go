package config_test

import (
	"fmt"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// The path of a kubelet config file: decode (strict, then lenient), default, lay the flags over
// it, convert and validate.
func Example() {
	v, strictErr, err := config.Decode([]byte(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
maxParallelImagePulls: 3
cgroupDriver: systemd
maxPodz: 20
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("strict:", strictErr)
	config.SetDefaults(v)
	v.MaxPods = 20 // --max-pods 20: a flag wins over the file
	c, err := config.FromV1beta1(v)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Sources.StaticPodPath, c.Sources.FileCheckFrequency, c.Machine.MaxPods, c.ImagePulls.Serialize, *c.ImagePulls.MaxParallel)
	// Output:
	// strict: strict decoding error: unknown field "maxPodz"
	// /etc/kubernetes/manifests 20s 20 false 3
}

// A configuration the kubelet refuses is refused with the kubelet's words.
func ExampleFromV1beta1() {
	v, _, err := config.Decode([]byte("serializeImagePulls: true\nmaxParallelImagePulls: 3\nfeatureGates: {Nope: true}\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	config.SetDefaults(v)
	_, err = config.FromV1beta1(v)
	fmt.Println(err)
	// Output:
	// unrecognized feature gate: Nope
	// invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false
}
