package kubecontainer

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
