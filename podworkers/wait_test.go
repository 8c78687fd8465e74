package podworkers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// waitLog is what a waiting SyncPod was asked, in order: "look at <offset> canceled=<bool>".
type waitLog []string

// waitingSync returns a SyncPod result that looks again every second until the clock reaches
// ready, then ends; a cancel ends it with context.Canceled.
func waitingSync(h *harness, ready time.Time, log *waitLog) Result {
	start := h.clock.Now()
	var look func(ctx context.Context, canceled bool) (Result, error)
	look = func(_ context.Context, canceled bool) (Result, error) {
		now := h.clock.Now()
		*log = append(*log, fmt.Sprintf("look at %v canceled=%t", now.Sub(start), canceled))
		switch {
		case canceled:
			return Result{}, fmt.Errorf("wait for volumes: %w", context.Canceled)
		case !now.Before(ready):
			return Result{}, nil
		}
		return Result{Done: now.Add(time.Second), Wait: look}, nil
	}
	return Result{Done: start.Add(time.Second), Wait: look}
}

// TestWaitingSync checks that a sync returning Wait stays busy, is asked again at each Done, and
// completes when it stops waiting: the worker's next sync comes only after.
func TestWaitingSync(t *testing.T) {
	h := newHarness(t)
	var log waitLog
	h.syncer.result = func(fn string, uid types.UID) (Result, error) {
		if fn == "SyncPod" && len(h.syncer.processed[uid]) == 1 {
			return waitingSync(h, h.clock.Now().Add(3*time.Second), &log), nil
		}
		return Result{}, nil
	}
	pod := newNamedPod("1", "ns", "web", false)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.w.Step(context.Background()) // the first sync starts waiting
	for range 2 {
		h.clock.Advance(time.Second)
		h.w.Step(context.Background())
		if s, _ := h.w.State("1"); s != Sync || h.w.pods["1"].work == nil {
			t.Fatalf("worker at %v: state %v, work %v, want a sync in progress", h.clock.Now(), s, h.w.pods["1"].work)
		}
	}
	h.clock.Advance(time.Second)
	h.w.Step(context.Background())
	if h.w.pods["1"].work != nil {
		t.Errorf("worker still busy after its wait ended")
	}
	want := waitLog{"look at 1s canceled=false", "look at 2s canceled=false", "look at 3s canceled=false"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("looks (-want +got):\n%s", diff)
	}
}

// TestWaitingSyncCanceled checks that a kill cancels a waiting sync at once: Wait is called then
// with canceled set, its error is the iteration's, and the worker goes on to terminate the pod.
func TestWaitingSyncCanceled(t *testing.T) {
	h := newHarness(t)
	var log waitLog
	h.syncer.result = func(fn string, uid types.UID) (Result, error) {
		if fn == "SyncPod" {
			return waitingSync(h, h.clock.Now().Add(time.Hour), &log), nil
		}
		return Result{}, nil
	}
	pod := newNamedPod("1", "ns", "web", false)
	h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
	h.w.Step(context.Background())
	h.clock.Advance(500 * time.Millisecond)
	h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{PodStatusFunc: func(*v1.PodStatus) {}}})
	if at, ok := h.w.NextWake(); !ok || !at.Equal(h.clock.Now()) {
		t.Errorf("NextWake() after the cancel = %v, %t, want now", at, ok)
	}
	h.w.Step(context.Background())
	if diff := cmp.Diff(waitLog{"look at 500ms canceled=true"}, log); diff != "" {
		t.Errorf("looks (-want +got):\n%s", diff)
	}
	var canceled, failed bool
	for _, e := range h.events {
		canceled = canceled || e.Event == trace.KindCancel && e.Message == "the sync's wait ends"
		failed = failed || e.Event == trace.KindError && e.Reason == "Canceled"
	}
	if !canceled || !failed {
		t.Errorf("trace has the cancel %t and the canceled sync's error %t, want both", canceled, failed)
	}
	h.drain()
	if s, _ := h.w.State("1"); s != Finished {
		t.Errorf("state after the kill = %v, want %v", s, Finished)
	}
}

