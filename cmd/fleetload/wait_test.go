package main

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestWaitAllFollowsTheWatches: waitAll counts the Ready nodes and the Running pods of the
// default namespace as their watches see them change, and returns once all are, not before.
func TestWaitAllFollowsTheWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		node := func(name string, ready v1.ConditionStatus) *v1.Node {
			return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
				Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: ready}}}}
		}
		pod := func(ns, name string, phase v1.PodPhase) *v1.Pod {
			return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Status: v1.PodStatus{Phase: phase}}
		}
		client := fake.NewClientset(
			node("sim-0", v1.ConditionTrue), node("sim-1", v1.ConditionFalse),
			pod("default", "load-0", v1.PodRunning), pod("default", "load-1", v1.PodPending),
			pod("other", "elsewhere", v1.PodRunning), // not the default namespace: not counted
		)
		type seen struct{ ready, running int }
		var got []seen
		done := make(chan error, 1)
		go func() {
			done <- waitAll(ctx, client, config{nodes: 2}, 2, func(ready, running int) {
				got = append(got, seen{ready, running})
			})
		}()
		time.Sleep(5 * time.Second) // the fake clock: the watches have listed, a few progress lines
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("waitAll() = %v with a node not Ready and a pod Pending, want it to wait", err)
		default:
		}
		if last := got[len(got)-1]; last != (seen{1, 1}) {
			t.Errorf("progress = %+v, want 1 node ready and 1 pod running", last)
		}
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node("sim-1", v1.ConditionTrue), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, pod("default", "load-1", v1.PodRunning), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("waitAll() = %v, want nil once all are Ready and Running", err)
		}
		if last := got[len(got)-1]; last != (seen{2, 2}) {
			t.Errorf("last progress = %+v, want 2 nodes ready and 2 pods running", last)
		}
	})
}
