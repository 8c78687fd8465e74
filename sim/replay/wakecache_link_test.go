package replay

import (
	"testing"
)

// TestWakeCacheLinkReturn replays a node whose API link comes back between two of its kubelet's
// wakes (an outage of 2.3 s), so that the schedule's wake is the link's return: the wake kept
// after a settle (node.nextAt) must carry it, as the fresh one does.
func TestWakeCacheLinkReturn(t *testing.T) {
	s, err := Parse("link-return.yaml", []byte(`name: link-return
sources: [api]
steps:
- at: 0s
  apiCreatePod:
    pod:
      metadata: {name: p, namespace: default}
      spec:
        nodeName: node-1
        containers: [{name: app, image: busybox:1.36}]
- at: 5s
  apiServerDown: {for: 2300ms}
- at: 30s
  expect: {pod: default/p, phase: Running}
`), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse(link-return.yaml) error = %v", err)
	}
	cached := replayWith(t, s, WakeCacheChecked, 0)
	fresh := replayWith(t, s, WakeCacheOff, 0)
	if diff := FirstDifference(fresh, cached); diff != "" {
		t.Errorf("the trace with the wakes kept differs from the one with fresh wakes: %s", diff)
	}
}
