package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// runRoot runs the minikubelet command line args and returns its standard output and error.
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

var textTraceLine = regexp.MustCompile(`^ *\d+\.\d{3}s (\S+) +(\S+) +(\S+)`)

// TestReplayTraceViews replays a bundled scenario through the trace flags and checks what each
// shows: every shown line matches the filters, fits 120 columns, and something is shown.
func TestReplayTraceViews(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
	const file = "../../scenarios/mirror-pod-deleted.yaml"
	all, err := runRoot(t, "replay", file)
	if err != nil {
		t.Fatalf("replay %s: %v", file, err)
	}
	count := func(out string) int {
		return len(slices.DeleteFunc(strings.Split(out, "\n"), func(l string) bool { return !textTraceLine.MatchString(l) }))
	}
	tests := []struct {
		name  string
		args  []string
		check func(component, pod, event string) bool
	}{
		{"pod and components", []string{"--trace-pod", "web-node-1", "--trace-component", "runtime,pleg"},
			func(c, p, _ string) bool { return p == "web-node-1" && (c == "runtime" || c == "pleg") }},
		{"quiet", []string{"--trace-quiet"},
			func(c, _, e string) bool {
				return !(c == "podworkers" && e == "requeue") && !(c == "apiserver" && e == "status")
			}},
		{"problems", []string{"--trace-level", "problems"},
			func(c, _, e string) bool {
				return c == "scenario" || trace.LevelOf(trace.Event{Component: trace.Component(c), Event: trace.Kind(e)}) == trace.LevelProblems
			}},
		{"lifecycle", []string{"--trace-level", "1"},
			func(c, _, e string) bool {
				return trace.LevelOf(trace.Event{Component: trace.Component(c), Event: trace.Kind(e)}) <= trace.LevelLifecycle
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runRoot(t, append(append([]string{"replay"}, tt.args...), file)...)
			if err != nil {
				t.Fatalf("replay %v: %v", tt.args, err)
			}
			n := 0
			for _, line := range strings.Split(out, "\n") {
				m := textTraceLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				n++
				if !tt.check(m[1], m[2], m[3]) {
					t.Errorf("replay %v shows %q", tt.args, line)
				}
				if w := utf8.RuneCountInString(line); w > trace.LineWidth {
					t.Errorf("line %q is %d columns wide, want at most %d", line, w, trace.LineWidth)
				}
			}
			if n == 0 || n >= count(all) {
				t.Errorf("replay %v shows %d of %d trace lines, want some but not all", tt.args, n, count(all))
			}
			if !strings.Contains(out, "expectations:") {
				t.Errorf("replay %v output lacks the summary:\n%s", tt.args, out)
			}
		})
	}

	// JSON Lines stay JSON Lines under a view, with the kubelet's source file.
	out, err := runRoot(t, "replay", "--trace-format", "json", "--trace-quiet", "--trace-component", "podworkers", file)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		if c, ok := obj["component"]; ok && c != "podworkers" {
			t.Errorf("--trace-component podworkers shows %q", line)
		}
		if obj["file"] == "pkg/kubelet/pod_workers.go" || obj["file"] == "pkg/kubelet/kubelet.go" {
			files++
		}
	}
	if files == 0 {
		t.Errorf("no podworkers event names its kubelet source file:\n%s", out)
	}

	for _, bad := range [][]string{{"--trace-component", "kubelets"}, {"--trace-level", "verbose"}} {
		if _, err := runRoot(t, append(append([]string{"replay"}, bad...), file)...); exitCode(err) != 2 {
			t.Errorf("replay %v: exit code %d (%v), want 2", bad, exitCode(err), err)
		}
	}
}

