package replay

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// reportWeb writes default/web at 0s; the steps after it are the test's.
const reportWeb = `name: report
description: |
  A pod, then
  the steps under test.
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
`

func TestReport(t *testing.T) {
	tests := []struct {
		name           string
		steps          string
		until          time.Duration
		wantStepErrors []string
		wantNotReached []string
		wantSeen       []string // Seen of each outcome
		wantReport     string   // the inline report, in text
	}{{
		name:           "a step that cannot be carried out",
		steps:          "- at: 2s\n  containerExit: {pod: default/web-node-1, container: ngnix, exitCode: 1}\n",
		wantStepErrors: []string{"step 2 (containerExit at 2s) could not be carried out: exit container ngnix of pod default/web-node-1: no running instance: not found"},
		wantReport:     "    2.000s  verdict       FAIL step 2: containerExit could not be carried out: exit container ngnix of pod default/web-node-1: no running instance: not found\n",
	}, {
		name:           "a volume fault for a pod the node does not have",
		steps:          "- at: 2s\n  failVolumeOperation: {pod: default/web, volume: data, operation: setUp, times: 1}\n",
		wantStepErrors: []string{"step 2 (failVolumeOperation at 2s) could not be carried out: fail volume operation: no pod default/web on node node-1 (no pod default/web was ever seen; known pods: default/web-node-1)"},
		wantReport:     "    2.000s  verdict       FAIL step 2: failVolumeOperation could not be carried out: fail volume operation: no pod default/web on node node-1 (no pod default/web was ever seen; known pods: default/web-node-1)\n",
	}, {
		name:           "a volume fault for a volume the pod does not have",
		steps:          "- at: 2s\n  failVolumeOperation: {pod: default/web-node-1, volume: data, operation: tearDown, times: 2}\n",
		wantStepErrors: []string{`step 2 (failVolumeOperation at 2s) could not be carried out: fail volume operation: pod default/web-node-1 has no volume "data" (its volumes: none)`},
		wantReport:     "    2.000s  verdict       FAIL step 2: failVolumeOperation could not be carried out: fail volume operation: pod default/web-node-1 has no volume \"data\" (its volumes: none)\n",
	}, {
		name:       "an unknown pod names the known ones",
		steps:      "- at: 2s\n  expect: {pod: default/web, phase: Running}\n- at: 2s\n  expect: {pod: default/web, present: false}\n",
		wantSeen:   []string{"phase=none (no pod default/web was ever seen; known pods: default/web-node-1)", ""},
		wantReport: "    2.000s  verdict       FAIL step 2: expect default/web phase=Running; saw phase=none (no pod default/web was ever seen; known pods: default/web-node-1)\n    2.000s  verdict       ok   step 3: expect default/web present=false\n",
	}, {
		name: "until leaves later expectations not reached",
		steps: "- at: 2s\n  expect: {pod: default/web-node-1, phase: Running}\n- at: 30s\n  removeManifest: {name: web.yaml}\n" +
			"- at: 40s\n  expect: {pod: default/web-node-1, present: false}\n- at: 41s\n  expectEvent: {component: podconfig, event: update, op: REMOVE}\n",
		until:          10 * time.Second,
		wantSeen:       []string{""},
		wantNotReached: []string{"step 4 at 40s: expect default/web-node-1 present=false", "step 5 at 41s: expectEvent component=podconfig event=update op=REMOVE"},
		wantReport:     "    2.000s  verdict       ok   step 2: expect default/web-node-1 phase=Running\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("report.yaml", []byte(reportWeb+tt.steps), LoadOptions{})
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			var report bytes.Buffer
			res, err := Run(context.Background(), s, RunOptions{Report: &report, Format: trace.Text, Until: tt.until})
			if err != nil {
				t.Fatalf("Run() error = %v", err)
			}
			var stepErrs, notReached, seen []string
			for _, se := range res.StepErrors {
				stepErrs = append(stepErrs, se.Error())
			}
			for _, o := range res.NotReached {
				notReached = append(notReached, fmt.Sprintf("step %d at %v: %s", o.Step, o.At, o.What))
			}
			for _, o := range res.Outcomes {
				seen = append(seen, o.Seen)
			}
			if diff := cmp.Diff(tt.wantStepErrors, stepErrs); diff != "" {
				t.Errorf("StepErrors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotReached, notReached); diff != "" {
				t.Errorf("NotReached (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSeen, seen); diff != "" {
				t.Errorf("Outcomes' Seen (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReport, report.String()); diff != "" {
				t.Errorf("inline report (-want +got):\n%s", diff)
			}
			if got, want := res.Passed(), len(tt.wantStepErrors) == 0 && !strings.Contains(tt.wantReport, "FAIL"); got != want {
				t.Errorf("Passed() = %v, want %v", got, want)
			}
		})
	}
}

// TestRenderTrace checks that RenderTrace gives back what the Recorder wrote, in both formats,
// so that a golden file in one format can be checked from a replay printed in the other.
func TestRenderTrace(t *testing.T) {
	s, err := Parse("report.yaml", []byte(reportWeb+"- at: 5s\n  expect: {pod: default/web-node-1, phase: Running}\n"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []trace.Format{trace.Text, trace.JSON} {
		var out bytes.Buffer
		res, err := Run(context.Background(), s, RunOptions{Out: &out, Format: format, KeepEvents: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := FirstDifference(out.Bytes(), RenderTrace(res.Events, format)); diff != "" {
			t.Errorf("RenderTrace(%v) differs from the Recorder's output: %s", format, diff)
		}
		if got := GoldenFormat(out.Bytes()); got != format {
			t.Errorf("GoldenFormat(%v trace) = %v", format, got)
		}
	}
}

func TestHeaderAndSummaryFormats(t *testing.T) {
	s, err := Parse("report.yaml", []byte(reportWeb+"- at: 5s\n  expect: {pod: default/web-node-1, phase: Running}\n"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteHeader(&b, s, trace.Text)
	if want := "# scenario report (report.yaml)\n# A pod, then\n# the steps under test.\n"; b.String() != want {
		t.Errorf("WriteHeader(text) = %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteHeader(&b, s, trace.JSON)
	if want := `{"kind":"scenario","name":"report","file":"report.yaml","description":"A pod, then\nthe steps under test."}` + "\n"; b.String() != want {
		t.Errorf("WriteHeader(json) = %q, want %q", b.String(), want)
	}
	r := &Result{Name: "report", End: 5 * time.Second, Outcomes: []Outcome{{Step: 2, At: 5 * time.Second, What: "expect x", Met: true}}}
	b.Reset()
	r.WriteSummaryFormat(&b, trace.JSON, &GoldenCheck{File: "report.golden", Difference: "line 3"})
	want := `{"kind":"summary","name":"report","end":5,"passed":true,"met":1,"failed":0,"outcomes":[{"t":5,"step":2,"what":"expect x","met":true}],"notReached":[],"stepErrors":[],"golden":{"file":"report.golden","updated":false,"matches":false,"difference":"line 3"}}` + "\n"
	if b.String() != want {
		t.Errorf("WriteSummaryFormat(json) =\n%s\nwant\n%s", b.String(), want)
	}
}

func TestGoldenPaths(t *testing.T) {
	for _, tt := range []struct {
		path string
		want trace.Format
	}{{"a.golden", trace.Text}, {"a.jsonl", trace.JSON}, {"a.json", trace.JSON}, {"a.txt", trace.Text}} {
		if got := GoldenFormatForPath(tt.path); got != tt.want {
			t.Errorf("GoldenFormatForPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	for in, want := range map[string]string{"s/a.yaml": "s/a.golden", "a.yml": "a.golden", "a": "a.golden"} {
		if got := GoldenPath(in); got != want {
			t.Errorf("GoldenPath(%q) = %q, want %q", in, got, want)
		}
	}
}
