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

// replaysOnOneGoroutine is why the test that replays lessons on the test's goroutine and reads
// what the replay recorded skips under -race: the replay starts no goroutines of this module
// (the prometheus client may start its own), and sim/replay's race run replays every scenario;
// the plain suite runs it.
const replaysOnOneGoroutine = "replays on one goroutine, no goroutines of this module; sim/replay's race run replays every scenario"

// TestExplainGoldens narrates every lesson scenario and compares the text with its golden file.
func TestExplainGoldens(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
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

// ev stamps a hand-written event as the recorder would: its number, its cause and its time.
func ev(seq, cause uint64, at time.Duration, e trace.Event) trace.Event {
	e.Seq, e.Cause, e.T = seq, cause, at
	return e
}

// TestExplainClauses checks the narration of single events against hand-written traces.
func TestExplainClauses(t *testing.T) {
	const pod = "default/web"
	events := []trace.Event{
		ev(1, 0, time.Second, trace.Event{Component: trace.Scenario, Event: trace.KindContainerExit, Pod: pod, Message: "container app exits with 1"}),
		ev(2, 1, time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindExited, Pod: pod, Container: "app", ExitCode: trace.Int(1), Reason: "Error"}),
		ev(3, 2, 2*time.Second, trace.Event{Component: trace.PLEG, Event: trace.KindContainerDied, Pod: pod, Container: "app"}),
		ev(4, 3, 2*time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindBackOff, Pod: pod, Container: "app", Delay: 10 * time.Second, Reason: "CrashLoopBackOff", Func: "doBackOff"}),
		ev(5, 4, 12*time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindStarted, Pod: pod, Container: "app"}),
		ev(6, 0, 12*time.Second, trace.Event{Component: trace.Housekeeping, Event: trace.KindKill, Pod: pod}),
	}
	x := newExplainer(events)
	got := x.step(1, nil, -1)
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

// TestExplainAdoptsStepsBeforeThePod narrates a crashLoop given before its pod is created: its
// effects are told with the step that creates the pod, not under a step that changed nothing at
// its time.
func TestExplainAdoptsStepsBeforeThePod(t *testing.T) {
	const pod = "default/crasher"
	events := []trace.Event{
		ev(1, 0, time.Second, trace.Event{Component: trace.Scenario, Event: trace.KindCrashLoop, Pod: pod, Message: "container app exits with 1 after 2s, every run"}),
		ev(2, 0, time.Second, trace.Event{Component: trace.Scenario, Event: trace.KindAPICreatePod, Pod: pod}),
		ev(3, 2, time.Second, trace.Event{Component: trace.APIServer, Event: trace.KindCreate, Pod: pod, Func: "POST pods"}),
		ev(4, 1, 5*time.Second, trace.Event{Component: trace.Runtime, Event: trace.KindExited, Pod: pod, Container: "app", ExitCode: trace.Int(1), Reason: "Error"}),
	}
	x := newExplainer(events)
	adopted, handedTo := x.adoptions([]uint64{1, 2})
	if handedTo[0] != 1 || handedTo[1] != -1 || len(adopted[1]) != 1 || adopted[1][0] != 1 {
		t.Fatalf("adoptions() = %v, %v, want step 1's effects told with step 2", adopted, handedTo)
	}
	if got := x.step(1, adopted[0], handedTo[0]); !strings.Contains(got, "told with step 2, which creates it") || strings.Contains(got, "(Error)") {
		t.Errorf("step 1's paragraph:\n%s\nwant it to point at step 2 and tell nothing of the pod", got)
	}
	got := strings.Join(strings.Fields(x.step(2, adopted[1], handedTo[1])), " ")
	for _, want := range []string{"at once: the API server stores the new pod default/crasher.", "4s later, at 5s: container app exits with code 1 (Error)."} {
		if !strings.Contains(got, want) {
			t.Errorf("step 2's paragraph:\n%s\nwant it to contain %q", got, want)
		}
	}
}
