package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/controlplane/controllers/internal/ctrltest"
	"github.com/minikubelet/minikubelet/controlplane/controllers/scheduler"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// After the node feed relists (says all) and no node is left, the fingerprint is made anew (""),
// not kept from the nodes that are gone: the waiting pod is tried again at once, as it is when
// everything is read at each pass.
func TestAllNodesGoneAfterRelist(t *testing.T) {
	ctx := context.Background()
	var traces [2][]string
	for mode, withChanges := range []bool{false, true} {
		clk := vclock.New(vclock.Epoch)
		c := ctrltest.NewClient(t, clk)
		created, err := c.CoreV1().Nodes().Create(ctx, node("a", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = node("a", nil).Status
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		q := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100")}}}}}}
		if _, err := c.CoreV1().Pods("default").Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		changes := &testChanges{allNodes: true, allPodNodes: true}
		rec := &schedulingEvents{}
		opts := scheduler.Options{Clock: clk, Lister: controllers.Client{Clientset: c}, Writer: controllers.Client{Clientset: c}, Tracer: rec}
		if withChanges {
			opts.Changes = changes
		}
		s, err := scheduler.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.Sync(ctx)
		zero := int64(0)
		if err := c.CoreV1().Nodes().Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		changes.allNodes = true // the node informer relisted
		clk.Set(vclock.Epoch.Add(time.Second))
		_ = s.Sync(ctx)
		traces[mode] = rec.events
	}
	if diff := cmp.Diff(traces[0], traces[1]); diff != "" {
		t.Errorf("every pod (-) vs changed (+):\n%s", diff)
	}
}
