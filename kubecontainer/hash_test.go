package kubecontainer

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/dump"
)

// The kubelet's own reference value (container_hash_test.go, unchanged since v1.31): only the name
// and image count, so the command, env, ports and resources of its sample change nothing.
func TestHashContainerMatchesKubelet(t *testing.T) {
	opt := true
	c := &v1.Container{
		Name:    "test_container",
		Image:   "foo/image:v1",
		Command: []string{"/bin/testcmd"},
		Args:    []string{"/bin/sh", "-c", "echo abc"},
		Ports:   []v1.ContainerPort{{ContainerPort: 8001}},
		Env: []v1.EnvVar{{Name: "ENV_FOO", Value: "bar"}, {Name: "ENV_BAR", ValueFrom: &v1.EnvVarSource{
			SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "foo"}, Key: "bar", Optional: &opt}}}},
		Resources: v1.ResourceRequirements{
			Limits:   v1.ResourceList{"foo": resource.MustParse("1G")},
			Requests: v1.ResourceList{"foo": resource.MustParse("500M")},
		},
	}
	if got, want := HashContainer(c), uint64(0x8e45cbd0); got != want {
		t.Errorf("HashContainer() = %#x, want the kubelet's %#x", got, want)
	}
	bare := &v1.Container{Name: "test_container", Image: "foo/image:v1"}
	if HashContainer(bare) != HashContainer(c) {
		t.Error("HashContainer() depends on more than the name and image")
	}
	bare.Image = "foo/image:v2"
	if HashContainer(bare) == HashContainer(c) {
		t.Error("HashContainer() does not change with the image")
	}
}

func TestContainerShouldRestart(t *testing.T) {
	always, onFailure, never := v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyNever
	rules := []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	tests := []struct {
		name   string
		c      v1.Container
		pod    v1.RestartPolicy
		code   int32
		expect bool
	}{
		{"pod Always", v1.Container{}, v1.RestartPolicyAlways, 0, true},
		{"pod OnFailure, exit 0", v1.Container{}, v1.RestartPolicyOnFailure, 0, false},
		{"pod OnFailure, exit 1", v1.Container{}, v1.RestartPolicyOnFailure, 1, true},
		{"pod Never", v1.Container{}, v1.RestartPolicyNever, 1, false},
		{"sidecar in a Never pod", v1.Container{RestartPolicy: &always}, v1.RestartPolicyNever, 0, true},
		{"container OnFailure in an Always pod, exit 0", v1.Container{RestartPolicy: &onFailure}, v1.RestartPolicyAlways, 0, false},
		{"container Never in an Always pod", v1.Container{RestartPolicy: &never}, v1.RestartPolicyAlways, 1, false},
		{"rule matches", v1.Container{RestartPolicy: &never, RestartPolicyRules: rules}, v1.RestartPolicyNever, 42, true},
		{"rule does not match", v1.Container{RestartPolicy: &never, RestartPolicyRules: rules}, v1.RestartPolicyNever, 1, false},
		{"rules need a container policy", v1.Container{RestartPolicyRules: rules}, v1.RestartPolicyNever, 42, false},
	}
	for _, tt := range tests {
		spec := &v1.PodSpec{RestartPolicy: tt.pod}
		if got := ContainerShouldRestart(&tt.c, spec, tt.code); got != tt.expect {
			t.Errorf("%s: ContainerShouldRestart() = %v, want %v", tt.name, got, tt.expect)
		}
	}
}

// hashByDump is HashContainer the kubelet's way: the JSON of a map, spew's dump of its bytes, and
// FNV-32a over the dump.
func hashByDump(c *v1.Container) uint64 {
	b, _ := json.Marshal(map[string]string{"name": c.Name, "image": c.Image})
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(b))
	return uint64(h.Sum32())
}

func TestHashContainerMatchesDump(t *testing.T) {
	for _, c := range []v1.Container{
		{},
		{Name: "nginx", Image: "nginx:1.27"},
		{Name: "pause", Image: "registry.k8s.io/pause:3.10"},
		{Name: "digest", Image: "busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{Name: `quote"and\backslash`, Image: "a<b>&c"},
		{Name: "tab\tnewline\n\x01", Image: "\u2028\u2029é"},
		{Name: "invalid\xff\xfeutf8", Image: "\x7f"},
	} {
		if got, want := HashContainer(&c), hashByDump(&c); got != want {
			t.Errorf("HashContainer(%q, %q) = %#x, want %#x as the dump of its JSON gives", c.Name, c.Image, got, want)
		}
	}
}

func FuzzHashContainer(f *testing.F) {
	f.Add("nginx", "nginx:1.27")
	f.Add(`a"b`, "<&>")
	f.Add("\xff", "\u2028")
	f.Fuzz(func(t *testing.T, name, image string) {
		c := &v1.Container{Name: name, Image: image}
		if got, want := HashContainer(c), hashByDump(c); got != want {
			t.Errorf("HashContainer(%q, %q) = %#x, want %#x as the dump of its JSON gives", name, image, got, want)
		}
	})
}

func BenchmarkHashContainer(b *testing.B) {
	c := &v1.Container{Name: "nginx", Image: "registry.k8s.io/nginx:1.27"}
	b.Run("dump", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			hashByDump(c)
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			HashContainer(c)
		}
	})
}
