package replay

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// webPodStep is the step that creates pod default/web on node-1 at at, its container app mounting
// the volume named at /mnt, whose source is source, in YAML flow style.
func webPodStep(at, volume, source string) string {
	return `- at: ` + at + `
  apiCreatePod:
    pod:
      metadata: {name: web, namespace: default}
      spec:
        nodeName: node-1
        containers:
        - {name: app, image: 'busybox:1.36', volumeMounts: [{name: ` + volume + `, mountPath: /mnt}]}
        volumes:
        - {name: ` + volume + `, ` + source + `}
`
}

// replayVolumeScenario parses src as the scenario file name and replays it, with a text report,
// which it returns for the failure messages.
func replayVolumeScenario(t *testing.T, name, src string) (*Result, string) {
	t.Helper()
	s, err := Parse(name, []byte(src), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	var report bytes.Buffer
	res, err := Run(context.Background(), s, RunOptions{Report: &report, Format: trace.Text})
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	return res, report.String()
}

// TestVolumeFaultsOutliveARestart checks that failVolumeOperation scripts the node, not the
// kubelet process: of five scripted SetUp failures, four come before restartKubelet (1.1s, 1.7s,
// 2.8s, 4.9s) and the fifth at the new process's first pass (5.1s), whose back-off starts
// afresh at 500ms, so the volume mounts at 5.7s.
func TestVolumeFaultsOutliveARestart(t *testing.T) {
	src := `name: volume-fault-restart
sources: [api]
runtime: {sandboxStart: 500ms, imagePull: 1s, containerStart: 500ms}
steps:
` + webPodStep("1s", "data", "emptyDir: {}") + `- at: 1s
  failVolumeOperation: {pod: default/web, volume: data, operation: setUp, times: 5}
- at: 4.9s
  expectEvent: {component: events, event: Warning, pod: default/web, reason: FailedMount, message: 'MountVolume.SetUp failed for volume "data" : scripted SetUp failure'}
- at: 5s
  restartKubelet: {}
- at: 5.1s
  expectEvent: {component: events, event: Warning, pod: default/web, reason: FailedMount, message: 'MountVolume.SetUp failed for volume "data" : scripted SetUp failure'}
- at: 5.6s
  expectNoEvent: {component: volumemanager, event: mount, pod: default/web, message: data}
- at: 5.7s
  expectEvent: {component: volumemanager, event: mount, pod: default/web, message: data}
- at: 6s
  expectNoEvent: {component: events, event: Warning, pod: default/web, reason: FailedMount}
- at: 20s
  expect: {pod: default/web, phase: Running, container: app, state: running, restartCount: 0}
`
	res, report := replayVolumeScenario(t, "volume-fault-restart.yaml", src)
	if len(res.StepErrors) != 0 || len(res.Outcomes) != 6 || !res.Passed() {
		t.Errorf("replay: %d outcomes, step errors %v, passed %t, want 6 outcomes met:\n%s", len(res.Outcomes), res.StepErrors, res.Passed(), report)
	}
}

// TestVolumeFaultStaysWithItsPod checks that failVolumeOperation scripts the pod it found when
// the step ran (its UID), not its name: a SetUp failure scripted on a running pod whose emptyDir
// is never set up again (no remount) is never used up, and a new pod created later under the
// same name (another UID) mounts its volume at the first try.
func TestVolumeFaultStaysWithItsPod(t *testing.T) {
	src := `name: volume-fault-recreated-pod
sources: [api]
runtime: {sandboxStart: 500ms, imagePull: 1s, containerStart: 500ms, containerStop: 500ms}
steps:
` + webPodStep("1s", "data", "emptyDir: {}") + `- at: 5s
  failVolumeOperation: {pod: default/web, volume: data, operation: setUp, times: 1}
- at: 6s
  apiDeletePod: {namespace: default, name: web, gracePeriodSeconds: 0}
- at: 20s
  expect: {pod: default/web, present: false}
` + webPodStep("30s", "data", "emptyDir: {}") + `- at: 35s
  expectNoEvent: {component: events, event: Warning, pod: default/web, reason: FailedMount}
- at: 40s
  expect: {pod: default/web, phase: Running, container: app, state: running, restartCount: 0}
`
	res, report := replayVolumeScenario(t, "volume-fault-recreated-pod.yaml", src)
	if len(res.StepErrors) != 0 || len(res.Outcomes) != 3 || !res.Passed() {
		t.Errorf("the new pod default/web (another UID) inherited the deleted pod's scripted SetUp failure: %d outcomes, step errors %v, passed %t, want 3 outcomes met:\n%s", len(res.Outcomes), res.StepErrors, res.Passed(), report)
	}
}

// TestVolumeFaultRefusesVolumesNoMounterServes checks that failVolumeOperation refuses a hostPath
// or an image volume with a step error: in v1.35 the hostPath plugin's TearDown does nothing and
// its SetUp only checks the path, and the image plugin's SetUpAt and TearDownAt do nothing, so
// neither can fail as a mount does.
func TestVolumeFaultRefusesVolumesNoMounterServes(t *testing.T) {
	for _, tc := range []struct{ source, kind string }{
		{"hostPath: {path: /var/log}", "a hostPath"},
		{"image: {reference: 'busybox:1.36'}", "an image"},
	} {
		for _, op := range []string{"setUp", "tearDown"} {
			t.Run(tc.kind+"/"+op, func(t *testing.T) {
				src := `name: volume-fault-hostpath
sources: [api]
runtime: {sandboxStart: 500ms, imagePull: 1s, containerStart: 500ms}
steps:
` + webPodStep("1s", "logs", tc.source) + `- at: 2s
  failVolumeOperation: {pod: default/web, volume: logs, operation: ` + op + `, times: 1}
`
				res, _ := replayVolumeScenario(t, "volume-fault-hostpath.yaml", src)
				want := []string{`step 2 (failVolumeOperation at 2s) could not be carried out: fail volume operation: pod default/web volume "logs" is ` + tc.kind + ` volume, whose ` + op + ` never reaches the node's mounter`}
				var got []string
				for _, e := range res.StepErrors {
					got = append(got, e.Error())
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("step errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}
