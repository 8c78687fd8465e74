package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	src := `name: demo
description: a static pod comes and goes
sources: [file, api]
fileCheckFrequency: 20s
runtime:
  imagePull: 2s
steps:
- at: 0s
  writeManifest:
    name: web.yaml
    content: |
      apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec: {containers: [{name: nginx, image: nginx}]}
- at: 5s
  expect: {pod: default/web-node-1, phase: Running, mirror: present, container: nginx, state: running, restartCount: 0}
- at: 5s
  expectEvent: {component: podconfig, event: update, op: ADD, source: file}
- at: 10s
  apiCreatePod:
    pod:
      metadata: {name: api-pod, namespace: default}
      spec: {nodeName: node-1, containers: [{name: c, image: busybox}]}
- at: 11s
  removeManifest: {name: web.yaml}
`
	s, err := Parse("demo.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	if s.Node != "node-1" {
		t.Errorf("Node = %q, want the default node-1", s.Node)
	}
	if len(s.Steps) != 5 {
		t.Fatalf("len(Steps) = %d, want 5", len(s.Steps))
	}
	if got := s.Steps[1].Expect.RestartCount; got == nil || *got != 0 {
		t.Errorf("Steps[1].Expect.RestartCount = %v, want 0", got)
	}
	if got := s.Runtime.ImagePull.Duration; got != 2*time.Second {
		t.Errorf("Runtime.ImagePull = %v, want 2s", got)
	}
	if got := s.Steps[3].APICreatePod.Pod.Spec.Containers[0].Image; got != "busybox" {
		t.Errorf("apiCreatePod image = %q, want busybox", got)
	}
}

func TestParseErrorsNameFileAndStep(t *testing.T) {
	head := "name: bad\nsources: [file]\nsteps:\n"
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"unknown action", head + "- at: 1s\n  explode: {}\n", `bad.yaml: step 1: unknown field "explode"`},
		{"unknown top-level key", "name: bad\nsauces: [file]\n", `unknown field "sauces"`},
		{"unsorted steps", head + "- at: 5s\n  removeManifest: {name: a}\n- at: 1s\n  removeManifest: {name: a}\n", "step 2 (at 1s): steps must be in non-decreasing order"},
		{"two actions", head + "- at: 1s\n  removeManifest: {name: a}\n  runtimeDown: {for: 1s}\n", "step 1 (at 1s): more than one action"},
		{"no action", head + "- at: 1s\n", "step 1 (at 1s): no action"},
		{"missing source", head + "- at: 1s\n  serveHTTP: {status: 200, content: x}\n", "serveHTTP needs the http source"},
		{"malformed pod", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiCreatePod:\n    pod:\n      metadata: {name: p}\n      spec: {containerz: []}\n", `step 1: unknown field "containerz"`},
		{"pod without containers", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiCreatePod: {pod: {metadata: {name: p}}}\n", "pod.spec.containers must not be empty"},
		{"bad duration", head + "- at: soon\n  removeManifest: {name: a}\n", "step 1:"},
		{"bad pod key", head + "- at: 1s\n  expect: {pod: web, phase: Running}\n", `pod "web": want namespace/name`},
		{"expect nothing", head + "- at: 1s\n  expect: {pod: default/web}\n", "expect checks nothing"},
		{"bad mirror", head + "- at: 1s\n  expect: {pod: default/web, mirror: maybe}\n", "want present or absent"},
		{"unknown source", "name: bad\nsources: [etcd]\n", `unknown pod source "etcd"`},
		{"path in manifest name", head + "- at: 1s\n  removeManifest: {name: ../etc/passwd}\n", "plain file name"},
		{"missing name", "sources: [file]\n", "name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse() succeeded, want an error containing %q", tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse() error = %v, want it to wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "bad.yaml") {
				t.Errorf("Parse() error = %q, want it to name bad.yaml and contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("does-not-exist.yaml")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "does-not-exist.yaml") {
		t.Errorf("Load() error = %v, want ErrInvalid naming the file", err)
	}
}