// blockedSync returns a SyncPod result that waits for a call beside the workers: each look
// records itself and, until *returned is set, waits on (a cancel cancels the call, as the
// kubelet's worker context cancels its API request); once the call has returned it ends, with
// context.Canceled if the worker was cancelled.
func blockedSync(h *harness, returned *bool, log *waitLog) Result {
	start := h.clock.Now()
	var look func(ctx context.Context, canceled bool) (Result, error)
	look = func(_ context.Context, canceled bool) (Result, error) {
		*log = append(*log, fmt.Sprintf("look at %v canceled=%t returned=%t", h.clock.Now().Sub(start), canceled, *returned))
		switch {
		case !*returned:
			return Result{Blocked: true, Wait: look}, nil
		case canceled:
			return Result{}, fmt.Errorf("create mirror pod: %w", context.Canceled)
		}
		return Result{}, nil
	}
	return Result{Blocked: true, Wait: look}
}

// TestBlockedSync checks that a sync waiting for a call beside the workers stays busy with no
// wake-up while the clock runs, that only Resume once the call has returned carries it on, and
// that a cancel looks once at once and waits on for the call.
func TestBlockedSync(t *testing.T) {
	for _, tc := range []struct {
		name string
		// cancel kills the pod after 2s, while the call is in flight.
		cancel bool
		want   waitLog
		// wantState is the worker's state once drained.
		wantState State
	}{
		{
			name:      "resumed",
			want:      waitLog{"look at 5s canceled=false returned=false", "look at 5s canceled=false returned=true"},
			wantState: Sync,
		},
		{
			name:      "canceled while blocked",
			cancel:    true,
			want:      waitLog{"look at 2s canceled=true returned=false", "look at 5s canceled=true returned=false", "look at 5s canceled=true returned=true"},
			wantState: Finished,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var log waitLog
			returned := false
			h.syncer.result = func(fn string, uid types.UID) (Result, error) {
				if fn == "SyncPod" && len(h.syncer.processed[uid]) == 1 {
					return blockedSync(h, &returned, &log), nil
				}
				return Result{}, nil
			}
			pod := newNamedPod("1", "ns", "web", false)
			other := newNamedPod("2", "ns", "db", false)
			h.update(UpdateOptions{UpdateType: SyncPodCreate, Pod: pod})
			h.w.Step(context.Background()) // the first sync starts its call
			if at, ok := h.w.NextWake(); ok {
				t.Errorf("NextWake() while the call is in flight = %v, want none", at)
			}
			h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodCreate, Pod: other})
			for i := range 4 {
				h.clock.Advance(time.Second)
				if tc.cancel && i == 1 {
					h.w.UpdatePod(UpdateOptions{UpdateType: SyncPodKill, Pod: pod, KillPodOptions: &KillPodOptions{PodStatusFunc: func(*v1.PodStatus) {}}})
				}
				h.w.Step(context.Background())
				if h.w.pods["1"].work == nil {
					t.Fatalf("worker idle at %v, want it busy until its call returns", h.clock.Now())
				}
			}
			if got := len(h.syncer.processed["2"]); got == 0 {
				t.Errorf("the other pod was not synced while the call was in flight")
			}
			h.clock.Advance(time.Second)
			h.w.Resume("1") // a look before the call has returned waits on
			h.w.Step(context.Background())
			returned = true
			h.w.Resume("1")
			if at, ok := h.w.NextWake(); !ok || !at.Equal(h.clock.Now()) {
				t.Errorf("NextWake() after Resume = %v, %t, want now", at, ok)
			}
			h.w.Step(context.Background())
			if wk := h.w.pods["1"].work; !tc.cancel && wk != nil {
				t.Errorf("worker still in its sync after the call returned and Resume")
			}
			for range 5 { // the other pod resyncs for ever: no drain
				h.clock.Advance(time.Second)
				h.w.Step(context.Background())
			}
			if diff := cmp.Diff(tc.want, log); diff != "" {
				t.Errorf("looks (-want +got):\n%s", diff)
			}
			if s, _ := h.w.State("1"); s != tc.wantState {
				t.Errorf("state = %v, want %v", s, tc.wantState)
			}
		})
	}
}
