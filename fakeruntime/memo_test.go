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
