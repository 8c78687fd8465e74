package replay

import (
	"errors"
	"testing"
)

// FuzzParse checks that no scenario file, however broken, makes Parse panic, and that every
// rejection is an ErrInvalid that callers can map to exit code 2.
func FuzzParse(f *testing.F) {
	f.Add([]byte("name: x\nsources: [file]\nsteps:\n- at: 1s\n  removeManifest: {name: a}\n"))
	f.Add([]byte("name: x\nsources: [api]\nsteps:\n- at: 0s\n  apiCreatePod: {pod: {metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}}\n"))
	f.Add([]byte("name: x\nsources: [api]\nfeatureGates: {KubeletCrashLoopBackOffMax: false}\nsettings: {serializeImagePulls: false, maxParallelImagePulls: 2, crashLoopBackOff: {maxContainerRestartPeriod: 30s}}\nsteps:\n- at: 1s\n  expect: {apiObject: {kind: Node, name: n, path: '{.status.conditions[?(@.type==\"Ready\")].status}', equals: 'True'}}\n- at: 2s\n  failRuntimeCall: {call: CreateContainer, times: 1}\n- at: 2s\n  expectNoEvent: {component: events, event: Warning, reason: BackOff}\n"))
	f.Add([]byte("name: x\nsteps:\n- at: 1s\n  expect: {pod: a/b, container: c, reason: '', exitCode: 137, ready: false, conditions: {Ready: 'False'}, podReason: DeadlineExceeded}\n- at: 1s\n  restartKubelet: {}\n"))
	f.Add([]byte("name: x\nsources: [api]\nsteps:\n- at: 1s\n  apiResizePod: {namespace: default, name: web, containers: [{name: app, resources: {requests: {cpu: 300m}, limits: {cpu: 400m}}}], expectError: Forbidden}\n- at: 2s\n  expect: {pod: default/web, conditions: {PodResizePending: 'True', PodResizeInProgress: absent}}\n"))
	// The bounds: a count that must not be allocated, and periods below the floor.
	f.Add([]byte("name: x\nnodes: 1000000000000\nsources: [api]\n"))
	f.Add([]byte("name: x\nsources: [file, http]\nfileCheckFrequency: 1ns\nhttpCheckFrequency: 1ns\nsettings: {nodeStatusUpdateFrequency: 1ns}\n"))
	f.Add([]byte("name: x\nsources: [api]\nsteps:\n- at: 1s\n  apiCreateObject: {secret: {metadata: {name: db}, stringData: {pw: x}}}\n"))
	f.Add([]byte("name: x\nsources: [api]\nsteps:\n- at: 1s\n  failVolumeOperation: {pod: default/web, volume: data, operation: tearDown, times: 2}\n"))
	f.Add([]byte("steps: [1, 2]"))
	f.Add([]byte("- a\n- b"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, LoadOptions{})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse() error = %v, want ErrInvalid", err)
			}
			return
		}
		for i := 1; i < len(s.Steps); i++ {
			if s.Steps[i].At.Duration < s.Steps[i-1].At.Duration {
				t.Errorf("Parse() accepted unsorted steps")
			}
		}
	})
}
