package podvalidation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validPod passes both subsets: every field StaticPod requires is set, as defaulting would.
func validPod() *v1.Pod {
	c := v1.Container{Name: "c", Image: "busybox", ImagePullPolicy: v1.PullIfNotPresent,
		TerminationMessagePolicy: v1.TerminationMessageReadFile}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Labels: map[string]string{"app": "p"}},
		Spec: v1.PodSpec{Containers: []v1.Container{c}, RestartPolicy: v1.RestartPolicyAlways,
			DNSPolicy: v1.DNSClusterFirst, NodeName: "node-1"},
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidatePodCreate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*v1.Pod)
		api    []string // ValidatePodCreate(pod, APIServer)
		static []string // ValidatePodCreate(pod, StaticPod)
	}{
		{"valid", func(*v1.Pod) {}, nil, nil},
		{"noContainers", func(p *v1.Pod) { p.Spec.Containers = nil },
			[]string{"spec.containers: Required value"}, []string{"spec.containers: Required value"}},
		{"nameSharedByInitAndApp", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{p.Spec.Containers[0]}
		},
			[]string{`spec.containers[0].name: Duplicate value: "c"`},
			[]string{`spec.initContainers[0].name: Duplicate value: "c"`}},
		{"badDuplicateName", func(p *v1.Pod) {
			p.Spec.Containers[0].Name = "C"
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
		},
			[]string{`spec.containers[0].name: Invalid value: "C": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.containers[1].name: Duplicate value: "C"`},
			[]string{`spec.containers[0].name: Invalid value: "C": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.containers[1].name: Invalid value: "C": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`spec.containers[1].name: Duplicate value: "C"`}},
		{"noImage", func(p *v1.Pod) { p.Spec.Containers[0].Image = "" },
			[]string{"spec.containers[0].image: Required value"}, []string{"spec.containers[0].image: Required value"}},
		{"portZero", func(p *v1.Pod) { p.Spec.Containers[0].Ports = []v1.ContainerPort{{Protocol: v1.ProtocolTCP}} },
			[]string{"spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive"},
			[]string{"spec.containers[0].ports[0].containerPort: Required value"}},
		{"portTooLarge", func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 70000, Protocol: v1.ProtocolTCP}}
		},
			[]string{"spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"},
			[]string{"spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"}},
		{"emptyRestartPolicy", func(p *v1.Pod) { p.Spec.RestartPolicy = "" },
			[]string{`spec.restartPolicy: Unsupported value: "": supported values: "Always", "OnFailure", "Never"`},
			[]string{"spec.restartPolicy: Required value"}},
		{"unknownDNSPolicy", func(p *v1.Pod) { p.Spec.DNSPolicy = "Cluster" },
			[]string{`spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"`},
			[]string{`spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`}},
		{"deadlineAndNodeName", func(p *v1.Pod) {
			d := int64(0)
			p.Spec.ActiveDeadlineSeconds = &d
			p.Spec.NodeName = "Node_1"
		},
			[]string{"spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0",
				`spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
			[]string{`spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				"spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"}},
		{"hooks", func(p *v1.Pod) {
			grace := int64(10)
			p.Spec.TerminationGracePeriodSeconds = &grace
			p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{
				PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{}, Sleep: &v1.SleepAction{Seconds: 1}},
				PreStop:   &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 11}},
			}
			always := v1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []v1.Container{{Name: "s", Image: "busybox", ImagePullPolicy: v1.PullIfNotPresent,
				TerminationMessagePolicy: v1.TerminationMessageReadFile, RestartPolicy: &always,
				Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{}}}}
		},
			nil,
			[]string{"spec.containers[0].lifecycle.postStart.exec.command: Required value",
				"spec.containers[0].lifecycle.postStart.sleep: Forbidden: may not specify more than 1 handler type",
				"spec.containers[0].lifecycle.preStop.sleep: Invalid value: 11: must be non-negative and less than terminationGracePeriodSeconds (10)",
				"spec.initContainers[0].lifecycle.preStop: Required value: must specify a handler type"}},
		{"staticOnly", func(p *v1.Pod) {
			p.Annotations = map[string]string{"a b": ""}
			p.Spec.Containers[0].ImagePullPolicy = ""
			p.Spec.EphemeralContainers = []v1.EphemeralContainer{{}}
		},
			nil,
			[]string{`metadata.annotations: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				"spec.containers[0].imagePullPolicy: Required value",
				"spec.ephemeralContainers: Forbidden: cannot be set on create"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mutate(pod)
			before := pod.DeepCopy()
			if diff := cmp.Diff(tt.api, messages(ValidatePodCreate(pod, APIServer))); diff != "" {
				t.Errorf("ValidatePodCreate(APIServer) (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.static, messages(ValidatePodCreate(pod, StaticPod))); diff != "" {
				t.Errorf("ValidatePodCreate(StaticPod) (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, pod); diff != "" {
				t.Errorf("ValidatePodCreate changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestValidateObjectMeta(t *testing.T) {
	tests := []struct {
		name       string
		meta       metav1.ObjectMeta
		namespaced bool
		want       []string
	}{
		{"valid", metav1.ObjectMeta{Namespace: "default", Name: "p"}, true, nil},
		{"noName", metav1.ObjectMeta{Namespace: "default"}, true, []string{"metadata.name: Required value: name or generateName is required"}},
		{"clusterScoped", metav1.ObjectMeta{Name: "node-1"}, false, nil},
		{"badNamespace", metav1.ObjectMeta{Namespace: "Kube_System", Name: "p"}, true,
			[]string{`metadata.namespace: Invalid value: "Kube_System": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},
		// Labels and annotations are the API server's shared path's (fakeapiserver validateObject).
		{"labelsLeftToTheServer", metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b c"}}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, messages(ValidateObjectMeta(&tt.meta, tt.namespaced))); diff != "" {
				t.Errorf("ValidateObjectMeta(%+v, %v) (-want +got):\n%s", tt.meta, tt.namespaced, diff)
			}
		})
	}
}

func TestSubsetString(t *testing.T) {
	for s, want := range map[Subset]string{APIServer: "APIServer", StaticPod: "StaticPod", Subset(7): "Subset(7)"} {
		if got := s.String(); got != want {
			t.Errorf("Subset(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}
