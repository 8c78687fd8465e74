package vclock

import (
	"testing"
	"time"
)

func TestNextTickDropsMissedTicks(t *testing.T) {
	s := time.Second
	tests := []struct {
		name      string
		last, now time.Duration
		want      time.Duration
	}{
		{name: "on time", last: 0, now: 10 * s, want: 20 * s},
		{name: "early", last: 0, now: 3 * s, want: 10 * s},
		{name: "missed two", last: 0, now: 25 * s, want: 30 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NextTick(Epoch.Add(tt.last), 10*s, Epoch.Add(tt.now))
			if want := Epoch.Add(tt.want); !got.Equal(want) {
				t.Errorf("NextTick(%v, 10s, %v) = %v, want %v", tt.last, tt.now, got.Sub(Epoch), tt.want)
			}
		})
	}
}

func TestDue(t *testing.T) {
	if Due(time.Time{}, Epoch) {
		t.Error("Due(zero, now) = true, want false")
	}
	if !Due(Epoch, Epoch) {
		t.Error("Due(now, now) = false, want true")
	}
	if Due(Epoch.Add(time.Nanosecond), Epoch) {
		t.Error("Due(later, now) = true, want false")
	}
}

func TestEarliest(t *testing.T) {
	if _, ok := Earliest(); ok {
		t.Error("Earliest() ok = true, want false")
	}
	got, ok := Earliest(WakeOf(Epoch.Add(3*time.Second), true), WakeOf(Epoch, false), WakeOf(Epoch.Add(time.Second), true))
	if !ok || !got.Equal(Epoch.Add(time.Second)) {
		t.Errorf("Earliest(3s, unset, 1s) = %v, %v, want 1s, true", got.Sub(Epoch), ok)
	}
}
