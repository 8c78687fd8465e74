package scenario

import (
	"context"
	"testing"
)

// TestExpectEventSeesWhatThePreviousStepEmitted pins the expectEvent window: it starts when the
// previous step starts, so events the step's own action emitted (here the API server's
// "deleting" for a graceful delete) count, while events from before that step do not.
func TestExpectEventSeesWhatThePreviousStepEmitted(t *testing.T) {
	s, err := Parse("window.yaml", []byte(`
name: window
sources: [api]
steps:
- at: 1s
  apiCreatePod:
    pod:
      metadata: {name: web, namespace: default}
      spec: {nodeName: node-1, containers: [{name: nginx, image: nginx:1.27}]}
- at: 5s
  apiDeletePod: {namespace: default, name: web, gracePeriodSeconds: 5}
- at: 5s
  expectEvent: {component: apiserver, event: deleting, pod: default/web}
- at: 5s
  expectEvent: {component: apiserver, event: create, pod: default/web}
`))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	res, err := Run(context.Background(), s, RunOptions{})
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if len(res.Outcomes) != 2 {
		t.Fatalf("Run() gave %d outcomes, want 2", len(res.Outcomes))
	}
	if o := res.Outcomes[0]; !o.Met {
		t.Errorf("expectEvent deleting right after apiDeletePod not met: saw %s", o.Seen)
	}
	if o := res.Outcomes[1]; o.Met {
		t.Errorf("expectEvent create met, want not: the create happened before the previous step")
	}
}
