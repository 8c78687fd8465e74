package fakeruntime

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
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
	for _, n := range []int{0, 1, 9, 10, 99999, 100000, 999999, 1000000, 1234567, 1 << 40} {
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
