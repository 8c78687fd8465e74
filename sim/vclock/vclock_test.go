package vclock

import (
	"testing"
	"time"
)

func TestClockMovesOnlyWhenTold(t *testing.T) {
	c := New(Epoch)
	if got := c.Now(); !got.Equal(Epoch) {
		t.Errorf("Now() = %v, want %v", got, Epoch)
	}
	c.Advance(1500 * time.Millisecond)
	if got := c.Since(Epoch); got != 1500*time.Millisecond {
		t.Errorf("Since(Epoch) = %v, want 1.5s", got)
	}
	c.Set(Epoch.Add(time.Hour))
	if got := c.Since(Epoch); got != time.Hour {
		t.Errorf("Since(Epoch) after Set = %v, want 1h", got)
	}
}

func TestClockRefusesToGoBack(t *testing.T) {
	c := New(Epoch.Add(time.Minute))
	defer func() {
		if recover() == nil {
			t.Error("Set(earlier) did not panic")
		}
	}()
	c.Set(Epoch)
}
