package kubecontainer

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestMinBackoffExpiration(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	crash := func(d time.Duration) error {
		return &BackoffError{Err: fmt.Errorf("back-off restarting container app: %w", ErrCrashLoopBackOff), Expiry: t0.Add(d)}
	}
	tests := []struct {
		name   string
		err    error
		want   time.Time
		wantOK bool
	}{
		{name: "nil", err: nil},
		{name: "plain error", err: errors.New("boom")},
		{name: "one", err: crash(10 * time.Second), want: t0.Add(10 * time.Second), wantOK: true},
		{name: "wrapped", err: fmt.Errorf("sync: %w", crash(20*time.Second)), want: t0.Add(20 * time.Second), wantOK: true},
		{name: "joined picks earliest", err: errors.Join(crash(40*time.Second), errors.New("x"), crash(10*time.Second)), want: t0.Add(10 * time.Second), wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MinBackoffExpiration(tt.err)
			if ok != tt.wantOK || !got.Equal(tt.want) {
				t.Errorf("MinBackoffExpiration() = %v, %v, want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if !errors.Is(crash(time.Second), ErrCrashLoopBackOff) {
		t.Error("errors.Is(BackoffError, ErrCrashLoopBackOff) = false, want true")
	}
}
