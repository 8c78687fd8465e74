package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// FuzzDecode checks the whole path of a document, whatever it holds: Decode never panics and
// returns a configuration or an error, never both; defaulting twice changes nothing;
// FromV1beta1 accepts only what Validate accepts, and says the same of the same document every
// time.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: /etc/kubernetes/manifests\nmaxPods: 20\n"))
	f.Add([]byte("serializeImagePulls: false\nmaxParallelImagePulls: 2\ncrashLoopBackOff: {maxContainerRestartPeriod: 30s}\nfeatureGates: {AllAlpha: true}\n"))
	f.Add([]byte("capacity: {cpu: \"2\", memory: 4Gi}\nkubeReserved: {cpu: 500m}\nsystemReserved: {memory: 1Gi}\nevictionHard: {memory.available: 10%}\nmergeDefaultEvictionSettings: true\n"))
	f.Add([]byte("nodeStatusUpdateFrequency: 4s\nstaticPodURLHeader: {a: [b]}\naddress: \"::\"\nport: 0\nenableServer: false\n"))
	f.Add([]byte("maxPodz: 3\nmaxPods: 1\nmaxPods: 2\n"))
	f.Add([]byte(`{"syncFrequency": "-1s", "featureGates": {"Nope": true}}`))
	f.Add([]byte("[1]"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, strictErr, err := config.Decode(data)
		if err != nil {
			if v != nil || strictErr != nil {
				t.Errorf("Decode() = %v, %v, %v: want only the error", v, strictErr, err)
			}
			return
		}
		config.SetDefaults(v)
		again := &config.V1beta1{KubeletConfiguration: *v.KubeletConfiguration.DeepCopy(), Capacity: v.Capacity.DeepCopy()}
		config.SetDefaults(again)
		if diff := cmp.Diff(v, again); diff != "" {
			t.Errorf("SetDefaults() is not idempotent (-once +twice):\n%s", diff)
		}
		c, err := config.FromV1beta1(v)
		c2, err2 := config.FromV1beta1(again)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Errorf("FromV1beta1() = %v, then %v, for the same document", err, err2)
		}
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Errorf("FromV1beta1() accepted a configuration Validate refuses: %v", err)
		}
		if diff := cmp.Diff(c, c2); diff != "" {
			t.Errorf("FromV1beta1() differs for the same document (-first +second):\n%s", diff)
		}
	})
}
