package replay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// apiWeb is a scenario head that creates default/web through the API at 1s.
const apiWeb = `name: window
sources: [api]
steps:
- at: 1s
  apiCreatePod:
    pod:
      metadata: {name: web, namespace: default}
      spec: {nodeName: node-1, containers: [{name: nginx, image: nginx:1.27}]}
`

// deleteWeb deletes default/web at 5s. The API server traces "deleting" at once; the pod's
// container stops at 5s and the kubelet's final status deletes the pod ("delete") at 6s.
const deleteWeb = `- at: 5s
  apiDeletePod: {namespace: default, name: web, gracePeriodSeconds: 5}
`

// TestExpectEventWindow pins the expectEvent window of docs/scenarios.md: the events since the
// previous step began, that step's own events included, where expectEvents in a row at one
// instant share the window of the first of them.
func TestExpectEventWindow(t *testing.T) {
	tests := []struct {
		name  string
		steps string
		want  []bool // Met, per expectation
	}{{
		// "deleting" and "killing" come from the apiDeletePod itself; "create" is from 1s.
		name: "expectEvents right after an action",
		steps: deleteWeb + `- at: 5s
  expectEvent: {component: apiserver, event: deleting, pod: default/web}
- at: 5s
  expectEvent: {component: runtime, event: killing, pod: default/web}
- at: 5s
  expectEvent: {component: apiserver, event: create, pod: default/web}
`,
		want: []bool{true, true, false},
	}, {
		// The case: the create at 1s came before the expectEvent at 2s, so the one at 19s
		// must not see it. Consecutive expectEvents used to share one window.
		name: "a later expectEvent looks after the previous one",
		steps: `- at: 2s
  expectEvent: {component: apiserver, event: create, pod: default/web}
- at: 19s
  expectEvent: {component: apiserver, event: create, pod: default/web}
`,
		want: []bool{true, false},
	}, {
		name: "events between two expectEvents count",
		steps: deleteWeb + `- at: 5s
  expectEvent: {component: apiserver, event: deleting, pod: default/web}
- at: 19s
  expectEvent: {component: apiserver, event: delete, pod: default/web}
- at: 19s
  expectEvent: {component: scenario, event: apiDeletePod, pod: default/web}
`,
		want: []bool{true, true, false},
	}, {
		name: "an expect in between",
		steps: deleteWeb + `- at: 5s
  expect: {pod: default/web, workerState: terminated}
- at: 19s
  expectEvent: {component: apiserver, event: delete, pod: default/web}
- at: 19s
  expectEvent: {component: scenario, event: apiDeletePod, pod: default/web}
`,
		want: []bool{true, true, false},
	}, {
		// expectNoEvent shares the window: it fails on what an expectEvent there would see.
		name: "expectNoEvent",
		steps: deleteWeb + `- at: 5s
  expectNoEvent: {component: apiserver, event: deleting, pod: default/web}
- at: 5s
  expectNoEvent: {component: apiserver, event: create, pod: default/web}
- at: 5s
  expectNoEvent: {component: runtime, event: killing, container: other}
- at: 5s
  expectEvent: {component: runtime, event: killing, container: nginx}
`,
		want: []bool{false, true, true, true},
	}, {
		name: "container details, conditions and API objects",
		steps: `- at: 3s
  expect: {pod: default/web, container: nginx, state: running, reason: "", ready: true, conditions: {Ready: "True", ContainersReady: "True", DisruptionTarget: absent}, podReason: ""}
- at: 3s
  expect: {pod: default/web, container: nginx, exitCode: 0}
- at: 3s
  expect: {apiObject: {kind: Pod, namespace: default, name: web, path: '.status.containerStatuses[0].ready', equals: "true"}}
- at: 3s
  expect: {apiObject: {kind: Node, name: node-1, path: '{.metadata.labels.kubernetes\.io/hostname}', equals: node-1}}
- at: 3s
  expect: {apiObject: {kind: Pod, namespace: default, name: nothing, path: .status, equals: <absent>}}
- at: 3s
  expect: {pod: default/web, conditions: {Ready: "False"}}
`,
		want: []bool{true, false, true, true, true, false},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("window.yaml", []byte(apiWeb+tt.steps), LoadOptions{})
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			res, err := Run(context.Background(), s, RunOptions{})
			if err != nil {
				t.Fatalf("Run() error = %v", err)
			}
			var got []bool
			for _, o := range res.Outcomes {
				got = append(got, o.Met)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Run() outcomes Met (-want +got):\n%s\noutcomes: %+v", diff, res.Outcomes)
			}
		})
	}
}

// cancelOnEvent is a trace sink that cancels the replay when it sees its first line from the
// given virtual time on, and remembers every line.
type cancelOnEvent struct {
	at     string // the text trace's time column, such as "60.000s"
	cancel context.CancelFunc
	lines  []string
}

func (c *cancelOnEvent) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	c.lines = append(c.lines, line)
	if strings.HasPrefix(line, c.at) {
		c.cancel()
	}
	return len(p), nil
}

// TestRunStopsWhenCancelled checks that a replay returns ctx's error, with the virtual time it
// reached, within the instant at which ctx was cancelled: a day of virtual time must not be
// played out.
func TestRunStopsWhenCancelled(t *testing.T) {
	s, err := Parse("long.yaml", []byte(`name: long
sources: [file]
steps:
- at: 0s
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec: {containers: [{name: nginx, image: nginx:1.27}]}
- at: 24h
  expect: {pod: default/web-node-1, phase: Running}
`), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}

	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out := &cancelOnEvent{cancel: func() {}}
		res, err := Run(ctx, s, RunOptions{Out: out, Format: trace.Text})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("Run(cancelled ctx) = %v, %v, want context.Canceled", res, err)
		}
		if want := "replay long.yaml: stopped at 0s: context canceled"; err.Error() != want {
			t.Errorf("Run(cancelled ctx) error = %q, want %q", err, want)
		}
		if len(out.lines) != 0 {
			t.Errorf("Run(cancelled ctx) traced %q, want nothing", out.lines)
		}
	})

	t.Run("cancelled during the replay", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The file source relists every 20s, so 60s is an instant with trace events.
		out := &cancelOnEvent{at: "60.000s", cancel: cancel}
		res, err := Run(ctx, s, RunOptions{Out: out, Format: trace.Text})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("Run() = %v, %v, want context.Canceled", res, err)
		}
		if !strings.Contains(err.Error(), "stopped at 1m0s") {
			t.Errorf("Run() error = %q, want it to name the virtual time 1m0s", err)
		}
		last := out.lines[len(out.lines)-1]
		if !strings.HasPrefix(last, out.at) {
			t.Errorf("Run() traced %q after the cancel at %s, want nothing after that instant", last, out.at)
		}
	})
}

// TestRunCancelDoesNotChangeTrace checks that looking at ctx leaves the replay as it was: a
// context that is never cancelled gives the same trace as one without a deadline.
func TestRunCancelDoesNotChangeTrace(t *testing.T) {
	s, err := Load("../../scenarios/runtime-outage.yaml", LoadOptions{})
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	want, _ := replayToBytes(t, s, trace.Text)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	var got strings.Builder
	if _, err := Run(ctx, s, RunOptions{Out: &got, Format: trace.Text}); err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if diff := FirstDifference(want, []byte(got.String())); diff != "" {
		t.Errorf("Run(ctx with a deadline) trace differs: %s", diff)
	}
}