// TestReplayTextCutsNoValue replays crash-loop in the text form: every field of every event is
// in its lines, whole, however long the event's message; with --wide each event is one line.
func TestReplayTextCutsNoValue(t *testing.T) {
	if raceEnabled {
		t.Skip(replaysOnOneGoroutine)
	}
	const file = "../../scenarios/crash-loop.yaml"
	s, err := replay.Load(file, replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), s, replay.RunOptions{KeepEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := runRoot(t, "replay", file)
	if err != nil {
		t.Fatalf("replay %s: %v", file, err)
	}
	// An event is its line and the continuation lines after it, which start in the body's
	// column (docs/trace.md, "Text form").
	continuation := strings.Repeat(" ", 50)
	var events []string
	for _, line := range strings.Split(out, "\n") {
		if w := utf8.RuneCountInString(line); textTraceLine.MatchString(line) && w > trace.LineWidth {
			t.Errorf("line %q is %d columns wide, want at most %d", line, w, trace.LineWidth)
		}
		switch {
		case textTraceLine.MatchString(line):
			events = append(events, line)
		case strings.HasPrefix(line, continuation) && len(events) > 0:
			events[len(events)-1] += "\n" + line
		}
	}
	if len(events) != len(res.Events) {
		t.Fatalf("replay %s shows %d events, want %d", file, len(events), len(res.Events))
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for i, e := range res.Events {
		text := events[i]
		want := []string{string(e.Event)}
		add := func(k, v string) {
			if v != "" {
				want = append(want, k+"="+v)
			}
		}
		add("op", e.Op)
		add("source", e.Source)
		add("from", e.From)
		add("to", e.To)
		add("container", e.Container)
		if e.ExitCode != nil {
			add("exitCode", strconv.Itoa(*e.ExitCode))
		}
		if e.Delay != 0 {
			add("delay", e.Delay.Round(time.Millisecond).String())
		}
		add("reason", e.Reason)
		if e.Message != "" {
			want = append(want, strconv.Quote(e.Message))
		}
		for _, w := range want {
			if !strings.Contains(flat(text), flat(w)) {
				t.Errorf("event %d is shown as %q, want %s whole in it", e.Seq, text, w)
			}
		}
		if strings.Contains(text, "…") {
			t.Errorf("event %d is shown as %q, want nothing cut", e.Seq, text)
		}
	}

	wide, err := runRoot(t, "replay", "--wide", file)
	if err != nil {
		t.Fatalf("replay --wide %s: %v", file, err)
	}
	n := 0
	for _, line := range strings.Split(wide, "\n") {
		if textTraceLine.MatchString(line) {
			n++
		} else if strings.HasPrefix(line, continuation) {
			t.Errorf("replay --wide shows a continuation line %q", line)
		}
	}
	if n != len(res.Events) {
		t.Errorf("replay --wide shows %d lines of events, want one for each of the %d events", n, len(res.Events))
	}
}

// TestCommandLineConventions checks the kubelet's logging flags on every command, the version,
// and the exit codes: 2 for a usage error, 1 for a failure.
func TestCommandLineConventions(t *testing.T) {
	const file = "../../scenarios/mirror-pod-deleted.yaml"
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"replay", "-v", "4", "--vmodule", "engine=5", "--logging-format", "text", file}, 0, "expectations:"},
		{[]string{"replay", "--v=2", "--logging-format=json", file}, 0, "expectations:"},
		{[]string{"--version"}, 0, "minikubelet devel\n"},
		{[]string{"version"}, 0, "simulates the kubelet v1.35\n"},
		{[]string{"replay", "--logging-format", "xml", file}, 2, ""},
		{[]string{"replay", "--logging-format", "json", "--vmodule", "engine=5", file}, 2, ""},
		{[]string{"replay", "--no-such-flag", file}, 2, ""},
		{[]string{"replay"}, 2, ""},
		{[]string{"run", "extra-argument"}, 2, ""},
		{[]string{"run", "--max-pods", "many"}, 2, ""},
		{[]string{"apiserver", "--addr", "not an address"}, 1, ""},
		{[]string{"no-such-command"}, 2, ""},
		{[]string{"version", "extra"}, 2, ""},
	}
	for _, tt := range tests {
		out, err := runRoot(t, tt.args...)
		if got := exitCodeOf(err); got != tt.wantCode {
			t.Errorf("minikubelet %q: exit code %d (%v), want %d", tt.args, got, err, tt.wantCode)
		}
		if !strings.Contains(out, tt.wantOut) {
			t.Errorf("minikubelet %q printed %q, want it to contain %q", tt.args, out, tt.wantOut)
		}
	}
}

// TestEveryCommandHasHelp checks that every command's --help has a long description and
// examples.
func TestEveryCommandHasHelp(t *testing.T) {
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		if c.Long == "" || c.Example == "" {
			t.Errorf("%q: Long = %d characters, Example = %d, want both", c.CommandPath(), len(c.Long), len(c.Example))
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(newRootCommand())
}

// TestReadmeAndGoMod checks what `go install ...@latest` and a new reader need: go.mod has no
// replace directive (go install refuses a module with one), and the README names the Go version
// go.mod asks for.
func TestReadmeAndGoMod(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := ""
	for _, line := range strings.Split(string(mod), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "replace") {
			t.Errorf("go.mod has %q: go install github.com/minikubelet/minikubelet/cmd/minikubelet@latest would fail", line)
		}
		if v, ok := strings.CutPrefix(line, "go "); ok {
			goVersion = strings.TrimSpace(v)
		}
	}
	if goVersion == "" || !strings.Contains(string(readme), "Go "+goVersion) {
		t.Errorf("README.md does not name go.mod's Go version %q", goVersion)
	}
	for _, want := range []string{"go install github.com/minikubelet/minikubelet/cmd/minikubelet@latest", "sed -i", "kubectl --kubeconfig", "replay scenarios/"} {
		if !strings.Contains(strings.ReplaceAll(string(readme), "\n", " "), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}
