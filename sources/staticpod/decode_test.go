package staticpod

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// containerSecurityContext is the kubelet tests' ValidSecurityContextWithContainerDefaults.
func containerSecurityContext() *v1.SecurityContext {
	priv := false
	return &v1.SecurityContext{Capabilities: &v1.Capabilities{}, Privileged: &priv}
}

// fullySpecifiedPod is the pod of the kubelet's TestDecodeSinglePod: every field the decoder would
// default is already set, and the status carries a pod IP.
func fullySpecifiedPod() *v1.Pod {
	grace := int64(30)
	links := v1.DefaultEnableServiceLinks
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "test", UID: "12345", Namespace: "mynamespace"},
		Spec: v1.PodSpec{
			RestartPolicy:                 v1.RestartPolicyAlways,
			DNSPolicy:                     v1.DNSClusterFirst,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name:                     "image",
				Image:                    "test/image",
				ImagePullPolicy:          v1.PullIfNotPresent,
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: v1.TerminationMessageReadFile,
				SecurityContext:          containerSecurityContext(),
			}},
			SecurityContext:    &v1.PodSecurityContext{},
			SchedulerName:      v1.DefaultSchedulerName,
			EnableServiceLinks: &links,
		},
		Status: v1.PodStatus{PodIP: "1.2.3.4", PodIPs: []v1.PodIP{{IP: "1.2.3.4"}}},
	}
}

// withStaticDefaults returns what applyDefaults makes of in for node "node1".
func withStaticDefaults(in *v1.Pod, isFile bool) *v1.Pod {
	want := in.DeepCopy()
	want.TypeMeta = metav1.TypeMeta{}
	want.Name += "-node1"
	if want.Namespace == "" {
		want.Namespace = "default"
	}
	want.Spec.NodeName = "node1"
	want.Annotations = map[string]string{kubecontainer.ConfigHashAnnotationKey: string(want.UID)}
	if isFile {
		want.Spec.Tolerations = []v1.Toleration{{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}
	}
	want.Status.Phase = v1.PodPending
	return want
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustYAML(t testing.TB, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeSinglePod(t *testing.T) {
	in := fullySpecifiedPod()
	opts := Options{NodeName: "node1", Source: "manifests/test.yaml", IsFile: true}
	want := withStaticDefaults(in, true)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"json", mustJSON(t, in)},
		{"yaml", mustYAML(t, in)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, parsed, err := DecodePod(tc.data, opts)
			if !parsed || err != nil {
				t.Fatalf("DecodePod() = parsed %v, err %v, want parsed true, no error", parsed, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodePod() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodePodList(t *testing.T) {
	in := fullySpecifiedPod()
	in.TypeMeta = metav1.TypeMeta{}
	list := &v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []v1.Pod{*in}}
	opts := Options{NodeName: "node1", Source: "http://example.com/pods"}
	want := []*v1.Pod{withStaticDefaults(in, false)}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"json", mustJSON(t, list)},
		{"yaml", mustYAML(t, list)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, parsed, err := DecodePodList(tc.data, opts)
			if !parsed || err != nil {
				t.Fatalf("DecodePodList() = parsed %v, err %v, want parsed true, no error", parsed, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodePodList() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodePodListEmptyAndBadItem(t *testing.T) {
	opts := Options{NodeName: "node1", Source: "http://example.com/pods"}
	pods, parsed, err := DecodePodList([]byte(`{"apiVersion":"v1","kind":"PodList","items":[]}`), opts)
	if !parsed || err != nil || len(pods) != 0 {
		t.Errorf("DecodePodList(empty) = %v, %v, %v, want no pods, parsed, no error", pods, parsed, err)
	}
	good := simplePod("good", "nginx")
	bad := simplePod("", "nginx")
	list := &v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []v1.Pod{*good, *bad}}
	pods, parsed, err = DecodePodList(mustJSON(t, list), opts)
	if !parsed || !errors.Is(err, ErrInvalidPod) || pods != nil {
		t.Errorf("DecodePodList(one bad item) = %v, %v, %v, want nil, parsed, ErrInvalidPod", pods, parsed, err)
	}
	_, parsed, err = DecodePodList(mustJSON(t, good), opts)
	if parsed || err == nil {
		t.Errorf("DecodePodList(a Pod) = parsed %v, err %v, want not parsed with an error", parsed, err)
	}
}

func simplePod(name, image string) *v1.Pod {
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}},
	}
}

func TestDecodePodRejectsAPIReferences(t *testing.T) {
	secretVolume := v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}
	for _, tc := range []struct {
		name   string
		mutate func(*v1.Pod)
		want   string
	}{
		{"clusterTrustBundle", func(p *v1.Pod) {
			name := "my-ctb"
			p.Spec.Volumes = []v1.Volume{{Name: "ctb-volume", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
				Sources: []v1.VolumeProjection{{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: &name, Path: "ctb-file"}}}}}}}
			p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "ctb-volume", MountPath: "/var/run/ctb-volume"}}
		}, "may not reference clustertrustbundles"},
		{"resourceClaims", func(p *v1.Pod) {
			claim := "some-external-claim"
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "my-claim", ResourceClaimName: &claim}}
			p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "my-claim"}}
		}, "may not reference resourceclaims"},
		{"serviceAccount", func(p *v1.Pod) { p.Spec.ServiceAccountName = "sa" }, "static pods may not reference serviceaccounts"},
		{"secretVolume", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: secretVolume}}
		}, "static pods may not reference secrets"},
		{"configMapEnv", func(p *v1.Pod) {
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "A", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k"}}}}
		}, "static pods may not reference configmaps"},
		{"configMapVolume", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}}
		}, "static pods may not reference configmaps"},
		{"pvc", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "c", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "x"}}}}
		}, "static pods may not reference persistentvolumeclaims"},
		{"imagePullSecrets", func(p *v1.Pod) { p.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "r"}} }, "static pods may not reference secrets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := fullySpecifiedPod()
			tc.mutate(pod)
			_, parsed, err := DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "f", IsFile: true})
			if !parsed || err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrAPIReference) {
				t.Errorf("DecodePod() = parsed %v, err %v, want parsed and an error containing %q", parsed, err, tc.want)
			}
		})
	}
}

