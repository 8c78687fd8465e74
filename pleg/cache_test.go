package pleg

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestCacheGetNewerThan(t *testing.T) {
	t0 := vclock.Epoch
	s := func(name string) *kubecontainer.PodStatus { return &kubecontainer.PodStatus{UID: "u", Name: name} }
	tests := []struct {
		name       string
		entry      *kubecontainer.PodStatus
		entryErr   error
		modified   time.Time
		global     time.Time
		minTime    time.Time
		wantStatus *kubecontainer.PodStatus
		wantErr    error
		wantOK     bool
	}{
		{name: "empty cache blocks", minTime: t0},
		{name: "entry newer", entry: s("a"), modified: t0.Add(time.Second), minTime: t0, wantStatus: s("a"), wantOK: true},
		{name: "entry at minTime blocks", entry: s("a"), modified: t0, minTime: t0},
		{name: "global newer returns the entry", entry: s("a"), modified: t0, global: t0.Add(time.Second), minTime: t0, wantStatus: s("a"), wantOK: true},
		{name: "global newer without entry returns the default", global: t0.Add(time.Second), minTime: t0, wantStatus: &kubecontainer.PodStatus{UID: "u"}, wantOK: true},
		{name: "global at minTime blocks", global: t0, minTime: t0},
		{name: "error is returned", entry: s("a"), entryErr: errStatus, modified: t0.Add(time.Second), minTime: t0, wantStatus: s("a"), wantErr: errStatus, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache()
			if tt.entry != nil {
				c.Set("u", tt.entry, tt.entryErr, tt.modified)
			}
			if !tt.global.IsZero() {
				c.UpdateTime(tt.global)
			}
			got, err, ok := c.GetNewerThan("u", tt.minTime)
			if ok != tt.wantOK || !errors.Is(err, tt.wantErr) {
				t.Errorf("GetNewerThan() ok, err = %v, %v, want %v, %v", ok, err, tt.wantOK, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantStatus, got); diff != "" {
				t.Errorf("GetNewerThan() status mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCacheShares checks that the cache hands out the status it was given, as the kubelet's does:
// a pod whose runtime status did not change gets the same pointer at every read (what the pod
// sync's periodic skip compares), and a new Set replaces the entry without touching the old one.
func TestCacheShares(t *testing.T) {
	c := NewCache()
	in := &kubecontainer.PodStatus{UID: "u", ContainerStatuses: []kubecontainer.ContainerStatus{{ID: "c1", State: running}}}
	c.Set("u", in, nil, vclock.Epoch)
	if got, _ := c.Get("u"); got != in {
		t.Errorf("Get() = %p, want the status Set stored (%p)", got, in)
	}
	c.UpdateTime(vclock.Epoch.Add(time.Second))
	if got, _, ok := c.GetNewerThan("u", vclock.Epoch); !ok || got != in {
		t.Errorf("GetNewerThan() = %p, %v, want the status Set stored (%p), true", got, ok, in)
	}
	next := &kubecontainer.PodStatus{UID: "u", ContainerStatuses: []kubecontainer.ContainerStatus{{ID: "c1", State: exited}}}
	c.Set("u", next, nil, vclock.Epoch.Add(time.Second))
	if got, _ := c.Get("u"); got != next {
		t.Errorf("Get() after a second Set = %p, want the new status (%p)", got, next)
	}
	if in.ContainerStatuses[0].State != running {
		t.Errorf("the replaced status's state = %s, want running: Set must not change what it replaces", in.ContainerStatuses[0].State)
	}
	c.Delete("u")
	if got, err := c.Get("u"); err != nil || got.UID != "u" || got.ContainerStatuses != nil {
		t.Errorf("Get() after Delete = %+v, %v, want the empty default", got, err)
	}
}
