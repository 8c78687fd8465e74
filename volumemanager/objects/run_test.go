package objects

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
)

// TestReflectors checks the watches of `run`: a watch asked for before Run lists when Run starts
// (an object that does not exist is synced and absent), sees the object once it is created, and
// forgets it when stopped; the service informer lists the Services.
func TestReflectors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
			Spec: v1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []v1.ServicePort{{Port: 443}}}})
		r := NewReflectors(client)
		k := Key{ConfigMaps, "ns", "app"}
		r.Watch(k)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx, clock.RealClock{}) }()
		synctest.Wait()

		if obj, synced := r.Get(k); obj != nil || !synced {
			t.Errorf("Get() before the object exists = %v, %t, want nothing, synced", obj, synced)
		}
		if _, err := client.CoreV1().ConfigMaps("ns").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}, Data: map[string]string{"mode": "fast"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if obj, synced := r.Get(k); !synced || obj == nil || obj.(*v1.ConfigMap).Data["mode"] != "fast" {
			t.Errorf("Get() after the create = %v, %t, want the ConfigMap", obj, synced)
		}
		svcs, synced := r.List()
		if !synced || len(svcs) != 1 || svcs[0].Name != "kubernetes" {
			t.Errorf("List() = %v, %t, want the kubernetes Service", svcs, synced)
		}

		r.Stop(k)
		if obj, synced := r.Get(k); obj != nil || synced {
			t.Errorf("Get() after Stop = %v, %t, want nothing, not synced", obj, synced)
		}
		late := Key{Secrets, "ns", "late"}
		r.Watch(late) // while Run runs: at once
		synctest.Wait()
		if obj, synced := r.Get(late); obj != nil || !synced {
			t.Errorf("Get() of a watch started while running = %v, %t, want nothing, synced", obj, synced)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	})
}

// TestReflectorsSharedByAFleet checks the watches a fleet's nodes share: two nodes' managers
// watching the same ConfigMap make one list, a node that starts watching once the reflector has
// listed reads it at once, a node that stops leaves the other's watch running (it still sees the
// object's updates and its deletion), and the last node's Stop stops the reflector, whose next
// Watch lists again.
func TestReflectorsSharedByAFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}, Data: map[string]string{"mode": "fast"}})
		r := NewReflectors(client)
		nodeA, err := New(ConfigMaps, r)
		if err != nil {
			t.Fatal(err)
		}
		nodeB, err := New(ConfigMaps, r)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx, clock.RealClock{}) }()
		lists := func() int {
			n := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "list" && a.GetResource().Resource == "configmaps" && a.GetNamespace() == "ns" {
					n++
				}
			}
			return n
		}
		mode := func(m *Manager) string {
			t.Helper()
			cm, err := m.GetConfigMap("ns", "app")
			if err != nil {
				return err.Error()
			}
			return cm.Data["mode"]
		}
		podA, podB := podReferencing("a", "", "app"), podReferencing("b", "", "app")

		nodeA.RegisterPod(podA)
		synctest.Wait()
		if got := mode(nodeA); got != "fast" {
			t.Errorf("node a's ConfigMap = %q, want fast", got)
		}
		// Node b starts watching once the shared reflector has listed: its Get waits for
		// nothing.
		nodeB.RegisterPod(podB)
		before := time.Now()
		if got := mode(nodeB); got != "fast" {
			t.Errorf("node b's ConfigMap, watched after the list = %q, want fast", got)
		}
		if waited := time.Since(before); waited != 0 {
			t.Errorf("node b's Get waited %v for a list, want none", waited)
		}
		synctest.Wait()
		// kube-root-ca.crt's and app's, each once for both nodes.
		if n := lists(); n != 2 {
			t.Errorf("two nodes watching the same objects listed %d times, want 2 (once each object)", n)
		}

		// Node a stops; node b's watch goes on.
		nodeA.UnregisterPod(podA)
		update := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}, Data: map[string]string{"mode": "slow"}}
		if _, err := client.CoreV1().ConfigMaps("ns").Update(ctx, update, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := mode(nodeB); got != "slow" {
			t.Errorf("node b's ConfigMap after node a stopped and an update = %q, want slow", got)
		}
		if got, want := mode(nodeA), `object "ns"/"app" not registered`; got != want {
			t.Errorf("node a's ConfigMap after it stopped = %q, want %q", got, want)
		}
		if err := client.CoreV1().ConfigMaps("ns").Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := mode(nodeB), `configmap "app" not found`; got != want {
			t.Errorf("node b's ConfigMap after the delete = %q, want %q", got, want)
		}

		// The last node stops: the reflector ends, and a new watch lists again.
		nodeB.UnregisterPod(podB)
		k := Key{ConfigMaps, "ns", "app"}
		if obj, synced := r.Get(k); obj != nil || synced {
			t.Errorf("Get() once no node watches = %v, %t, want nothing, not synced", obj, synced)
		}
		listed := lists()
		nodeA.RegisterPod(podA)
		synctest.Wait()
		if n := lists() - listed; n != 2 {
			t.Errorf("watches after the last stopped listed %d times, want 2 (once each object)", n)
		}
		nodeA.UnregisterPod(podA)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v", err)
		}
	})
}
