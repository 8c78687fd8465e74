package pleg

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// TestWatchConditions follows generic_test.go TestWatchConditions: a pod with a watch condition is
// reinspected at every relist until the condition holds, then gets one ConditionMet event and is
// left alone; a watch on a pod the runtime no longer lists is dropped.
func TestWatchConditions(t *testing.T) {
	tp := newTestPLEG(t)
	tp.lister.pods = []*kubecontainer.Pod{pod("1", container("c1", running)), pod("2", container("c2", running))}
	tp.pleg.Relist()

	checks := 0
	met := false
	tp.pleg.SetPodWatchCondition("1", "resize", func(*kubecontainer.PodStatus) bool {
		checks++
		return met
	})
	calls := tp.lister.calls["1"]
	if got := tp.pleg.Relist(); len(got) != 0 {
		t.Errorf("Relist() with the condition not met = %v, want no events", got)
	}
	if checks != 1 || tp.lister.calls["1"] != calls+1 {
		t.Errorf("after one relist: %d checks, %d status reads, want 1 and 1", checks, tp.lister.calls["1"]-calls)
	}
	met = true
	if diff := cmp.Diff([]Event{{ID: "1", Type: ConditionMet}}, tp.pleg.Relist()); diff != "" {
		t.Errorf("Relist() with the condition met mismatch (-want +got):\n%s", diff)
	}
	if got := tp.pleg.Relist(); len(got) != 0 || checks != 2 {
		t.Errorf("Relist() after the condition was met = %v (%d checks), want no events and no check", got, checks)
	}

	// Setting a key again replaces its condition.
	tp.pleg.SetPodWatchCondition("2", "k", func(*kubecontainer.PodStatus) bool { return false })
	tp.pleg.SetPodWatchCondition("2", "k", func(*kubecontainer.PodStatus) bool { return true })
	if diff := cmp.Diff([]Event{{ID: "2", Type: ConditionMet}}, tp.pleg.Relist()); diff != "" {
		t.Errorf("Relist() after the condition was replaced mismatch (-want +got):\n%s", diff)
	}

	// The pod goes: its watch goes with it.
	tp.pleg.SetPodWatchCondition("2", "k", func(*kubecontainer.PodStatus) bool { return false })
	tp.lister.pods = []*kubecontainer.Pod{pod("1", container("c1", running))}
	tp.pleg.Relist()
	tp.pleg.Relist()
	if len(tp.pleg.watches) != 0 {
		t.Errorf("watches after the pod went = %v, want none", tp.pleg.watches)
	}
}

func TestConditionMetString(t *testing.T) {
	if got := ConditionMet.String(); got != "ConditionMet" {
		t.Errorf("ConditionMet.String() = %q", got)
	}
	if got := ConditionMet.traceKind(); got != "ConditionMet" {
		t.Errorf("ConditionMet.traceKind() = %q", got)
	}
}