func TestDecodePodAllowsLocalVolumes(t *testing.T) {
	pod := fullySpecifiedPod()
	pod.Spec.Volumes = []v1.Volume{
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc/kubernetes"}}},
		{Name: "scratch"}, // no source: defaulted to emptyDir
		{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}},
	}
	got, parsed, err := DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "f", IsFile: true})
	if !parsed || err != nil {
		t.Fatalf("DecodePod() = parsed %v, err %v, want parsed, no error", parsed, err)
	}
	if got.Spec.Volumes[1].EmptyDir == nil || got.Spec.Volumes[0].HostPath.Type == nil || *got.Spec.Volumes[2].DownwardAPI.DefaultMode != 0o644 {
		t.Errorf("DecodePod() volumes = %+v, want emptyDir, hostPath type and downwardAPI mode defaulted", got.Spec.Volumes)
	}
}

func TestDecodeSinglePodWithContainerRestartPolicy(t *testing.T) {
	pod := fullySpecifiedPod()
	always := v1.ContainerRestartPolicyAlways
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.Containers[0].RestartPolicy = &always
	if _, parsed, err := DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "f"}); !parsed || err != nil {
		t.Errorf("DecodePod() = parsed %v, err %v, want parsed, no error", parsed, err)
	}
}

func TestStaticPodNameGenerate(t *testing.T) {
	for _, tc := range []struct {
		node, want string
	}{
		{"node1", "static-pod1-node1"},
		{"Node1", "static-pod1-node1"},
		{"NODE1", "static-pod1-node1"},
	} {
		t.Run(tc.node, func(t *testing.T) {
			pod := simplePod("static-pod1", "nginx")
			pod.Spec.NodeName = strings.ToLower(tc.node)
			got := pod.DeepCopy()
			if err := applyDefaults(got, Options{NodeName: tc.node, Source: "f", IsFile: true}); err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.want {
				t.Errorf("applyDefaults(node %q).Name = %q, want %q", tc.node, got.Name, tc.want)
			}
		})
	}
	// An upper-case name is invalid, which is why the node name is lower-cased.
	_, parsed, err := DecodePod(mustJSON(t, simplePod("static-pod1-NODE1", "nginx")), Options{NodeName: "node1", Source: "f"})
	if !parsed || err == nil || !strings.Contains(err.Error(), "metadata.name: Invalid value") {
		t.Errorf("DecodePod(upper-case name) = parsed %v, err %v, want a metadata.name validation error", parsed, err)
	}
}

