package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/trace"
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
			err := replay(context.Background(), replayConfig{Files: tt.files, TraceFormat: trace.Text}, &out)
			if got := exitCode(err); got != tt.wantCode {
				t.Errorf("replay() exit code = %d (err %v), want %d", got, err, tt.wantCode)
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
	var first bytes.Buffer
	if err := replay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.JSON}, &first); err != nil {
		t.Fatalf("replay() error = %v", err)
	}
	// The golden file is the trace alone: everything before the blank line of the summary.
	traceOnly, _, _ := strings.Cut(first.String(), "\n\n")
	golden := writeFile(t, dir, "good.golden", traceOnly+"\n")
	var out bytes.Buffer
	err := replay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.JSON, Golden: golden}, &out)
	if err != nil || !strings.Contains(out.String(), "trace matches") {
		t.Errorf("replay(--golden same) = %v, output %q, want a match", err, out.String())
	}
	out.Reset()
	missing := filepath.Join(dir, "missing.golden")
	err = replay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.JSON, Golden: missing}, &out)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--golden: ") || out.Len() != 0 {
		t.Errorf("replay(--golden missing) = %v, output %q, want exit 2 before anything runs", err, out.String())
	}
	writeFile(t, dir, "good.golden", strings.Replace(traceOnly, `"podconfig"`, `"podkonfig"`, 1)+"\n")
	out.Reset()
	err = replay(context.Background(), replayConfig{Files: []string{file}, TraceFormat: trace.JSON, Golden: golden}, &out)
	if exitCode(err) != 1 || !strings.Contains(out.String(), "trace differs from") {
		t.Errorf("replay(--golden changed) = %v, output %q, want exit 1 and the first difference", err, out.String())
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
