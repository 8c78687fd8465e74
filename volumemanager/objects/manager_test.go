package objects

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet"
)

// fakeSource logs Watch and Stop, and answers Get from objects once synced.
type fakeSource struct {
	log     []string
	objects map[Key]runtime.Object
	synced  map[Key]bool
}

func newFakeSource() *fakeSource {
	return &fakeSource{objects: map[Key]runtime.Object{}, synced: map[Key]bool{}}
}

func (f *fakeSource) Watch(k Key) { f.log = append(f.log, "watch "+k.Namespace+"/"+k.Name) }
func (f *fakeSource) Stop(k Key)  { f.log = append(f.log, "stop "+k.Namespace+"/"+k.Name) }
func (f *fakeSource) Get(k Key) (runtime.Object, bool) {
	return f.objects[k], f.synced[k]
}

func podReferencing(uid, secret string, configMaps ...string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-" + uid, UID: types.UID(uid)}}
	c := v1.Container{Name: "app"}
	for _, cm := range configMaps {
		c.EnvFrom = append(c.EnvFrom, v1.EnvFromSource{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: cm}}})
	}
	if secret != "" {
		c.Env = []v1.EnvVar{{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: secret}, Key: "pw"}}}}
	}
	pod.Spec.Containers = []v1.Container{c}
	pod.Spec.Volumes = []v1.Volume{{Name: "ca", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
	}}}}}
	return pod
}

// TestReferenceCounting checks that the first reference to an object starts its watch, the last
// stops it, and a pod registered again moves its references to what its spec names now.
func TestReferenceCounting(t *testing.T) {
	src := newFakeSource()
	m, err := New(ConfigMaps, src)
	if err != nil {
		t.Fatal(err)
	}
	a, b := podReferencing("a", "", "app"), podReferencing("b", "", "app", "extra")
	m.RegisterPod(a)
	m.RegisterPod(b)
	m.RegisterPod(a) // every SyncPod registers again: nothing changes
	changed := podReferencing("b", "", "other")
	m.RegisterPod(changed)
	m.UnregisterPod(a)
	m.UnregisterPod(changed)
	m.UnregisterPod(changed) // once is enough
	want := []string{
		"watch ns/app", "watch ns/kube-root-ca.crt", "watch ns/extra",
		"watch ns/other", "stop ns/extra",
		"stop ns/app",
		"stop ns/other", "stop ns/kube-root-ca.crt",
	}
	if diff := cmp.Diff(want, src.log); diff != "" {
		t.Errorf("watches (-want +got):\n%s", diff)
	}
	if got := m.Watched(); len(got) != 0 {
		t.Errorf("Watched() = %v, want none", got)
	}
}

// TestGet checks the answers of the watch-based cache, in its words.
func TestGet(t *testing.T) {
	src := newFakeSource()
	m, err := New(Secrets, src)
	if err != nil {
		t.Fatal(err)
	}
	m.RegisterPod(podReferencing("a", "db"))
	k := Key{Secrets, "ns", "db"}
	for _, tc := range []struct {
		name, namespace, object string
		prepare                 func()
		want                    string
		notFound                bool
	}{
		{name: "not registered", namespace: "ns", object: "other", want: `object "ns"/"other" not registered`},
		{name: "not synced", namespace: "ns", object: "db", want: "failed to sync secret cache: timed out waiting for the condition"},
		{name: "not found", namespace: "ns", object: "db", prepare: func() { src.synced[k] = true }, want: `secret "db" not found`, notFound: true},
		{name: "found", namespace: "ns", object: "db", prepare: func() {
			src.objects[k] = &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prepare != nil {
				tc.prepare()
			}
			s, err := m.GetSecret(tc.namespace, tc.object)
			switch {
			case tc.want == "" && (err != nil || s.Name != "db"):
				t.Errorf("GetSecret() = %v, %v, want the secret", s, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("GetSecret() error = %v, want %q", err, tc.want)
			case tc.notFound != apierrors.IsNotFound(err):
				t.Errorf("IsNotFound(%v) = %t, want %t", err, !tc.notFound, tc.notFound)
			}
		})
	}
}

// TestImmutable checks that an immutable object stops its watch and is served from then on.
func TestImmutable(t *testing.T) {
	src := newFakeSource()
	m, err := New(ConfigMaps, src)
	if err != nil {
		t.Fatal(err)
	}
	pod := podReferencing("a", "", "frozen")
	m.RegisterPod(pod)
	k := Key{ConfigMaps, "ns", "frozen"}
	src.synced[k] = true
	src.objects[k] = &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "frozen"}, Immutable: ptr.To(true), Data: map[string]string{"k": "v"}}
	for i := range 2 {
		cm, err := m.GetConfigMap("ns", "frozen")
		if err != nil || cm.Data["k"] != "v" {
			t.Fatalf("GetConfigMap() #%d = %v, %v", i, cm, err)
		}
		delete(src.objects, k) // the stopped watch no longer matters
	}
	m.UnregisterPod(pod)
	want := []string{"watch ns/frozen", "watch ns/kube-root-ca.crt", "stop ns/frozen", "stop ns/kube-root-ca.crt"}
	if diff := cmp.Diff(want, src.log); diff != "" {
		t.Errorf("watches (-want +got):\n%s", diff)
	}
}

// TestNewRequiresASource checks the constructor's errors.
func TestNewRequiresASource(t *testing.T) {
	if _, err := New(Secrets, nil); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("New(Secrets, nil) = %v, want ErrMissingOption", err)
	}
	if _, err := New(Kind(7), newFakeSource()); err == nil || err.Error() != fmt.Sprintf("new object manager: unknown %v", Kind(7)) {
		t.Errorf("New(Kind(7)) = %v", err)
	}
}
