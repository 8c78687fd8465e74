package fakeruntime

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// The memos answer what the functions they remember answer, before and after they fill up.
func TestMemosAnswerAsTheFunctions(t *testing.T) {
	rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	images := []string{"nginx", "nginx:1.27", "registry.k8s.io/pause:3.10", "Upper/case", "bad image", ":", ""}
	for round := range 2 {
		for _, image := range images {
			for _, name := range []string{"app", "sidecar"} {
				c := &v1.Container{Name: name, Image: image}
				if got, want := rt.containerHash(c), kubecontainer.HashContainer(c); got != want {
					t.Errorf("round %d: containerHash(%s, %q) = %#x, want %#x", round, name, image, got, want)
				}
			}
			got, want := rt.checkImageName(image), parseImageName(image)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("round %d: checkImageName(%q) = %v, want %v", round, image, got, want)
			}
			if got, want := rt.imageRefOf(image), imageRef(image); got != want {
				t.Errorf("round %d: imageRefOf(%q) = %q, want %q", round, image, got, want)
			}
		}
	}
	if _, ok := rt.wellFormed["bad image"]; ok {
		t.Error("an image that does not parse was remembered as well formed")
	}
	// Past maxMemo the memos start again rather than grow.
	for i := range maxMemo + 10 {
		c := &v1.Container{Name: "app", Image: fmt.Sprintf("image-%d", i)}
		if got, want := rt.containerHash(c), kubecontainer.HashContainer(c); got != want {
			t.Fatalf("containerHash(app, %q) = %#x, want %#x", c.Image, got, want)
		}
		if err := rt.checkImageName(c.Image); err != nil {
			t.Fatalf("checkImageName(%q) = %v", c.Image, err)
		}
	}
	if len(rt.hashes) > maxMemo || len(rt.wellFormed) > maxMemo {
		t.Errorf("memos hold %d hashes and %d images, want at most %d each", len(rt.hashes), len(rt.wellFormed), maxMemo)
	}
}

// The Pulled message of an image already present is the kubelet's text, before and after the memo
// fills up.
func TestAlreadyPresentMessageMemo(t *testing.T) {
	rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	want := func(image string) string {
		return fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image)
	}
	for round := range 2 {
		for _, image := range []string{"nginx", "registry.k8s.io/pause:3.10", "quote\"d", "ünïcode", ""} {
			if got := rt.alreadyPresentMessage(image); got != want(image) {
				t.Errorf("round %d: alreadyPresentMessage(%q) = %q, want %q", round, image, got, want(image))
			}
		}
	}
	for i := range maxMemo + 10 {
		image := fmt.Sprintf("image-%d", i)
		if got := rt.alreadyPresentMessage(image); got != want(image) {
			t.Fatalf("alreadyPresentMessage(%q) = %q, want %q", image, got, want(image))
		}
	}
	if len(rt.presentMessages) > maxMemo {
		t.Errorf("memo holds %d messages, want at most %d", len(rt.presentMessages), maxMemo)
	}
}

// seqID is fmt's %06d after the prefix, for every width of number, in one allocation.
func TestSeqID(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 99999, 100000, 999999, 1000000, 1234567, 1<<31 - 1} {
		for _, prefix := range []string{"s-", "c-", ""} {
			if got, want := seqID(prefix, n), fmt.Sprintf(prefix+"%06d", n); got != want {
				t.Errorf("seqID(%q, %d) = %q, want %q", prefix, n, got, want)
			}
		}
	}
	if a := testing.AllocsPerRun(100, func() { _ = seqID("c-", 123456) }); a != 1 {
		t.Errorf("seqID allocates %v times, want 1", a)
	}
}

func FuzzSeqID(f *testing.F) {
	f.Add("c-", 42)
	f.Fuzz(func(t *testing.T, prefix string, n int) {
		if n < 0 {
			return
		}
		if got, want := seqID(prefix, n), fmt.Sprintf("%s%06d", prefix, n); got != want {
			t.Errorf("seqID(%q, %d) = %q, want %q", prefix, n, got, want)
		}
	})
}

