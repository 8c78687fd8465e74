package envvars

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// objects is the ConfigMap and Secret managers and the service lister.
type objects struct {
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	services   []*v1.Service
	synced     bool
	// reads are the ConfigMaps and Secrets asked for, in order.
	reads []string
	// listed is whether the Services were listed: replay's stepped informer lists the API
	// server when asked, so a list is an effect.
	listed bool
}

func (o *objects) GetConfigMap(_, name string) (*v1.ConfigMap, error) {
	o.reads = append(o.reads, "configmap/"+name)
	if cm, ok := o.configMaps[name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (o *objects) GetSecret(_, name string) (*v1.Secret, error) {
	o.reads = append(o.reads, "secret/"+name)
	if s, ok := o.secrets[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

func (o *objects) List() ([]*v1.Service, bool) {
	o.listed = true
	return o.services, o.synced
}

func newObjects() *objects {
	return &objects{
		configMaps: map[string]*v1.ConfigMap{"app": {Data: map[string]string{"MODE": "fast", "LEVEL": "3"}}},
		secrets:    map[string]*v1.Secret{"db": {Data: map[string][]byte{"pw": []byte("hunter2")}}},
		services: []*v1.Service{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []v1.ServicePort{{Name: "https", Port: 443}}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-api"}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.9", Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP}}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "elsewhere"}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.7", Ports: []v1.ServicePort{{Port: 81}}}},
		},
		synced: true,
	}
}

func envPod(links bool, c v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1", Labels: map[string]string{"app": "web"}},
		Spec:       v1.PodSpec{EnableServiceLinks: ptr.To(links), NodeName: "node-1", ServiceAccountName: "default", Containers: []v1.Container{c}},
	}
}

