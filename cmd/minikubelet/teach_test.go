package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
	out, code, err := execute(t, newLearnCommand(), "--scenarios", "../../scenarios")
	if code != 0 {
		t.Fatalf("learn: exit %d, %v", code, err)
	}
	for _, want := range []string{"Lesson 1: Static pods (static-pods)", "static-pod-lifecycle", ": Plugins (plugins)", "minikubelet explain"} {
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