func TestDecodeSinglePodTerminationGracePeriodSeconds(t *testing.T) {
	pod := fullySpecifiedPod()
	grace := int64(-1)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	got, parsed, err := DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "f"})
	if !parsed || err != nil {
		t.Fatalf("DecodePod() = parsed %v, err %v, want parsed, no error", parsed, err)
	}
	if g := *got.Spec.TerminationGracePeriodSeconds; g != 1 {
		t.Errorf("DecodePod().Spec.TerminationGracePeriodSeconds = %d, want 1", g)
	}
}

var hexUID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestStaticDefaults(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n    ports:\n    - containerPort: 80\n")
	opts := Options{NodeName: "node-a", Source: "/etc/kubernetes/manifests/web.yaml", IsFile: true}
	pod, parsed, err := DecodePod(manifest, opts)
	if !parsed || err != nil {
		t.Fatalf("DecodePod() = parsed %v, err %v, want parsed, no error", parsed, err)
	}
	if !hexUID.MatchString(string(pod.UID)) {
		t.Errorf("DecodePod().UID = %q, want 32 lowercase hex characters", pod.UID)
	}
	grace := int64(30)
	links := true
	want := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-node-a", Namespace: "default", UID: pod.UID,
			Annotations: map[string]string{kubecontainer.ConfigHashAnnotationKey: string(pod.UID)}},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{
				Name: "web", Image: "nginx", ImagePullPolicy: v1.PullAlways,
				Ports:                  []v1.ContainerPort{{ContainerPort: 80, Protocol: v1.ProtocolTCP}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageReadFile,
			}},
			RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSClusterFirst, TerminationGracePeriodSeconds: &grace,
			SecurityContext: &v1.PodSecurityContext{}, SchedulerName: v1.DefaultSchedulerName, EnableServiceLinks: &links,
			NodeName:    "node-a",
			Tolerations: []v1.Toleration{{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("DecodePod() mismatch (-want +got):\n%s", diff)
	}

	// The UID is a function of content, node and location, and of nothing else.
	uid := func(data []byte, o Options) string {
		p, _, err := DecodePod(data, o)
		if err != nil {
			t.Fatal(err)
		}
		return string(p.UID)
	}
	same := uid(manifest, opts)
	if same != string(pod.UID) {
		t.Errorf("UID of the same input = %q, then %q, want equal", pod.UID, same)
	}
	edited := []byte(strings.Replace(string(manifest), "name: web\nspec", "name: web\n  labels: {a: b}\nspec", 1))
	// The kubelet's dump of the object tells nil from empty, so an empty map or list is an edit.
	emptyLabels := []byte(strings.Replace(string(manifest), "name: web\nspec", "name: web\n  labels: {}\nspec", 1))
	emptyEnv := []byte(strings.Replace(string(manifest), "image: nginx\n", "image: nginx\n    env: []\n", 1))
	reordered := []byte("kind: Pod\napiVersion: v1\nspec:\n  containers:\n  - image: nginx\n    name: web\n    ports:\n    - containerPort: 80\nmetadata:\n  name: web\n")
	if got := uid(reordered, opts); got != same {
		t.Errorf("UID of the same pod with its keys in another order = %q, want %q", got, same)
	}
	otherNode := opts
	otherNode.NodeName = "node-b"
	otherPath := opts
	otherPath.Source = "/etc/kubernetes/manifests/web2.yaml"
	http := Options{NodeName: "node-a", Source: "http://x/pods"}
	httpOtherNode := Options{NodeName: "node-b", Source: "http://x/pods"}
	for name, got := range map[string]string{
		"edited content": uid(edited, opts), "other node": uid(manifest, otherNode), "other path": uid(manifest, otherPath),
		"http": uid(manifest, http), "empty labels": uid(emptyLabels, opts), "empty env": uid(emptyEnv, opts),
	} {
		if got == same {
			t.Errorf("UID with %s = %q, want a different UID", name, got)
		}
	}
	if a, b := uid(manifest, http), uid(manifest, httpOtherNode); a != b {
		t.Errorf("http UIDs on two nodes = %q and %q, want equal (the node is not hashed)", a, b)
	}

	// A UID in the manifest is kept and becomes the hash.
	pinned := []byte(strings.Replace(string(manifest), "name: web\nspec", "name: web\n  uid: pinned-1\nspec", 1))
	if got := uid(pinned, opts); got != "pinned-1" {
		t.Errorf("UID of a pinned manifest = %q, want pinned-1", got)
	}
}

