package world

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/volumemanager/objects"
)

// TestObjects checks the stepped watches: an unwatched object is not synced, a watched one that
// does not exist is synced and absent, a created one is seen at the next Get, and while the link
// is down a watch keeps what it last read and a new one stays unsynced; the services list the
// kubernetes Service.
func TestObjects(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	c, err := NewCluster(clk, trace.Discard, 1)
	if err != nil {
		t.Fatal(err)
	}
	link := NewLink(c.Server().Transport(), clk)
	o := NewObjects(c.Server(), link)
	k := objects.Key{Kind: objects.ConfigMaps, Namespace: "default", Name: "app"}
	if obj, synced := o.Get(k); obj != nil || synced {
		t.Errorf("Get() before Watch = %v, %t, want nothing, not synced", obj, synced)
	}
	o.Watch(k)
	if obj, synced := o.Get(k); obj != nil || !synced {
		t.Errorf("Get() of a missing object = %v, %t, want nothing, synced", obj, synced)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}, Data: map[string]string{"mode": "fast"}}
	if _, err := c.Client().CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if obj, synced := o.Get(k); !synced || obj == nil || obj.(*v1.ConfigMap).Data["mode"] != "fast" {
		t.Errorf("Get() after the create = %v, %t, want the ConfigMap", obj, synced)
	}

	link.CutUntil(clk.Now().Add(time.Minute))
	if err := c.Client().CoreV1().ConfigMaps("default").Delete(context.Background(), "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if obj, synced := o.Get(k); !synced || obj == nil {
		t.Errorf("Get() while the link is down = %v, %t, want the ConfigMap last read", obj, synced)
	}
	late := objects.Key{Kind: objects.Secrets, Namespace: "default", Name: "db"}
	o.Watch(late)
	if _, synced := o.Get(late); synced {
		t.Errorf("Get() of a watch started while the link is down: synced, want not")
	}
	// A kubelet started while its link is down has not listed the Services; one started while
	// it was up listed them at its start.
	if _, synced := NewObjects(c.Server(), link).List(); synced {
		t.Errorf("List() before any list, with the link down: synced, want not")
	}
	if svcs, synced := o.List(); !synced || len(svcs) != 1 {
		t.Errorf("List() of a kubelet started with the link up, now down = %v, %t, want its start's list", svcs, synced)
	}
	clk.Advance(time.Minute)
	if obj, synced := o.Get(k); !synced || obj != nil {
		t.Errorf("Get() once the link is back = %v, %t, want the deletion seen", obj, synced)
	}
	svcs, synced := o.List()
	if !synced || len(svcs) != 1 || svcs[0].Name != "kubernetes" {
		t.Errorf("List() = %v, %t, want the kubernetes Service", svcs, synced)
	}
	o.Stop(k)
	if _, synced := o.Get(k); synced {
		t.Errorf("Get() after Stop: synced, want not")
	}
}
