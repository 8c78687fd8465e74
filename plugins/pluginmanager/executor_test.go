package pluginmanager

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestExecutorSingleFlight(t *testing.T) {
	e := NewExecutor()
	now := time.Unix(0, 0)
	if err := e.Start("/a", now); err != nil {
		t.Fatal(err)
	}
	if err := e.Start("/b", now); err != nil {
		t.Fatalf("another socket must run in parallel: %v", err)
	}
	if err := e.Start("/a", now); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second start on one socket: err = %v, want ErrAlreadyExists", err)
	}
	e.Finish("/a", now, nil)
	if err := e.Start("/a", now); err != nil {
		t.Fatalf("after success: %v", err)
	}
}

func TestExecutorBackoffGrowsAndResets(t *testing.T) {
	e := NewExecutor()
	now := time.Unix(0, 0)
	var windows []time.Duration
	for range 12 {
		if err := e.Start("/a", now); err != nil {
			t.Fatalf("start at %v: %v", now, err)
		}
		d := e.Finish("/a", now, errors.New("boom"))
		windows = append(windows, d)
		var b *BackoffError
		if err := e.Start("/a", now.Add(d-time.Nanosecond)); !errors.As(err, &b) || !b.Until.Equal(now.Add(d)) {
			t.Fatalf("inside the window: err = %v, want a BackoffError until %v", err, now.Add(d))
		}
		now = now.Add(d)
	}
	want := []time.Duration{
		500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 32 * time.Second, 64 * time.Second, 122 * time.Second, 122 * time.Second,
		122 * time.Second, 122 * time.Second,
	}
	if diff := cmp.Diff(want, windows); diff != "" {
		t.Fatalf("windows (-want +got):\n%s", diff)
	}
	if err := e.Start("/a", now); err != nil {
		t.Fatal(err)
	}
	e.Finish("/a", now, nil)
	if err := e.Start("/a", now); err != nil {
		t.Fatal(err)
	}
	if d := e.Finish("/a", now, errors.New("again")); d != InitialDurationBeforeRetry {
		t.Fatalf("after a success the back-off restarts: got %v", d)
	}
}
