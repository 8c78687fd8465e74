package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
)

const passingScenario = `name: tiny
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
- at: 5s
  expect: {pod: default/web-node-1, phase: Running}
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	return 1
}

func TestReplayExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", passingScenario)
	failing := writeFile(t, dir, "failing.yaml", strings.Replace(passingScenario, "phase: Running", "phase: Succeeded", 1))
	bad := writeFile(t, dir, "bad.yaml", "name: bad\nsources: [file]\nsteps:\n- at: 1s\n  explode: {}\n")
	tests := []struct {
		name     string
		files    []string
		wantCode int
		wantOut  string
		wantErr  []string // the error contains each of these; nil means no error
	}{
		{"all expectations met", []string{good}, 0, "expectations: 1 met, 0 failed", nil},
		{"an expectation fails", []string{failing}, 1, "FAIL  step 2 at 5s", []string{"expectations failed"}},
		{"unknown action", []string{good, bad}, 2, "", []string{bad, "explode"}},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, 2, "", []string{filepath.Join(dir, "nope.yaml")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runReplay(context.Background(), replayConfig{Files: tt.files, TraceFormat: trace.Text}, &out)
			if got := exitCode(err); got != tt.wantCode {
				t.Errorf("runReplay() exit code = %d (err %v), want %d", got, err, tt.wantCode)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("replay() output = %q, want it to contain %q", out.String(), tt.wantOut)
			}
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("replay() error = %v, want it to contain %q", err, want)
				}
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("replay() error = %v, want nil", err)
			}
			if tt.wantCode == 2 && out.Len() != 0 {
				t.Errorf("replay() of an invalid file printed %q, want nothing run", out.String())
			}
		})
	}
}

func TestReplayGolden(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "good.yaml", passingScenario)
	textGolden := filepath.Join(dir, "good.golden")
	jsonGolden := filepath.Join(dir, "good.jsonl")
	// --update-golden writes each golden file in the format its name asks for, whatever the
	// output format.
	for _, golden := range []string{textGolden, jsonGolden} {
		var out bytes.Buffer
		err := runReplay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.Text, Golden: golden, UpdateGolden: true}, &out)
		if err != nil || !strings.Contains(out.String(), "golden "+golden+" updated") {
			t.Fatalf("replay(--update-golden %s) = %v, output %q", golden, err, out.String())
		}
	}
	text, err := os.ReadFile(textGolden)
	if err != nil {
		t.Fatal(err)
	}
	jsonl, err := os.ReadFile(jsonGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), "    0.000s kubelet ") || !strings.HasPrefix(string(jsonl), `{"t":0,"component":"kubelet"`) {
		t.Fatalf("golden files hold more than the trace:\n%s\n%s", text, jsonl)
	}
	// Either golden file matches a replay in either output format.
	for _, golden := range []string{textGolden, jsonGolden} {
		for _, format := range []trace.Format{trace.Text, trace.JSON} {
			var out bytes.Buffer
			err := runReplay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: format, Golden: golden}, &out)
			want := "trace matches " + golden
			if format == trace.JSON {
				want = `"golden":{"file":"` + golden + `","updated":false,"matches":true}`
			}
			if err != nil || !strings.Contains(out.String(), want) {
				t.Errorf("replay(--golden %s, %v) = %v, output %q, want it to contain %q", golden, format, err, out.String(), want)
			}
		}
	}
	var out bytes.Buffer
	missing := filepath.Join(dir, "missing.golden")
	err = runReplay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.JSON, Golden: missing}, &out)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--golden: ") || out.Len() != 0 {
		t.Errorf("replay(--golden missing) = %v, output %q, want exit 2 before anything runs", err, out.String())
	}
	// The first podconfig event follows the start-up's; the difference is reported on its line.
	changed := strings.Count(string(jsonl)[:strings.Index(string(jsonl), `"podconfig"`)], "\n") + 1
	writeFile(t, dir, "good.jsonl", strings.Replace(string(jsonl), `"podconfig"`, `"podkonfig"`, 1))
	out.Reset()
	err = runReplay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.Text, Golden: jsonGolden}, &out)
	if exitCode(err) != 1 || !strings.Contains(out.String(), "trace differs from "+jsonGolden+": line "+strconv.Itoa(changed)+":") {
		t.Errorf("replay(--golden changed) = %v, output %q, want exit 1 and the first difference", err, out.String())
	}
}

func TestReplayUpdateGoldenBesideScenario(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "good.yaml", passingScenario)
	if err := runReplay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.JSON, UpdateGolden: true}, io.Discard); err != nil {
		t.Fatalf("replay(--update-golden) error = %v", err)
	}
	golden := filepath.Join(dir, "good.golden")
	got, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("--update-golden wrote no %s: %v", golden, err)
	}
	if !strings.HasPrefix(string(got), "    0.000s kubelet ") {
		t.Errorf("%s = %q, want the text trace", golden, got)
	}
}

// TestReplayJSONLines checks that replay's JSON output is JSON Lines from the first line to the
// last, header and summary included.
func TestReplayJSONLines(t *testing.T) {
	dir := t.TempDir()
	files := []string{writeFile(t, dir, "a.yaml", passingScenario), writeFile(t, dir, "b.yaml", strings.Replace(passingScenario, "tiny", "tiny2", 1))}
	var out bytes.Buffer
	if err := runReplay(context.Background(), replayConfig{Files: files, TraceFormat: trace.JSON}, &out); err != nil {
		t.Fatalf("replay() error = %v", err)
	}
	var kinds []string
	for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d %q is not a JSON object: %v", i+1, line, err)
		}
		if k, ok := obj["kind"].(string); ok {
			kinds = append(kinds, k)
		} else if _, ok := obj["component"]; !ok {
			t.Errorf("line %d %q has neither a kind nor a component", i+1, line)
		}
	}
	want := []string{"scenario", "verdict", "summary", "scenario", "verdict", "summary"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("report lines (-want +got):\n%s", diff)
	}
}

func TestReplayFailsLoudly(t *testing.T) {
	dir := t.TempDir()
	misspelled := writeFile(t, dir, "misspelled.yaml", strings.Replace(passingScenario, "- at: 5s\n",
		"- at: 2s\n  containerExit: {pod: default/web-node-1, container: ngnix, exitCode: 1}\n- at: 5s\n", 1))
	unknownPod := writeFile(t, dir, "unknown.yaml", strings.Replace(passingScenario, "pod: default/web-node-1", "pod: default/web", 1))
	good := writeFile(t, dir, "good.yaml", passingScenario+"- at: 1h\n  expect: {pod: default/web-node-1, present: true}\n")
	tests := []struct {
		name     string
		cfg      replayConfig
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"misspelled container", replayConfig{Files: []string{misspelled}}, 1,
			[]string{"    2.000s  verdict       FAIL step 2: containerExit could not be carried out: exit container ngnix", "steps not carried out: 1"},
			"step 2 (containerExit at 2s) could not be carried out"},
		{"unknown pod", replayConfig{Files: []string{unknownPod}}, 1,
			[]string{"FAIL step 2: expect default/web phase=Running; saw phase=none (no pod default/web was ever seen; known pods: default/web-node-1)"},
			"1 expectations failed"},
		{"until", replayConfig{Files: []string{good}, Until: 10 * time.Second}, 0,
			[]string{"    5.000s  verdict       ok   step 2: expect default/web-node-1 phase=Running\n",
				"  NOT REACHED  step 3 at 1h0m0s: expect default/web-node-1 present=true",
				"expectations: 1 met, 0 failed, 1 not reached (stopped at 10s)"}, ""},
		{"description first", replayConfig{Files: []string{good}}, 0, []string{"# scenario tiny (" + good + ")\n    0.000s"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.cfg.TraceFormat = trace.Text
			err := runReplay(context.Background(), tt.cfg, &out)
			if got := exitCode(err); got != tt.wantCode {
				t.Errorf("runReplay() exit code = %d (err %v), want %d", got, err, tt.wantCode)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("replay() error = %v, want it to contain %q", err, tt.wantErr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("replay() output = %s\nwant it to contain %q", out.String(), want)
				}
			}
		})
	}
}

func TestReplayMaxDuration(t *testing.T) {
	// A day and a second of runtime outage: past the default maximum, but the replay is short
	// (and the pod, running before the outage, still counts as Running at 5s).
	file := writeFile(t, t.TempDir(), "outage.yaml", strings.Replace(passingScenario, "- at: 5s\n",
		"- at: 1s\n  runtimeDown: {for: 24h0m1s}\n- at: 5s\n", 1))
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"default maximum", nil, 2, file + ": step 2 (at 1s): runtimeDown.for 24h0m1s: longer than the maximum replay duration 24h0m0s (--max-duration raises the maximum)"},
		{"raised maximum", []string{"--max-duration", "25h"}, 0, ""},
		{"zero maximum", []string{"--max-duration", "0s"}, 2, "--max-duration 0s: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := newReplayCommand()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			cmd.SetArgs(append(tt.args, file))
			err := cmd.ExecuteContext(context.Background())
			if got := exitCode(err); got != tt.wantCode {
				t.Errorf("replay %q exit code = %d (err %v), want %d", tt.args, got, err, tt.wantCode)
			}
			if tt.wantErr == "" && err != nil {
				t.Errorf("replay %q error = %v, want nil", tt.args, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("replay %q error = %v, want it to contain %q", tt.args, err, tt.wantErr)
			}
		})
	}
}
