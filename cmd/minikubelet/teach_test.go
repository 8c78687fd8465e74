package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/minikubelet/minikubelet/sim/teach"
)

// execute runs a command with args and returns what it printed and its exit code.
func execute(t *testing.T, cmd *cobra.Command, args ...string) (string, int, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), exitCode(err), err
}

// replaysOnOneGoroutine is why the tests that only replay scenarios through the replay, learn
// and explain commands, and take seconds under -race, skip there: a replay runs on the test's
// goroutine on the virtual clock, and the commands start none of their own (the signal context
// is main's), so the race detector has nothing to find in them that sim/replay's race run, which
// replays every scenario, does not already cover; the plain suite runs them.
const replaysOnOneGoroutine = "replays on one goroutine; sim/replay's race run replays every scenario"

func TestReplayHTML(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "pass.yaml", passingScenario)
	page := filepath.Join(dir, "pass.html")
	out, code, err := execute(t, newReplayCommand(), "--html", page, file)
	if code != 0 {
		t.Fatalf("replay --html: exit %d, %v\n%s", code, err, out)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), `"events":[[1,0,0,`) {
		t.Errorf("%s is not a timeline page with its events", page)
	}
	if !strings.Contains(out, "expectations: ") {
		t.Errorf("replay --html printed no summary:\n%s", out)
	}
	if _, code, _ := execute(t, newReplayCommand(), "--html", page, file, file); code != 2 {
		t.Errorf("replay --html with two files: exit %d, want 2", code)
	}
}

func TestExplainCommand(t *testing.T) {
	out, code, err := execute(t, newExplainCommand(), "../../scenarios/static-pod-lifecycle.yaml")
	if code != 0 {
		t.Fatalf("explain: exit %d, %v", code, err)
	}
	want, err := os.ReadFile("../../scenarios/static-pod-lifecycle.explain")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("explain printed something else than scenarios/static-pod-lifecycle.explain:\n%s", out)
	}
	if _, code, _ := execute(t, newExplainCommand(), filepath.Join(t.TempDir(), "missing.yaml")); code != 2 {
		t.Errorf("explain of a missing file: exit %d, want 2", code)
	}
}

func TestLearnCommand(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
	out, code, err := execute(t, newLearnCommand(), "--scenarios", "../../scenarios")
	if code != 0 {
		t.Fatalf("learn: exit %d, %v", code, err)
	}
	for _, want := range []string{"Lesson 1: The kubelet's start-up (start-up)", "Lesson 2: Static pods (static-pods)", "static-pod-lifecycle", ": Device plugins (device-plugins)", "minikubelet explain"} {
		if !strings.Contains(out, want) {
			t.Errorf("learn printed no %q:\n%s", want, out)
		}
	}
	out, code, _ = execute(t, newLearnCommand(), "--scenarios", "../../scenarios", "mirror-pods")
	if code != 0 || !strings.HasPrefix(out, "Mirror pods (mirror-pods)") || !strings.Contains(out, "mirror-pod-deleted") {
		t.Errorf("learn mirror-pods: exit %d\n%s", code, out)
	}
	if _, code, _ := execute(t, newLearnCommand(), "--scenarios", "../../scenarios", "no-such-lesson"); code != 2 {
		t.Errorf("learn of an unknown lesson: exit %d, want 2", code)
	}
}

// TestBuiltinLibraryOutsideACheckout runs learn, explain and replay from an empty directory, as
// after go install: the lessons and scenarios come from the binary, and a file still wins.
func TestBuiltinLibraryOutsideACheckout(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
	want, err := os.ReadFile("../../scenarios/crash-loop.explain")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)

	out, code, err := execute(t, newLearnCommand())
	if code != 0 {
		t.Fatalf("learn: exit %d, %v\n%s", code, err, out)
	}
	c, err := teach.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range c.Lessons {
		if head := fmt.Sprintf("Lesson %d: %s (%s)", i+1, l.Title, l.Name); !strings.Contains(out, head) {
			t.Errorf("learn printed no %q:\n%s", head, out)
		}
	}
	if !strings.Contains(out, "minikubelet explain SCENARIO\n") {
		t.Errorf("learn tells to explain something else than a built-in name:\n%s", out)
	}
	out, code, _ = execute(t, newLearnCommand(), "restarts-and-backoff")
	if code != 0 || !strings.Contains(out, "  minikubelet explain crash-loop\n") {
		t.Errorf("learn restarts-and-backoff: exit %d\n%s", code, out)
	}

	for _, arg := range []string{"crash-loop", "crash-loop.yaml", "scenarios/crash-loop.yaml"} {
		out, code, err := execute(t, newExplainCommand(), arg)
		if code != 0 || out != string(want) {
			t.Errorf("explain %s: exit %d, %v, want the narration of scenarios/crash-loop.explain:\n%s", arg, code, err, out)
		}
	}
	out, code, err = execute(t, newReplayCommand(), "--golden", "crash-loop.golden", "crash-loop")
	if code != 0 || !strings.Contains(out, "# scenario crash-loop (built-in scenarios/crash-loop.yaml)") ||
		!strings.Contains(out, "trace matches crash-loop.golden") {
		t.Errorf("replay --golden crash-loop.golden crash-loop: exit %d, %v\n%s", code, err, out)
	}

	// A file of that name wins over the built-in scenario.
	writeFile(t, dir, "crash-loop.yaml", passingScenario)
	if out, code, _ := execute(t, newReplayCommand(), "crash-loop.yaml"); code != 0 || strings.Contains(out, "built-in") {
		t.Errorf("replay crash-loop.yaml with such a file: exit %d, want the file replayed:\n%s", code, out)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"no-such-scenario"}, "no built-in scenario is named no-such-scenario"},
		{[]string{"--update-golden", "static-pod-lifecycle"}, "is built in and has no file beside it"},
		{[]string{"--golden", "no-such.golden", "static-pod-lifecycle"}, "--golden: "},
	} {
		_, code, err := execute(t, newReplayCommand(), tt.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("replay %v: exit %d, %v, want exit 2 with %q", tt.args, code, err, tt.want)
		}
	}
}
