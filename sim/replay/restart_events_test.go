package replay

import (
	"context"
	"testing"
)

// TestRestartKubeletHasItsOwnEventCorrelator: a restarted kubelet is a new process with a new
// event broadcaster, whose correlator has seen none of the old process's events. Its
// "Starting kubelet." about the node is a second Event, not a count of 2 on the first one,
// which is what a correlator kept across the restart would make of the repeat.
func TestRestartKubeletHasItsOwnEventCorrelator(t *testing.T) {
	steps := `- at: 5s
  restartKubelet: {}
- at: 10s
  expect: {apiObject: {kind: Event, namespace: default, path: '{.items[?(@.reason=="Starting")].count}', equals: "1 1"}}
`
	s, err := Parse("restart-events.yaml", []byte(apiWeb+steps), LoadOptions{})
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	res, err := Run(context.Background(), s, RunOptions{})
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	for _, o := range res.Outcomes {
		if !o.Met {
			t.Errorf("%+v", o)
		}
	}
}
