package podconfig

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// testSource is the source name the kubelet's config tests use.
const testSource = "test"

// epochSeen is the config.seen value of a pod first seen at vclock.Epoch.
const epochSeen = "2026-01-01T00:00:00.000000000Z"

// newPod returns a valid pod like the kubelet tests' CreateValidPod: its UID is name+namespace.
func newPod(name, namespace string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			UID:       types.UID(name + namespace),
			Name:      name,
			Namespace: namespace,
		},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			DNSPolicy:     v1.DNSClusterFirst,
			Containers: []v1.Container{{
				Name:                     "ctr",
				Image:                    "image",
				ImagePullPolicy:          v1.PullIfNotPresent,
				TerminationMessagePolicy: v1.TerminationMessageReadFile,
			}},
		},
	}
}

// with returns a copy of p changed by f.
func with(p *v1.Pod, f func(*v1.Pod)) *v1.Pod {
	c := p.DeepCopy()
	f(c)
	return c
}

// withContainer returns a copy of p whose only container is "bar", as several kubelet tests do.
func withContainer(p *v1.Pod) *v1.Pod {
	return with(p, func(p *v1.Pod) {
		p.Spec.Containers = []v1.Container{{
			Name:                     "bar",
			Image:                    "test",
			ImagePullPolicy:          v1.PullIfNotPresent,
			TerminationMessagePolicy: v1.TerminationMessageReadFile,
		}}
	})
}

// storedAt returns what Storage keeps and emits for p sent by source and first seen at seen.
func storedAt(p *v1.Pod, source, seen string) *v1.Pod {
	return with(p, func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[kubecontainer.ConfigSourceAnnotationKey] = source
		p.Annotations[kubecontainer.ConfigFirstSeenAnnotationKey] = seen
	})
}

// stored is storedAt for the test source at the epoch.
func stored(p *v1.Pod) *v1.Pod { return storedAt(p, testSource, epochSeen) }

func pods(ps ...*v1.Pod) []*v1.Pod {
	if ps == nil {
		return []*v1.Pod{}
	}
	return ps
}

func upd(op Op, source string, ps ...*v1.Pod) Update {
	return Update{Op: op, Source: source, Pods: pods(ps...)}
}

// recorder collects trace events.
type recorder struct{ events []trace.Event }

func (r *recorder) Emit(e trace.Event) { r.events = append(r.events, e) }

// newStorage returns a Storage on a virtual clock at the epoch, tracing into the returned recorder.
func newStorage(t testing.TB, mode Mode) (*Storage, *recorder, *vclock.Clock) {
	t.Helper()
	rec := &recorder{}
	clk := vclock.New(vclock.Epoch)
	s, err := NewStorage(StorageOptions{Mode: mode, Clock: clk, Tracer: rec})
	if err != nil {
		t.Fatalf("NewStorage() error = %v", err)
	}
	return s, rec, clk
}

// storedView returns the pod Storage keeps for uid of source as the kubelet's podStorage holds
// it, a Pod whose fields are the stored parts themselves (not copies), or nil if there is none.
func storedView(s *Storage, source string, uid types.UID) *v1.Pod {
	p, ok := s.pods[source][uid]
	if !ok {
		return nil
	}
	return p.view(source)
}

// view is p as the kubelet's stored object of source, its fields shared with p's parts.
func (p *storedPod) view(source string) *v1.Pod {
	out := &v1.Pod{TypeMeta: p.typeMeta(), ObjectMeta: *p.objectMeta(), Spec: p.ref.Spec, Status: p.ref.Status}
	out.Labels = p.ref.Labels
	out.Annotations = p.annotations(source)
	return out
}
