package replay

import "testing"

// TestVolumeTearDownScriptOutlivesADeletedPod: a Memory emptyDir whose SetUp keeps failing under
// its tmpfs leaves the volume's directory; the pod is deleted, so the volume manager forgets it
// with no TearDown (the volume never mounted), and the directory waits for a restarted kubelet
// to reconstruct and tear it down. The script belongs to the node and names the pod's UID, which
// the reconstructed volume has too: its scripted TearDown failure should fail that TearDown.
func TestVolumeTearDownScriptOutlivesADeletedPod(t *testing.T) {
	src := `name: volume-teardown-after-delete
sources: [api]
runtime: {sandboxStart: 500ms, imagePull: 1s, containerStart: 500ms, containerStop: 500ms}
steps:
` + webPodStep("1s", "data", "emptyDir: {medium: Memory}") + `- at: 1s
  failVolumeOperation: {pod: default/web, volume: data, operation: setUp, times: 100}
- at: 1s
  failVolumeOperation: {pod: default/web, volume: data, operation: tearDown, times: 1}
- at: 3s
  apiDeletePod: {namespace: default, name: web, gracePeriodSeconds: 0}
- at: 8s
  expect: {pod: default/web, present: false}
- at: 10s
  restartKubelet: {}
- at: 10.3s
  expectNoEvent: {component: volumemanager, event: unmount, pod: default/web, message: data}
- at: 15s
  expectEvent: {component: volumemanager, event: unmount, pod: default/web, message: data}
`
	res, report := replayVolumeScenario(t, "volume-teardown-after-delete.yaml", src)
	if len(res.StepErrors) != 0 || !res.Passed() {
		t.Errorf("the restarted kubelet's TearDown of the reconstructed volume did not fail as scripted: step errors %v:\n%s", res.StepErrors, report)
	}
}