func TestToleration(t *testing.T) {
	seconds := int64(5)
	exists := v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}
	other := v1.Toleration{Key: "k", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name      string
		have      []v1.Toleration
		want      []v1.Toleration
		wantHTTP  []v1.Toleration
		wantIsNil bool
	}{
		{"none", nil, []v1.Toleration{exists}, nil, true},
		{"identical", []v1.Toleration{exists}, []v1.Toleration{exists}, []v1.Toleration{exists}, false},
		{"withSeconds", []v1.Toleration{other, {Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &seconds}},
			[]v1.Toleration{other, exists}, []v1.Toleration{other, {Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &seconds}}, false},
		{"other", []v1.Toleration{other}, []v1.Toleration{other, exists}, []v1.Toleration{other}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := fullySpecifiedPod()
			pod.Spec.Tolerations = tc.have
			got, _, err := DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "f", IsFile: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Spec.Tolerations); diff != "" {
				t.Errorf("file tolerations mismatch (-want +got):\n%s", diff)
			}
			got, _, err = DecodePod(mustJSON(t, pod), Options{NodeName: "node1", Source: "u"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantHTTP, got.Spec.Tolerations); diff != "" {
				t.Errorf("http tolerations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeSchemeDefaults(t *testing.T) {
	manifest := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i:1",
	"ports":[{"containerPort":8080}],"resources":{"limits":{"cpu":"0.0001"}},
	"livenessProbe":{"httpGet":{"port":8080}},
	"env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}]}}`
	pod, _, err := DecodePod([]byte(manifest), Options{NodeName: "node1", Source: "f", IsFile: true})
	if err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	wantProbe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: c.LivenessProbe.HTTPGet.Port, Scheme: v1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	if diff := cmp.Diff(wantProbe, c.LivenessProbe); diff != "" {
		t.Errorf("liveness probe mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}}, c.Ports); diff != "" {
		t.Errorf("ports mismatch (-want +got):\n%s", diff)
	}
	milli := resource.MustParse("1m")
	if got := c.Resources.Requests[v1.ResourceCPU]; got.Cmp(milli) != 0 {
		t.Errorf("cpu request = %s, want 1m (the limit, rounded up to milli scale)", got.String())
	}
	if got := c.Env[0].ValueFrom.FieldRef.APIVersion; got != "v1" {
		t.Errorf("fieldRef apiVersion = %q, want v1", got)
	}
}
