package staticpod

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/podvalidation"
)

// checkDecoded fails unless a pod that decoded without error is fully prepared and valid.
func checkDecoded(t *testing.T, pod *v1.Pod, opts Options) {
	t.Helper()
	if pod == nil {
		t.Fatal("decoded without error but returned a nil pod")
	}
	if errs := podvalidation.ValidatePodCreate(pod, podvalidation.StaticPod); len(errs) > 0 {
		t.Errorf("decoded pod fails validation: %v", errs)
	}
	if res, err := apiReference(pod); res != "" || err != nil {
		t.Errorf("decoded pod references %q (%v)", res, err)
	}
	if pod.UID == "" || pod.Annotations["kubernetes.io/config.hash"] != string(pod.UID) {
		t.Errorf("decoded pod has UID %q and hash %q, want them set and equal", pod.UID, pod.Annotations["kubernetes.io/config.hash"])
	}
	if !strings.HasSuffix(pod.Name, "-"+strings.ToLower(opts.NodeName)) || pod.Spec.NodeName != opts.NodeName || pod.Status.Phase != v1.PodPending {
		t.Errorf("decoded pod %q on %q in phase %q, want the static-pod defaults", pod.Name, pod.Spec.NodeName, pod.Status.Phase)
	}
}

func fuzzSeeds(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx:1.27\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: kube-system\n  uid: pinned\nspec:\n  containers:\n  - name: web\n    image: nginx:1.27\n"))
	f.Add(mustJSON(f, fullySpecifiedPod()))
	f.Add([]byte(`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v}]\n  containers:\n  - name: c\n    image: i:latest\n    resources: {limits: {cpu: 100m}}\n    ports: [{containerPort: 80}]\n    livenessProbe: {httpGet: {port: 80}}\n"))
	f.Add([]byte(""))
	f.Add([]byte("\x01\x02\x03"))
}

func FuzzDecodePod(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []Options{
			{NodeName: "node1", Source: "/etc/kubernetes/manifests/p.yaml", IsFile: true},
			{NodeName: "node1", Source: "http://x/pods"},
		} {
			pod, parsed, err := DecodePod(data, opts)
			if !parsed && err == nil {
				t.Fatalf("DecodePod() = not parsed without an error")
			}
			if err == nil {
				checkDecoded(t, pod, opts)
			} else if pod != nil {
				t.Errorf("DecodePod() returned a pod with error %v", err)
			}
		}
	})
}

func FuzzDecodePodList(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{NodeName: "node1", Source: "http://x/pods"}
		pods, parsed, err := DecodePodList(data, opts)
		if !parsed && err == nil {
			t.Fatalf("DecodePodList() = not parsed without an error")
		}
		if err != nil {
			if pods != nil {
				t.Errorf("DecodePodList() returned pods with error %v", err)
			}
			return
		}
		for _, pod := range pods {
			checkDecoded(t, pod, opts)
		}
	})
}
