package podconfig_test

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func pod(name, uid, image string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + uid)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: image}}},
	}
}

func show(us []podconfig.Update) {
	for _, u := range us {
		fmt.Printf("%s %s %d pods", u.Op, u.Source, len(u.Pods))
		for _, p := range u.Pods {
			fmt.Printf(" %s", p.Name)
		}
		fmt.Println()
	}
}

// ExampleStorage_Merge shows the kubelet's Incremental diff of successive SETs from one source.
func ExampleStorage_Merge() {
	s, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		panic(err)
	}
	s.Register(podconfig.FileSource)

	// The first SET is never silent: an empty one gives an empty ADD.
	show(s.Merge(podconfig.FileSource, podconfig.Update{Op: podconfig.SET}))
	show(s.Merge(podconfig.FileSource, podconfig.Update{Op: podconfig.SET, Pods: []*v1.Pod{pod("a", "1", "img:1"), pod("b", "2", "img:1")}}))
	// Resending the same pods changes nothing.
	show(s.Merge(podconfig.FileSource, podconfig.Update{Op: podconfig.SET, Pods: []*v1.Pod{pod("a", "1", "img:1"), pod("b", "2", "img:1")}}))
	// b is gone, a has a new image, c is new.
	show(s.Merge(podconfig.FileSource, podconfig.Update{Op: podconfig.SET, Pods: []*v1.Pod{pod("a", "1", "img:2"), pod("c", "3", "img:1")}}))
	// Output:
	// ADD file 0 pods
	// ADD file 2 pods a b
	// REMOVE file 1 pods b
	// ADD file 1 pods c
	// UPDATE file 1 pods a
}

// ExampleConfig runs the mux: a source sends on its channel and the merged updates come out of
// Updates.
func ExampleConfig() {
	st, err := podconfig.NewStorage(podconfig.StorageOptions{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		panic(err)
	}
	c, err := podconfig.New(st)
	if err != nil {
		panic(err)
	}
	file := c.Channel(podconfig.FileSource) // before Run
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()

	file <- podconfig.Update{Op: podconfig.SET, Source: podconfig.FileSource, Pods: []*v1.Pod{pod("a", "1", "img:1")}}
	u := <-c.Updates()
	fmt.Println(u.Op, u.Source, u.Pods[0].Name, u.Pods[0].Annotations["kubernetes.io/config.seen"])
	fmt.Println("ready:", c.SeenAllSources(sets.New(podconfig.FileSource)))

	cancel()
	fmt.Println("stopped:", <-done)
	// Output:
	// ADD file a 2026-01-01T00:00:00.000000000Z
	// ready: true
	// stopped: <nil>
}
