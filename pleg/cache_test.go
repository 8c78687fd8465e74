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

func TestCacheCopies(t *testing.T) {
	c := NewCache()
	in := &kubecontainer.PodStatus{UID: "u", ContainerStatuses: []kubecontainer.ContainerStatus{{ID: "c1", State: running}}}
	c.Set("u", in, nil, vclock.Epoch)
	in.ContainerStatuses[0].State = exited
	got, _ := c.Get("u")
	if got.ContainerStatuses[0].State != running {
		t.Errorf("cached state after the caller changed its status = %s, want running", got.ContainerStatuses[0].State)
	}
	got.ContainerStatuses[0].State = exited
	again, _ := c.Get("u")
	if again.ContainerStatuses[0].State != running {
		t.Errorf("cached state after a reader changed its copy = %s, want running", again.ContainerStatuses[0].State)
	}
	c.Delete("u")
	if got, err := c.Get("u"); err != nil || got.UID != "u" || got.ContainerStatuses != nil {
		t.Errorf("Get() after Delete = %+v, %v, want the empty default", got, err)
	}
}
