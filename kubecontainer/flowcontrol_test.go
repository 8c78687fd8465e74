package kubecontainer

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

func newCrashBackoff(t *testing.T, clk *vclock.Clock) *Backoff {
	t.Helper()
	b, err := NewBackoff(clk, InitialBackoff, MaxContainerBackoff)
	if err != nil {
		t.Fatalf("NewBackoff() error = %v", err)
	}
	return b
}

func TestNewBackoffNeedsAClock(t *testing.T) {
	if _, err := NewBackoff(nil, InitialBackoff, MaxContainerBackoff); !errors.Is(err, ErrNoClock) {
		t.Errorf("NewBackoff(nil clock) error = %v, want %v", err, ErrNoClock)
	}
}

func TestBackoffSequence(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := newCrashBackoff(t, clk)
	var got []time.Duration
	for range 8 {
		b.NextAt("c", clk.Now(), clk.Now())
		got = append(got, b.Get("c"))
		clk.Advance(time.Second)
	}
	s := time.Second
	want := []time.Duration{10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s, 300 * s}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get() after each NextAt mismatch (-want +got):\n%s", diff)
	}
}

func TestBackoffIsInBackOffSinceAt(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := newCrashBackoff(t, clk)
	finished := clk.Now()
	if b.IsInBackOffSinceAt("c", finished, finished) {
		t.Error("IsInBackOffSinceAt(unknown) = true, want false")
	}
	b.NextAt("c", finished, finished)
	tests := []struct {
		after time.Duration
		want  bool
	}{
		{after: 0, want: true},
		{after: 9 * time.Second, want: true},
		{after: 10 * time.Second, want: false},
	}
	for _, tt := range tests {
		if got := b.IsInBackOffSinceAt("c", finished, finished.Add(tt.after)); got != tt.want {
			t.Errorf("IsInBackOffSinceAt(c, finished) %v later = %v, want %v", tt.after, got, tt.want)
		}
	}
}

func TestBackoffExpiresAfterTwiceTheMaximum(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := newCrashBackoff(t, clk)
	for range 5 {
		b.NextAt("c", clk.Now(), clk.Now())
	}
	if got := b.Get("c"); got != 160*time.Second {
		t.Fatalf("Get(c) = %v, want 160s", got)
	}
	event := clk.Now().Add(601 * time.Second)
	if b.IsInBackOffSinceAt("c", event, event) {
		t.Error("IsInBackOffSinceAt(c) for an event 601s after the last update = true, want false")
	}
	b.NextAt("c", event, event)
	if got := b.Get("c"); got != InitialBackoff {
		t.Errorf("Get(c) after an expired entry = %v, want %v", got, InitialBackoff)
	}
	if got := b.LastUpdate("c"); !got.Equal(event) {
		t.Errorf("LastUpdate(c) = %v, want %v", got, event)
	}
}

func TestBackoffGC(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := newCrashBackoff(t, clk)
	b.NextAt("old", clk.Now(), clk.Now())
	clk.Advance(301 * time.Second)
	b.NextAt("new", clk.Now(), clk.Now())
	clk.Advance(300 * time.Second)
	b.GC()
	if got := b.Len(); got != 1 || b.Get("new") == 0 {
		t.Errorf("after GC Len() = %d, Get(new) = %v, want only new left", got, b.Get("new"))
	}
}

func TestBackoffIsInBackOffSinceUpdate(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := newCrashBackoff(t, clk)
	b.NextAt("img", clk.Now(), clk.Now())
	if !b.IsInBackOffSinceUpdate("img", clk.Now().Add(9*time.Second)) {
		t.Error("IsInBackOffSinceUpdate(9s after) = false, want true")
	}
	if b.IsInBackOffSinceUpdate("img", clk.Now().Add(10*time.Second)) {
		t.Error("IsInBackOffSinceUpdate(10s after) = true, want false")
	}
}
