package kubecontainer

import (
	"testing"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
)

// keeperMap is a KeyKeeper over a map of kept keys.
type keeperMap map[types.UID]string

func (k keeperMap) PodKey(uid types.UID, namespace, name string) (string, bool) {
	key, ok := k[uid]
	if !ok || !IsKeyOf(key, namespace, name) {
		return "", false
	}
	return key, true
}

// TestSharedKeys checks that a key is always namespace/name, and the keeper's own string when it
// keeps that one.
func TestSharedKeys(t *testing.T) {
	kept := "ns/a"
	for _, tc := range []struct {
		name     string
		keys     *SharedKeys
		pod      *v1.Pod
		want     string
		wantKept bool
	}{
		{"no shared keys", nil, pod("uid-a", "ns", "a"), "ns/a", false},
		{"no keeper yet", &SharedKeys{}, pod("uid-a", "ns", "a"), "ns/a", false},
		{"the keeper's key", &SharedKeys{Keeper: keeperMap{"uid-a": kept}}, pod("uid-a", "ns", "a"), "ns/a", true},
		{"another pod under the UID", &SharedKeys{Keeper: keeperMap{"uid-a": kept}}, pod("uid-a", "ns", "b"), "ns/b", false},
		{"a UID the keeper does not have", &SharedKeys{Keeper: keeperMap{"uid-a": kept}}, pod("uid-b", "ns", "a"), "ns/a", false},
		{"no namespace", &SharedKeys{Keeper: keeperMap{}}, pod("uid-c", "", "c"), "/c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.keys.Of(tc.pod)
			if got != tc.want {
				t.Fatalf("Of() = %q, want %q", got, tc.want)
			}
			if isKept := unsafe.StringData(got) == unsafe.StringData(kept); isKept != tc.wantKept {
				t.Errorf("Of() is the keeper's string: %v, want %v", isKept, tc.wantKept)
			}
		})
	}
}

func TestIsKeyOf(t *testing.T) {
	for _, tc := range []struct {
		key, namespace, name string
		want                 bool
	}{
		{"ns/a", "ns", "a", true},
		{"/a", "", "a", true},
		{"ns/a", "ns", "b", false},
		{"ns/a", "n", "s/a", false},
		{"nsa", "ns", "a", false},
		{"ns/ab", "ns", "a", false},
		{"", "", "", false},
	} {
		if got := IsKeyOf(tc.key, tc.namespace, tc.name); got != tc.want {
			t.Errorf("IsKeyOf(%q, %q, %q) = %v, want %v", tc.key, tc.namespace, tc.name, got, tc.want)
		}
	}
}

func pod(uid types.UID, namespace, name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Namespace: namespace, Name: name}}
}

// TestKeyAndFullName checks that the two views are byte for byte podkey.Build's and
// BuildPodFullName's, and cost one allocation together.
func TestKeyAndFullName(t *testing.T) {
	for _, tc := range []struct{ namespace, name string }{
		{"kube-system", "etcd-node-1"},
		{"", "a"},
		{"ns", ""},
		{"a_b", "c/d"},
		{"default", "p_default"},
	} {
		key, fullname := KeyAndFullName(tc.namespace, tc.name)
		if want := podkey.Build(tc.namespace, tc.name); key != want {
			t.Errorf("KeyAndFullName(%q, %q) key = %q, want %q", tc.namespace, tc.name, key, want)
		}
		if want := BuildPodFullName(tc.name, tc.namespace); fullname != want {
			t.Errorf("KeyAndFullName(%q, %q) full name = %q, want %q", tc.namespace, tc.name, fullname, want)
		}
	}
	var key, fullname string
	if n := testing.AllocsPerRun(100, func() { key, fullname = KeyAndFullName("kube-system", "etcd-node-1") }); n != 1 || key == "" || fullname == "" {
		t.Errorf("KeyAndFullName allocates %v times, want 1", n)
	}
}
