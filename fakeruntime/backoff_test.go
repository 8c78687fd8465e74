package fakeruntime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/vclock"
)

func TestBackoffSequence(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := NewBackoff(clk)
	var got []time.Duration
	for range 8 {
		b.Next("c", clk.Now())
		got = append(got, b.Get("c"))
		clk.Advance(time.Second)
	}
	s := time.Second
	want := []time.Duration{10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s, 300 * s, 300 * s}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Get() after each Next mismatch (-want +got):\n%s", diff)
	}
}

func TestBackoffIsInBackOffSince(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := NewBackoff(clk)
	finished := clk.Now()
	if b.IsInBackOffSince("c", finished) {
		t.Error("IsInBackOffSince(unknown) = true, want false")
	}
	b.Next("c", finished)
	tests := []struct {
		after time.Duration
		want  bool
	}{
		{after: 0, want: true},
		{after: 9 * time.Second, want: true},
		{after: 10 * time.Second, want: false},
	}
	for _, tt := range tests {
		clk.Set(finished.Add(tt.after))
		if got := b.IsInBackOffSince("c", finished); got != tt.want {
			t.Errorf("IsInBackOffSince(c, finished) %v later = %v, want %v", tt.after, got, tt.want)
		}
	}
}

func TestBackoffExpiresAfterTwiceTheMaximum(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := NewBackoff(clk)
	for range 5 {
		b.Next("c", clk.Now())
	}
	if got := b.Get("c"); got != 160*time.Second {
		t.Fatalf("Get(c) = %v, want 160s", got)
	}
	event := clk.Now().Add(601 * time.Second)
	clk.Set(event)
	if b.IsInBackOffSince("c", event) {
		t.Error("IsInBackOffSince(c) for an event 601s after the last update = true, want false")
	}
	b.Next("c", event)
	if got := b.Get("c"); got != InitialBackoff {
		t.Errorf("Get(c) after an expired entry = %v, want %v", got, InitialBackoff)
	}
}

func TestBackoffGC(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := NewBackoff(clk)
	b.Next("old", clk.Now())
	clk.Advance(301 * time.Second)
	b.Next("new", clk.Now())
	clk.Advance(300 * time.Second)
	b.GC()
	if got := b.Len(); got != 1 || b.Get("new") == 0 {
		t.Errorf("after GC Len() = %d, Get(new) = %v, want only new left", got, b.Get("new"))
	}
	b.Reset("new")
	if got := b.Len(); got != 0 {
		t.Errorf("after Reset Len() = %d, want 0", got)
	}
}

func TestBackoffIsInBackOffSinceUpdate(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	b := NewBackoff(clk)
	b.Next("img", clk.Now())
	if !b.IsInBackOffSinceUpdate("img", clk.Now().Add(9*time.Second)) {
		t.Error("IsInBackOffSinceUpdate(9s after) = false, want true")
	}
	if b.IsInBackOffSinceUpdate("img", clk.Now().Add(10*time.Second)) {
		t.Error("IsInBackOffSinceUpdate(10s after) = true, want false")
	}
}
