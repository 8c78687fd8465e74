package replay_test

import (
	"context"
	"fmt"
	"os"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Replay a scenario on the virtual clock: the trace goes to Out, the verdicts come back.
func ExampleRun() {
	s, err := replay.Parse("example.yaml", []byte(`
name: example
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
  expect: {pod: default/web-node-1, phase: Running, container: nginx, state: running}
`), replay.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := replay.Run(context.Background(), s, replay.RunOptions{Format: trace.Text})
	if err != nil {
		fmt.Println(err)
		return
	}
	res.WriteSummary(os.Stdout)
	// Output:
	// scenario example: replayed to 5s
	//   ok    step 2 at 5s: expect default/web-node-1 phase=Running container nginx state=running
	// expectations: 1 met, 0 failed
}
