package minikubelet_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
)

// TestWake checks the runners' one wait: it ends at the time asked (at once for a past or zero
// time), at a signal, or at the end of the context; a re-armed timer does not fire for its last
// arming.
func TestWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := minikubelet.NewWake(clk)
		defer w.Stop()
		start := clk.Now()
		if !w.Sleep(ctx, start.Add(3*time.Second), nil) || clk.Since(start) != 3*time.Second {
			t.Errorf("Sleep(3s) ended after %v, want 3s", clk.Since(start))
		}
		start = clk.Now()
		if !w.Sleep(ctx, time.Time{}, nil) || clk.Since(start) != 0 {
			t.Errorf("Sleep(zero time) ended after %v, want at once", clk.Since(start))
		}
		// Armed at once, not read: the next arming drops that value.
		w.At(time.Time{})
		synctest.Wait()
		start = clk.Now()
		<-w.At(start.Add(time.Second))
		if clk.Since(start) != time.Second {
			t.Errorf("a re-armed timer fired after %v, want 1s", clk.Since(start))
		}
		signal := make(chan struct{}, 1)
		signal <- struct{}{}
		start = clk.Now()
		if !w.Sleep(ctx, start.Add(time.Hour), signal) || clk.Since(start) != 0 {
			t.Errorf("Sleep with a signal ended after %v, want at once", clk.Since(start))
		}
		cancel()
		if w.Sleep(ctx, clk.Now().Add(time.Hour), nil) {
			t.Error("Sleep after the context ended = true, want false")
		}
	})
}

func TestMissing(t *testing.T) {
	var none minikubelet.Missing
	none.Check("Clock", false)
	if err := none.Err("new thing"); err != nil {
		t.Errorf("Err() with nothing missing = %v, want nil", err)
	}
	var two minikubelet.Missing
	two.Check("Clock", true)
	two.Check("Tracer", false)
	two.Check("Pods", true)
	for what, want := range map[string]string{
		"new thing": "new thing: options Clock, Pods: missing required option",
		"":          "options Clock, Pods: missing required option",
	} {
		err := two.Err(what)
		if err == nil || err.Error() != want || !errors.Is(err, minikubelet.ErrMissingOption) {
			t.Errorf("Err(%q) = %v, want %q wrapping ErrMissingOption", what, err, want)
		}
	}
}

// TestSignal: signals sent while the runner is busy are one pending signal.
func TestSignal(t *testing.T) {
	s := minikubelet.NewSignal()
	s.Notify()
	s.Notify() // does not block
	<-s
	select {
	case <-s:
		t.Error("two signals pending, want one")
	default:
	}
}
