package podtest

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// The defaults of New.
const (
	// DefaultNamespace is the namespace of a pod built by New.
	DefaultNamespace = "default"
	// DefaultContainer is the name of a pod's one container.
	DefaultContainer = "app"
	// DefaultImage is the image of a pod's one container.
	DefaultImage = "busybox:1.36"
)

// Option changes a pod that New builds. Options apply in order.
type Option func(*v1.Pod)

// New returns a pod named name in the default namespace, with UID "uid-<name>", restart policy
// Always and one container, DefaultContainer running DefaultImage, changed by opts in order.
func New(name string, opts ...Option) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultNamespace, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers:    []v1.Container{{Name: DefaultContainer, Image: DefaultImage}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Namespace puts the pod in ns.
func Namespace(ns string) Option { return func(p *v1.Pod) { p.Namespace = ns } }

// UID gives the pod uid.
func UID(uid types.UID) Option { return func(p *v1.Pod) { p.UID = uid } }

// Node binds the pod to node.
func Node(node string) Option { return func(p *v1.Pod) { p.Spec.NodeName = node } }

// Generation sets metadata.generation.
func Generation(g int64) Option { return func(p *v1.Pod) { p.Generation = g } }

// RestartPolicy sets the pod's restart policy.
func RestartPolicy(policy v1.RestartPolicy) Option {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = policy }
}

// TerminationGracePeriod sets spec.terminationGracePeriodSeconds.
func TerminationGracePeriod(seconds int64) Option {
	return func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = &seconds }
}

// Phase sets status.phase.
func Phase(phase v1.PodPhase) Option { return func(p *v1.Pod) { p.Status.Phase = phase } }

// Annotation sets one annotation.
func Annotation(key, value string) Option {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[key] = value
	}
}

// fileSource is the file source's name, podconfig.FileSource; podconfig's own tests use this
// package, so it cannot import podconfig.
const fileSource = "file"

// Source marks the pod as coming from a config source ("file", "http" or "api"), as PodConfig
// annotates every pod it hands on.
func Source(source string) Option {
	return Annotation(kubecontainer.ConfigSourceAnnotationKey, source)
}

// Static makes the pod a static pod from the file source whose config hash is hash, the two
// annotations the pod manager and the mirror pod logic read.
func Static(hash string) Option {
	return func(p *v1.Pod) {
		Source(fileSource)(p)
		Annotation(kubecontainer.ConfigHashAnnotationKey, hash)(p)
	}
}

// Containers replaces the pod's containers with cs.
func Containers(cs ...v1.Container) Option { return func(p *v1.Pod) { p.Spec.Containers = cs } }

// Image sets the image of the pod's first container.
func Image(image string) Option { return func(p *v1.Pod) { p.Spec.Containers[0].Image = image } }

// Container returns a container named name that runs image.
func Container(name, image string) v1.Container { return v1.Container{Name: name, Image: image} }

// Limits sets the limits of the pod's first container, from quantities such as "500m" or "2".
func Limits(limits map[v1.ResourceName]string) Option {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources.Limits = List(limits) }
}

// Requests sets the requests of the pod's first container.
func Requests(requests map[v1.ResourceName]string) Option {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = List(requests) }
}

// List parses quantities into a resource list; it panics on a malformed quantity, which in a
// test is a typo in the test.
func List(quantities map[v1.ResourceName]string) v1.ResourceList {
	out := v1.ResourceList{}
	for name, q := range quantities {
		out[name] = resource.MustParse(q)
	}
	return out
}

// Manifest returns the pod as the YAML of a static pod manifest, with apiVersion and kind.
func Manifest(tb testing.TB, p *v1.Pod) []byte {
	tb.Helper()
	c := p.DeepCopy()
	c.APIVersion, c.Kind = "v1", "Pod"
	data, err := yaml.Marshal(c)
	if err != nil {
		tb.Fatalf("marshal pod %s: %v", p.Name, err)
	}
	return data
}
