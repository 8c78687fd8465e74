package objects

import (
	"context"
	"testing"
	"testing/synctest"

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
