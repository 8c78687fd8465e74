package teach

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

var update = flag.Bool("update", false, "rewrite the explain goldens (scenarios/*.explain)")

// TestExplainGoldens narrates every lesson scenario and compares the text with its golden file.
func TestExplainGoldens(t *testing.T) {
	c, err := LoadCurriculum(os.DirFS("../../scenarios"), "../../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for _, l := range c.Lessons {
		for _, name := range l.Scenarios {
			if done[name] {
				continue
			}
			done[name] = true
			t.Run(name, func(t *testing.T) {
				s, err := c.Load(name)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Replay(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := Explain(&got, s, res); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("..", "..", "scenarios", name+".explain")
				if *update {
					if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (go test ./teach -run TestExplainGoldens -update writes it)", err)
				}
				if d := replay.FirstDifference(want, got.Bytes()); d != "" {
					t.Errorf("%s differs: %s", golden, d)
				}
			})
		}
	}
}

// TestExplainClauses checks the narration of single events against hand-written traces.
func TestExplainClauses(t *testing.T) {
	const pod = "default/web"
	ev := func(seq, cause uint64, at time.Duration, e trace.Event) trace.Event {
		e.Seq, e.Cause, e.T = seq, cause, at
		return e
	}
	events := []trace.Event{
		ev(1, 0, time.Second, trace.Event{Component: trace.Scenario, Event: trace.KindContainerExit, Pod: pod, Message: "container app exits with 1"}),
		ev(2, 1, time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindExited, Pod: pod, Container: "app", ExitCode: trace.Int(1), Reason: "Error"}),
		ev(3, 2, 2*time.Second, trace.Event{Component: trace.PLEG, Event: trace.KindContainerDied, Pod: pod, Container: "app"}),
		ev(4, 3, 2*time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindBackOff, Pod: pod, Container: "app", Delay: 10 * time.Second, Reason: "CrashLoopBackOff", Func: "doBackOff"}),
		ev(5, 4, 12*time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindStarted, Pod: pod, Container: "app"}),
		ev(6, 0, 12*time.Second, trace.Event{Component: trace.Housekeeping, Event: trace.KindKill, Pod: pod}),
	}
	x := newExplainer(events)
	got := x.step(1)
	for _, want := range []string{
		"The scenario injects containerExit on default/web (container app exits with 1).",
		"at once: container app exits with code 1 (Error).",
		"1s later, at 2s: the PLEG's relist reports ContainerDied for app; the restart of app is held back by the crash-loop back-off, now 10s (doBackOff).",
		"11s later, at 12s: container app runs again, 11s after it exited, once the crash-loop back-off of 10s has run out.",
	} {
		if !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
			t.Errorf("narration:\n%s\nwant it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "housekeeping") {
		t.Errorf("narration %q tells an event the step did not cause", got)
	}
}
