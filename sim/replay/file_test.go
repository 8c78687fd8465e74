package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	s, err := Parse("demo.yaml", []byte(src), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	if s.Node != "node-1" {
		t.Errorf("Node = %q, want the default node-1", s.Node)
	}
	if len(s.Steps) != 5 {
		t.Fatalf("len(Steps) = %d, want 5", len(s.Steps))
	}
	if x, ok := s.Steps[1].act.(*Expect); !ok || x.RestartCount == nil || *x.RestartCount != 0 {
		t.Errorf("Steps[1] = %+v, want an expect with restartCount 0", s.Steps[1].act)
	}
	if got := s.Runtime.ImagePull.Duration; got != 2*time.Second {
		t.Errorf("Runtime.ImagePull = %v, want 2s", got)
	}
	stowed, ok := s.Steps[3].act.(*stowedPod)
	if !ok {
		t.Fatalf("Steps[3] = %+v, want a stowed apiCreatePod", s.Steps[3].act)
	}
	a, err := stowed.unstow()
	if err != nil {
		t.Fatalf("Steps[3] unstow() error = %v", err)
	}
	create, ok := a.(*APICreatePod)
	if !ok {
		t.Fatalf("Steps[3] unstowed = %T, want an apiCreatePod", a)
	}
	if cs := create.Pod.Spec.Containers; len(cs) != 1 || cs[0].Image != "busybox" {
		t.Errorf("Steps[3] unstowed containers = %+v, want one of image busybox", cs)
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
		{"node and nodes", "name: bad\nnode: a\nnodes: [a, b]\nsources: [file]\n", "node and nodes exclude each other"},
		{"nodes twice", "name: bad\nnodes: [a, a]\nsources: [file]\n", `nodes: "a" is listed twice`},
		{"no nodes", "name: bad\nnodes: 0\nsources: [file]\n", "want a positive count or a list of names"},
		{"bad node name", "name: bad\nnodes: [Node_1]\nsources: [file]\n", `node "Node_1"`},
		{"step on an unknown node", "name: bad\nnodes: 2\nsources: [file]\nsteps:\n- at: 1s\n  node: node-3\n  removeManifest: {name: a}\n", `step 1 (at 1s): node "node-3" is not one of the scenario's nodes [node-1 node-2]`},
		{"plugin step with two nodes", "name: bad\nnodes: 2\nsources: [file]\nsteps:\n- at: 1s\n  createPluginSocket: {name: a, type: DevicePlugin}\n", "plugin steps need a scenario with one node"},
		{"apiServerDown without the api source", head + "- at: 1s\n  apiServerDown: {for: 10s}\n", "apiServerDown needs the api source"},
		{"apiServerDown for nothing", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiServerDown: {for: 0s}\n", "apiServerDown.for must be positive"},
		{"malformed pod", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiCreatePod:\n    pod:\n      metadata: {name: p}\n      spec: {containerz: []}\n", `step 1: unknown field "apiCreatePod.pod.spec.containerz"`},
		{"pod without containers", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiCreatePod: {pod: {metadata: {name: p}}}\n", "pod.spec.containers must not be empty"},
		{"bad duration", head + "- at: soon\n  removeManifest: {name: a}\n", "step 1:"},
		{"bad pod key", head + "- at: 1s\n  expect: {pod: web, phase: Running}\n", `pod "web": want namespace/name`},
		{"expect nothing", head + "- at: 1s\n  expect: {pod: default/web}\n", "expect checks nothing"},
		{"expectPodMachinery nothing", head + "- at: 1s\n  expectPodMachinery: {}\n", "expectPodMachinery checks nothing"},
		{"expectPodMachinery typo", head + "- at: 1s\n  expectPodMachinery: {queues: []}\n", `unknown field "expectPodMachinery.queues"`},
		{"bad mirror", head + "- at: 1s\n  expect: {pod: default/web, mirror: maybe}\n", "want present or absent"},
		{"unknown source", "name: bad\nsources: [etcd]\n", `unknown pod source "etcd"`},
		{"path in manifest name", head + "- at: 1s\n  removeManifest: {name: ../etc/passwd}\n", "plain file name"},
		{"missing name", "sources: [file]\n", "name is required"},
		{"unknown expect key", head + "- at: 1s\n  expect: {pod: default/web, exitcode: 1}\n", `step 1: unknown field "expect.exitcode"`},
		{"exitCode without container", head + "- at: 1s\n  expect: {pod: default/web, exitCode: 1}\n", "describe a container"},
		{"bad condition type", head + "- at: 1s\n  expect: {pod: default/web, conditions: {Happy: \"True\"}}\n", `"Happy" is not a pod condition type`},
		{"bad condition value", head + "- at: 1s\n  expect: {pod: default/web, conditions: {Ready: Maybe}}\n", `conditions.Ready: "Maybe"`},
		{"bad ready", head + "- at: 1s\n  expect: {pod: default/web, container: c, ready: maybe}\n", "step 1:"},
		{"apiObject bad kind", head + "- at: 1s\n  expect: {apiObject: {kind: Secrets, namespace: a, name: b, path: .data, equals: x}}\n", `apiObject.kind "Secrets": want a kind the API server serves: Event, Node, Pod`},
		{"apiObject bad apiVersion", head + "- at: 1s\n  expect: {apiObject: {kind: Event, apiVersion: events.k8s.io/v2, namespace: a, path: .items, equals: x}}\n", `serves no kind "Event" in "events.k8s.io/v2"`},
		{"apiObject namespaced kind", head + "- at: 1s\n  expect: {apiObject: {kind: ConfigMap, name: b, path: .data, equals: x}}\n", "apiObject.namespace is required for a ConfigMap"},
		{"apiObject csinode namespace", head + "- at: 1s\n  expect: {apiObject: {kind: CSINode, namespace: x, name: node-1, path: .kind, equals: CSINode}}\n", "must be empty for a CSINode: it is cluster-scoped"},
		{"apiObject bad path", head + "- at: 1s\n  expect: {apiObject: {kind: Node, name: node-1, path: \"{.status[\", equals: x}}\n", "apiObject.path"},
		{"apiObject node namespace", head + "- at: 1s\n  expect: {apiObject: {kind: Node, namespace: x, name: node-1, path: .kind, equals: Node}}\n", "must be empty for a Node"},
		{"apiObject namespace namespace", head + "- at: 1s\n  expect: {apiObject: {kind: Namespace, namespace: x, name: team, path: .kind, equals: Namespace}}\n", "must be empty for a Namespace"},
		{"namespace step without api", head + "- at: 1s\n  apiCreateNamespace: {name: team}\n", "apiCreateNamespace needs the api source"},
		{"namespace step without name", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiDeleteNamespace: {}\n", "name is required"},
		{"pod checks without pod", head + "- at: 1s\n  expect: {phase: Running}\n", "pod is required"},
		{"containerStop without effect", head + "- at: 1s\n  containerStop: {pod: default/web, container: c}\n", "needs after or ignoreSIGTERM"},
		{"containerStop with both", head + "- at: 1s\n  containerStop: {pod: default/web, container: c, after: 1s, ignoreSIGTERM: true}\n", "exclude each other"},
		{"containerStop too long", head + "- at: 1s\n  containerStop: {pod: default/web, container: c, after: 25h}\n", "containerStop.after 25h0m0s"},
		{"unknown feature gate", "name: bad\nfeatureGates: {Nope: true}\n", "unrecognized feature gate: Nope"},
		{"parallel pulls while serialized", "name: bad\nsettings: {serializeImagePulls: true, maxParallelImagePulls: 3}\n", "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls"},
		{"two sync frequencies", "name: bad\nsyncFrequency: 1m\nsettings: {syncFrequency: 2m}\n", "are the same setting"},
		{"two feature gate lists", "name: bad\nfeatureGates: {AllAlpha: true}\nsettings: {featureGates: {AllBeta: true}}\n", "settings.featureGates and featureGates are the same setting"},
		{"unknown setting", "name: bad\nsettings: {maxPodz: 10}\n", `settings: strict decoding error: unknown field "maxPodz"`},
		{"restart period too long", "name: bad\nsettings: {crashLoopBackOff: {maxContainerRestartPeriod: 10m}}\n", "must be set between 1s and 300s"},
		{"unknown runtime call", head + "- at: 1s\n  failRuntimeCall: {call: ExecSync, times: 1}\n", `failRuntimeCall.call "ExecSync"`},
		{"no failures", head + "- at: 1s\n  failRuntimeCall: {call: CreateContainer, times: 0}\n", "failRuntimeCall.times must be positive"},
		{"unknown volume operation", head + "- at: 1s\n  failVolumeOperation: {pod: default/web, volume: data, operation: mount, times: 1}\n", `step 1 (at 1s): failVolumeOperation.operation "mount": want setUp or tearDown`},
		{"no volume failures", head + "- at: 1s\n  failVolumeOperation: {pod: default/web, volume: data, operation: setUp, times: 0}\n", "step 1 (at 1s): failVolumeOperation.times must be positive"},
		{"volume fault without a volume", head + "- at: 1s\n  failVolumeOperation: {pod: default/web, operation: tearDown, times: 1}\n", "step 1 (at 1s): failVolumeOperation.volume is required"},
		{"volume fault with a bad volume name", head + "- at: 1s\n  failVolumeOperation: {pod: default/web, volume: Data_1, operation: tearDown, times: 1}\n", `failVolumeOperation.volume "Data_1"`},
		{"volume fault without a namespace", head + "- at: 1s\n  failVolumeOperation: {pod: web, volume: data, operation: setUp, times: 1}\n", `step 1 (at 1s): pod "web": want namespace/name`},
		{"oomKill without container", head + "- at: 1s\n  oomKill: {pod: default/web}\n", "container is required"},
		{"hook bad httpStatus", head + "- at: 1s\n  hook: {pod: default/web, container: c, hook: postStart, httpStatus: 42}\n", "hook.httpStatus 42: want an HTTP status"},
		{"hook httpStatus with failure", head + "- at: 1s\n  hook: {pod: default/web, container: c, hook: postStart, result: failure, httpStatus: 500}\n", "exclude each other"},
		{"hook negative times", head + "- at: 1s\n  hook: {pod: default/web, container: c, hook: preStop, times: -1}\n", "hook.times must not be negative"},
		{"apiPatchNode without api", head + "- at: 1s\n  apiPatchNode: {patch: {spec: {unschedulable: true}}}\n", "apiPatchNode needs the api source"},
		{"apiPatchNode without patch", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchNode: {name: node-1}\n", "apiPatchNode.patch is required"},
		{"apiPatchNode bad type", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchNode: {type: apply, patch: {}}\n", `apiPatchNode.type "apply": want strategic, merge or json`},
		{"apiPatchNode json patch not a list", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchNode: {type: json, patch: {op: add}}\n", "a json patch is a list of operations"},
		{"apiPatchNode merge patch a list", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchNode: {type: merge, patch: [1]}\n", "a merge patch is a mapping"},
		{"apiPatchNode bad subresource", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchNode: {subresource: spec, patch: {}}\n", `apiPatchNode.subresource "spec"`},
		{"apiPatchPod without name", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchPod: {namespace: default, patch: {}}\n", "name is required"},
		{"apiPatchPod bad subresource", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchPod: {namespace: default, name: web, subresource: binding, patch: {}}\n", `apiPatchPod.subresource "binding"`},
		{"apiResizePod without api", head + "- at: 1s\n  apiResizePod: {namespace: default, name: web, containers: [{name: app, resources: {}}]}\n", "apiResizePod needs the api source"},
		{"apiResizePod without containers", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiResizePod: {namespace: default, name: web}\n", "containers or initContainers is required"},
		{"apiResizePod container without name", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiResizePod: {namespace: default, name: web, containers: [{resources: {}}]}\n", "every container needs a name"},
		{"apiResizePod container twice", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiResizePod: {namespace: default, name: web, containers: [{name: a}], initContainers: [{name: a}]}\n", `container "a" is named twice`},
		{"apiResizePod unknown key", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiResizePod: {namespace: default, name: web, containers: [{name: a, resources: {request: {cpu: 1}}}]}\n", `unknown field`},
		{"apiPatchNode unknown key", "name: bad\nsources: [api]\nsteps:\n- at: 1s\n  apiPatchNode: {labels: {a: b}, patch: {}}\n", `unknown field "apiPatchNode.labels"`},
		{"expectEvent unknown key", head + "- at: 1s\n  expectEvent: {component: events, event: Normal, messages: x}\n", `unknown field "expectEvent.messages"`},
		{"expectNoEvent without event", head + "- at: 1s\n  expectNoEvent: {component: runtime}\n", "event is required"},
		{"expectNoEvent unknown key", head + "- at: 1s\n  expectNoEvent: {component: runtime, event: pull, image: x}\n", `step 1: unknown field "expectNoEvent.image"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.src), LoadOptions{})
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
	_, err := Load("does-not-exist.yaml", LoadOptions{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "does-not-exist.yaml") {
		t.Errorf("Load() error = %v, want ErrInvalid naming the file", err)
	}
}

func TestParseMaxDuration(t *testing.T) {
	head := "name: long\nsources: [file]\nsteps:\n"
	tests := []struct {
		name string
		src  string
		max  time.Duration
		want string // "" means valid
	}{
		{"at the default maximum", head + "- at: 24h\n  removeManifest: {name: a}\n", 0, ""},
		{"at past the default maximum", head + "- at: 2562047h\n  removeManifest: {name: a}\n", 0,
			"long.yaml: step 1 (at 2562047h0m0s): at 2562047h0m0s: longer than the maximum replay duration 24h0m0s"},
		{"a later step past the maximum", head + "- at: 1s\n  removeManifest: {name: a}\n- at: 24h0m1s\n  removeManifest: {name: a}\n", 0,
			"step 2 (at 24h0m1s): at 24h0m1s: longer than the maximum"},
		{"runtimeDown.for past the maximum", head + "- at: 1s\n  runtimeDown: {for: 25h}\n", 0,
			"step 1 (at 1s): runtimeDown.for 25h0m0s: longer than the maximum replay duration 24h0m0s"},
		{"apiServerDown.for past the maximum", "name: long\nsources: [api]\nsteps:\n- at: 1s\n  apiServerDown: {for: 25h}\n", 0,
			"step 1 (at 1s): apiServerDown.for 25h0m0s: longer than the maximum replay duration 24h0m0s"},
		{"crashLoop.after past the maximum", head + "- at: 1s\n  crashLoop: {pod: default/web, container: c, after: 48h}\n", 0,
			"step 1 (at 1s): crashLoop.after 48h0m0s: longer than the maximum replay duration 24h0m0s"},
		{"a raised maximum", head + "- at: 48h\n  runtimeDown: {for: 72h}\n", 72 * time.Hour, ""},
		{"past a raised maximum", head + "- at: 73h\n  removeManifest: {name: a}\n", 72 * time.Hour,
			"at 73h0m0s: longer than the maximum replay duration 72h0m0s"},
		{"a lowered maximum", head + "- at: 2m\n  removeManifest: {name: a}\n", time.Minute,
			"at 2m0s: longer than the maximum replay duration 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("long.yaml", []byte(tt.src), LoadOptions{MaxDuration: tt.max})
			if tt.want == "" {
				if err != nil {
					t.Errorf("Parse(MaxDuration %v) error = %v, want none", tt.max, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, ErrTooLong) {
				t.Errorf("Parse(MaxDuration %v) error = %v, want ErrInvalid and ErrTooLong", tt.max, err)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(MaxDuration %v) error = %v, want it to contain %q", tt.max, err, tt.want)
			}
		})
	}
}

func TestParseNodes(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"name: demo\nsources: [file]\n", []string{"node-1"}},
		{"name: demo\nnode: cp-0\nsources: [file]\n", []string{"cp-0"}},
		{"name: demo\nnodes: 3\nsources: [file]\n", []string{"node-1", "node-2", "node-3"}},
		{"name: demo\nnodes: [a, b]\nsources: [file]\n", []string{"a", "b"}},
	} {
		s, err := Parse("n.yaml", []byte(tc.src), LoadOptions{})
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		if diff := cmp.Diff(tc.want, s.nodeNames()); diff != "" {
			t.Errorf("Parse(%q) nodes (-want +got):\n%s", tc.src, diff)
		}
		if s.Node != tc.want[0] {
			t.Errorf("Parse(%q) node = %q, want %q", tc.src, s.Node, tc.want[0])
		}
	}
}

// TestParseBounds checks that Load refuses, naming the field, what a replay could not simulate in
// bounded memory and time: too many nodes (refused before any is made, so a count of a trillion
// costs nothing), and periods below MinPeriod.
func TestParseBounds(t *testing.T) {
	names := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "n-%d", i)
		}
		return b.String() + "]"
	}
	tests := []struct {
		name string
		src  string
		want string // "" means valid
	}{
		{"the most nodes", "name: b\nnodes: 1000\nsources: [api]\n", ""},
		{"a node too many", "name: b\nnodes: 1001\nsources: [api]\n", "b.yaml: nodes: 1001: a replay simulates at most 1000 nodes"},
		{"a hundred thousand nodes", "name: b\nnodes: 100000\nsources: [api]\n", "nodes: 100000: a replay simulates at most 1000 nodes"},
		{"a trillion nodes", "name: b\nnodes: 1000000000000\nsources: [api]\n", "nodes: 1000000000000: a replay simulates at most 1000 nodes"},
		{"too many node names", "name: b\nnodes: " + names(1001) + "\nsources: [api]\n", "nodes: 1001 names: a replay simulates at most 1000 nodes"},
		{"too many peer nodes", "name: b\nsources: [api]\npeerNodes: " + names(1001) + "\n", "peerNodes: 1001 names: a replay simulates at most 1000 peer nodes"},
		{"the shortest periods", "name: b\nsources: [file, http]\nsyncFrequency: 1s\nfileCheckFrequency: 1s\nhttpCheckFrequency: 1s\n", ""},
		{"fileCheckFrequency", "name: b\nsources: [file]\nfileCheckFrequency: 1ns\n", "b.yaml: fileCheckFrequency 1ns is below the minimum of 1s a replay simulates"},
		{"httpCheckFrequency", "name: b\nsources: [http]\nhttpCheckFrequency: 999ms\n", "httpCheckFrequency 999ms is below the minimum of 1s"},
		{"syncFrequency", "name: b\nsources: [file]\nsyncFrequency: 10ms\n", "syncFrequency 10ms is below the minimum of 1s"},
		{"settings.syncFrequency", "name: b\nsources: [file]\nsettings: {syncFrequency: 1us}\n", "settings.syncFrequency 1µs is below the minimum of 1s"},
		{"settings.nodeStatusUpdateFrequency", "name: b\nsources: [api]\nsettings: {nodeStatusUpdateFrequency: 500ms}\n", "settings.nodeStatusUpdateFrequency 500ms is below the minimum of 1s"},
		{"settings.nodeStatusReportFrequency", "name: b\nsources: [api]\nsettings: {nodeStatusReportFrequency: 1ms}\n", "settings.nodeStatusReportFrequency 1ms is below the minimum of 1s"},
		{"settings.fileCheckFrequency", "name: b\nsources: [file]\nsettings: {fileCheckFrequency: 1ns}\n", "settings.fileCheckFrequency 1ns is below the minimum of 1s"},
		{"settings.httpCheckFrequency", "name: b\nsources: [http]\nsettings: {httpCheckFrequency: 10ms}\n", "settings.httpCheckFrequency 10ms is below the minimum of 1s"},
		{"a zero period is not positive", "name: b\nsources: [file]\nfileCheckFrequency: 0s\n", "fileCheckFrequency must be positive"},
		{"the most devices", "name: b\nsources: [file]\nsteps:\n- at: 1s\n  createPluginSocket: {name: a.sock, type: DevicePlugin, pluginName: example.com/gpu, devices: 10000}\n", ""},
		{"too many devices", "name: b\nsources: [file]\nsteps:\n- at: 1s\n  createPluginSocket: {name: a.sock, type: DevicePlugin, pluginName: example.com/gpu, devices: 10000000000}\n",
			"step 1 (at 1s): devices 10000000000: a simulated device plugin offers at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("b.yaml", []byte(tt.src), LoadOptions{})
			if tt.want == "" {
				if err != nil {
					t.Errorf("Parse() error = %v, want none", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse() error = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}
