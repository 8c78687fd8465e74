package runtimestate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeRuntime answers Status with err.
type fakeRuntime struct{ err error }

func (r *fakeRuntime) Status() error { return r.err }

// fakePLEG reports healthy unless err is set.
type fakePLEG struct{ err error }

func (p *fakePLEG) Healthy() (bool, error) { return p.err == nil, p.err }

func TestNewNeedsEveryOption(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("New(Options{}) error = %v, want %v", err, minikubelet.ErrMissingOption)
	}
	for _, name := range []string{"Clock", "Tracer", "Runtime", "PLEG"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("New(Options{}) error = %q, want it to name %s", err, name)
		}
	}
}

func TestErrorsFollowTheStatusChecks(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	rt, pl := &fakeRuntime{}, &fakePLEG{}
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Clock: clk, Tracer: rec, Runtime: rt, PLEG: pl})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	type check struct {
		at      time.Duration
		down    bool   // the runtime fails its status check from this instant
		wantErr string // substring of Errors(), "" for nil
	}
	steps := []check{
		{at: 0, wantErr: ""},
		{at: 4 * time.Second, wantErr: ""},
		{at: 5 * time.Second, down: true, wantErr: ""},
		{at: 30 * time.Second, down: true, wantErr: "container runtime is down"},
		{at: 35 * time.Second, wantErr: ""},
	}
	if err := s.Errors(); err == nil || !strings.Contains(err.Error(), "may not have completed yet") {
		t.Errorf("Errors() before the first check = %v, want the not-completed error", err)
	}
	for _, st := range steps {
		clk.Set(vclock.Epoch.Add(st.at))
		rt.err = nil
		if st.down {
			rt.err = errors.New("runtime status: down")
		}
		// Checks are due every UpPeriod; drive them as the sync loop does.
		for {
			next, ok := s.NextWake()
			if ok && next.After(clk.Now()) {
				break
			}
			s.Advance()
		}
		err := s.Errors()
		switch {
		case st.wantErr == "" && err != nil:
			t.Errorf("Errors() at %v = %v, want nil", st.at, err)
		case st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)):
			t.Errorf("Errors() at %v = %v, want %q", st.at, err, st.wantErr)
		}
	}
	var failed int
	for _, e := range rec.Events() {
		if e.Reason == "RuntimeStatus" && e.Func == "updateRuntimeUp" {
			failed++
		}
	}
	if failed == 0 {
		t.Error("no RuntimeStatus error traced for the failed checks")
	}
	pl.err = errors.New("pleg was last seen active 3m1s ago")
	if err := s.Errors(); err == nil || !strings.Contains(err.Error(), "PLEG is not healthy") {
		t.Errorf("Errors() with an unhealthy PLEG = %v, want a PLEG error", err)
	}
}

// TestCheckLeavesTheLoopsSchedule: an updateRuntimeUp call outside the 5s loop (fastStatusUpdateOnce's)
// records the runtime's answer, or traces its failure, and leaves the loop's next check where it was.
func TestCheckLeavesTheLoopsSchedule(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	rt := &fakeRuntime{err: errors.New("runtime status: container runtime is down")}
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: clk, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Clock: clk, Tracer: rec, Runtime: rt, PLEG: &fakePLEG{}})
	if err != nil {
		t.Fatal(err)
	}
	s.Advance()
	clk.Advance(100 * time.Millisecond)
	s.Check()
	if n := len(rec.Events()); n != 2 {
		t.Errorf("%d events traced after two failed checks, want 2", n)
	}
	rt.err = nil
	clk.Advance(100 * time.Millisecond)
	s.Check()
	if err := s.Errors(); err != nil {
		t.Errorf("Errors() after the runtime answered a check = %v, want nil", err)
	}
	if next, ok := s.NextWake(); !ok || !next.Equal(vclock.Epoch.Add(UpPeriod)) {
		t.Errorf("NextWake() = %v, %v after checks; want the loop's 5s", next, ok)
	}
}