// The field paths remembered are the kubelet's, for every list and for a container the spec does
// not name, before and after the memo fills up.
func TestContainerFieldPathMemo(t *testing.T) {
	rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{Spec: v1.PodSpec{
		Containers:          []v1.Container{{Name: "app"}},
		InitContainers:      []v1.Container{{Name: "init"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debug"}}},
	}}
	moved := pod.DeepCopy() // "app" is an init container here: the same name, another path
	moved.Spec.Containers, moved.Spec.InitContainers = moved.Spec.InitContainers, moved.Spec.Containers
	for round := range 2 {
		for _, p := range []*v1.Pod{pod, moved, nil} {
			for _, c := range []string{"app", "init", "debug", "gone"} {
				if got, want := rt.containerFieldPath(p, c), containerFieldPath(p, c); got != want {
					t.Errorf("round %d: containerFieldPath(%q) = %q, want %q", round, c, got, want)
				}
			}
		}
	}
	for i := range maxMemo + 10 {
		c := fmt.Sprintf("c-%d", i)
		p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: c}}}}
		if got, want := rt.containerFieldPath(p, c), containerFieldPath(p, c); got != want {
			t.Fatalf("containerFieldPath(%q) = %q, want %q", c, got, want)
		}
	}
	if len(rt.fieldPaths) > maxMemo {
		t.Errorf("memo holds %d paths, want at most %d", len(rt.fieldPaths), maxMemo)
	}
}

// GetPodStatus lists the sandboxes and container instances newest first, whatever their number,
// each list exactly as long as its capacity.
func TestGetPodStatusLists(t *testing.T) {
	for _, n := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 1}, {1, 3}, {3, 2}} {
		rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		rec := rt.podFor("uid-1", "web", "default", "default/web")
		var wantSandboxes []kubecontainer.SandboxStatus
		var wantContainers []kubecontainer.ContainerStatus
		for i := range n[0] {
			s := kubecontainer.SandboxStatus{ID: fmt.Sprintf("s-%d", i), State: kubecontainer.SandboxNotReady}
			rec.addSandbox(sandboxRec{seq: i + 1, status: s})
			wantSandboxes = append([]kubecontainer.SandboxStatus{s}, wantSandboxes...)
		}
		for i := range n[1] {
			c := kubecontainer.ContainerStatus{ID: fmt.Sprintf("c-%d", i), Name: "app", State: kubecontainer.ContainerStateExited}
			rec.addContainer(&containerRec{seq: i + 1, podUID: "uid-1", status: c})
			wantContainers = append([]kubecontainer.ContainerStatus{c}, wantContainers...)
		}
		s, err := rt.GetPodStatus("uid-1", "web", "default")
		if err != nil {
			t.Fatal(err)
		}
		want := &kubecontainer.PodStatus{UID: "uid-1", Name: "web", Namespace: "default", TimeStamp: vclock.Epoch,
			Sandboxes: wantSandboxes, ContainerStatuses: wantContainers}
		if diff := cmp.Diff(want, s); diff != "" {
			t.Errorf("%d sandboxes, %d containers: status (-want +got):\n%s", n[0], n[1], diff)
		}
		if cap(s.Sandboxes) != len(s.Sandboxes) || cap(s.ContainerStatuses) != len(s.ContainerStatuses) {
			t.Errorf("%d sandboxes, %d containers: capacities %d and %d, want the lengths", n[0], n[1], cap(s.Sandboxes), cap(s.ContainerStatuses))
		}
	}
}

// The instances of one image share its reference: one string an image, not one an instance.
func TestInstancesShareTheImageRef(t *testing.T) {
	rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, name := range []string{"a", "b"} {
		pod := podtest.New(name)
		if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
			t.Fatal(err)
		}
		st, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.ContainerStatuses) != 1 {
			t.Fatalf("pod %s: %d container instances, want 1", name, len(st.ContainerStatuses))
		}
		refs = append(refs, st.ContainerStatuses[0].ImageRef)
	}
	if want := imageRef(podtest.New("a").Spec.Containers[0].Image); refs[0] != want || refs[1] != want {
		t.Fatalf("image references %q, want %q twice", refs, want)
	}
	if unsafe.StringData(refs[0]) != unsafe.StringData(refs[1]) {
		t.Error("two instances of one image hold copies of its reference, want one string")
	}
}