func cmKey(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

func secretKey(name, key string, optional bool) *v1.EnvVarSource {
	return &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
}

// TestErrors checks the kubelet's messages for what cannot be resolved, and that optional
// references to what does not exist are skipped.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     []v1.EnvVar
		from    []v1.EnvFromSource
		objects func(*objects)
		noAPI   bool
		// nilLinks leaves spec.enableServiceLinks unset; static makes the pod a file's.
		nilLinks, static bool
		want             string
	}{
		{name: "missing config map", env: []v1.EnvVar{{Name: "X", ValueFrom: cmKey("absent", "k", false)}}, want: `configmap "absent" not found`},
		{name: "missing key in config map", env: []v1.EnvVar{{Name: "X", ValueFrom: cmKey("app", "nope", false)}}, want: "couldn't find key nope in ConfigMap ns/app"},
		{name: "missing secret", env: []v1.EnvVar{{Name: "X", ValueFrom: secretKey("absent", "k", false)}}, want: `secret "absent" not found`},
		{name: "missing key in secret", env: []v1.EnvVar{{Name: "X", ValueFrom: secretKey("db", "user", false)}}, want: "couldn't find key user in Secret ns/db"},
		{name: "missing envFrom config map", from: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}, want: `configmap "absent" not found`},
		{name: "missing envFrom secret", from: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}, want: `secret "absent" not found`},
		{name: "optional references", env: []v1.EnvVar{{Name: "X", ValueFrom: cmKey("absent", "k", true)}, {Name: "Y", ValueFrom: secretKey("db", "user", true)}},
			from: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: ptr.To(true)}}}},
		{name: "services not synced", objects: func(o *objects) { o.synced = false }, want: "services have not yet been read at least once, cannot construct envvars"},
		{name: "standalone", noAPI: true, env: []v1.EnvVar{{Name: "X", ValueFrom: secretKey("db", "pw", false)}}, want: "couldn't get secret ns/db, no kubeClient defined"},
		{name: "unsupported field path", env: []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.hostname"}}}}, want: "unsupported fieldPath: spec.hostname"},
		{name: "no host IP", noAPI: true, env: []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}}}}, want: "cannot get host IP: no node address"},
		{name: "unsupported resource", env: []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.gpu"}}}}, want: "unsupported container resource : limits.gpu"},
		{name: "resource of a missing container", env: []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}}, want: "container nope not found"},
		{name: "first failure wins", from: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
			env:  []v1.EnvVar{{Name: "V", Value: "$(MODE)"}, {Name: "X", ValueFrom: cmKey("app", "MODE", false)}, {Name: "Y", ValueFrom: secretKey("db", "user", false)}, {Name: "Z", ValueFrom: cmKey("absent", "k", false)}},
			want: "couldn't find key user in Secret ns/db"},
		{name: "references that resolve", from: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "db"}}}},
			env: []v1.EnvVar{{Name: "X", ValueFrom: cmKey("app", "MODE", false)}, {Name: "Y", ValueFrom: cmKey("app", "LEVEL", false)}, {Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIPs"}}}}},
		{name: "no service links flag", nilLinks: true, want: "nil pod.spec.enableServiceLinks encountered, cannot construct envvars"},
		{name: "static pod before the services", static: true, objects: func(o *objects) { o.synced = false }},
		{name: "static pod", static: true, env: []v1.EnvVar{{Name: "X", ValueFrom: cmKey("app", "MODE", false)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// CheckEnvironment, which the runtime asks, must fail exactly when
			// MakeEnvironmentVariables does, with its message, after the same reads and
			// whether or not it listed the Services.
			var reads [2][]string
			for i, check := range []bool{false, true} {
				o := newObjects()
				if tc.objects != nil {
					tc.objects(o)
				}
				opts := Options{ConfigMaps: o, Secrets: o, Services: o}
				if tc.noAPI {
					opts = Options{}
				}
				c := v1.Container{Name: "app", Env: tc.env, EnvFrom: tc.from}
				pod := envPod(true, c)
				if tc.nilLinks {
					pod.Spec.EnableServiceLinks = nil
				}
				if tc.static {
					pod.Annotations = map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file"}
				}
				var err error
				name := "MakeEnvironmentVariables"
				if check {
					name = "CheckEnvironment"
					err = New(opts).CheckEnvironment(pod, &c, "10.88.0.5", nil)
				} else {
					_, err = New(opts).MakeEnvironmentVariables(pod, &c, "10.88.0.5", nil)
				}
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != tc.want {
					t.Errorf("%s() error = %q, want %q", name, got, tc.want)
				}
				reads[i] = append(o.reads, fmt.Sprintf("services listed: %t", o.listed))
			}
			if diff := cmp.Diff(reads[0], reads[1]); diff != "" {
				t.Errorf("objects read, MakeEnvironmentVariables (-) and CheckEnvironment (+):\n%s", diff)
			}
		})
	}
}

// TestValues checks a whole environment: envFrom then env, which wins; expansion; field and
// resource references; the master service always and the namespace's with service links.
func TestValues(t *testing.T) {
	c := v1.Container{
		Name:    "app",
		EnvFrom: []v1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
		Env: []v1.EnvVar{
			{Name: "CM_MODE", Value: "slow"},
			{Name: "PW", ValueFrom: secretKey("db", "pw", false)},
			{Name: "URL", Value: "http://$(WEB_API_SERVICE_HOST):$(CM_LEVEL)/$(NOPE)$$x"},
			{Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "APP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "MEM", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "CPU", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "requests.cpu"}}},
		},
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}},
	}
	m := New(Options{ConfigMaps: newObjects(), Secrets: newObjects(), Services: newObjects(),
		Allocatable: func() v1.ResourceList { return v1.ResourceList{v1.ResourceMemory: resource.MustParse("2Gi")} }})
	got, err := m.MakeEnvironmentVariables(envPod(true, c), &c, "10.88.0.5", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"APP": "web", "CM_LEVEL": "3", "CM_MODE": "slow", "CPU": "1", "IP": "10.88.0.5", "MEM": "2048", "POD": "web", "PW": "hunter2",
		"URL":                     "http://10.96.0.9:3/$(NOPE)$x",
		"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1",
		"WEB_API_SERVICE_HOST": "10.96.0.9", "WEB_API_SERVICE_PORT": "80", "WEB_API_PORT": "tcp://10.96.0.9:80",
		"WEB_API_PORT_80_TCP": "tcp://10.96.0.9:80", "WEB_API_PORT_80_TCP_PROTO": "tcp", "WEB_API_PORT_80_TCP_PORT": "80", "WEB_API_PORT_80_TCP_ADDR": "10.96.0.9",
	}
	if diff := cmp.Diff(want, asMap(t, got)); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}

	// Without service links only the master service's variables come.
	plain := v1.Container{Name: "app"}
	got, err = m.MakeEnvironmentVariables(envPod(false, plain), &plain, "10.88.0.5", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range asMap(t, got) {
		if k[:len("KUBERNETES_")] != "KUBERNETES_" {
			t.Errorf("without service links: variable %s, want only the kubernetes Service's", k)
		}
	}
}

// asMap checks the variables are sorted and returns them as a map.
func asMap(t *testing.T, env []kubecontainer.EnvVar) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, e := range env {
		if i > 0 && env[i-1].Name >= e.Name {
			t.Errorf("variables not sorted: %s before %s", env[i-1].Name, e.Name)
		}
		out[e.Name] = e.Value
	}
	return out
}

// TestExpand checks the expansion's corner cases.
func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"$(A)-$(B)": "1-two", "$$(A)": "$(A)", "$(C)": "$(C)", "$(A": "$(A", "a$b": "a$b", "end$": "end$", "": "", "$$$(A)": "$1",
	} {
		if got := Expand(in, lookup); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzExpand checks that expansion never panics and leaves a string without $ alone.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"$(A)", "$$", "$(", "x$", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Expand(s, func(string) (string, bool) { return "v", true })
		if !containsDollar(s) && got != s {
			t.Errorf("Expand(%q) = %q, want it unchanged", s, got)
		}
	})
}

func containsDollar(s string) bool {
	for i := range len(s) {
		if s[i] == '$' {
			return true
		}
	}
	return false
}
