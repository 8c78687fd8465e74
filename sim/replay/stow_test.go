package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// stowScenario's pods hold what a decode could give differently the second time if it were not
// the same decoder on the same bytes: quantities in several forms, empty and null lists, an int
// or string, a time, escapes, and fields left out.
const stowScenario = `name: stow
sources: [api]
steps:
- at: 0s
  apiCreatePod:
    pod:
      metadata:
        name: web
        labels: {app: web, empty: ""}
        annotations: {note: "<&>\u2028", quoted: "web \"1\""}
        creationTimestamp: "2026-01-02T03:04:05Z"
      spec:
        nodeName: node-1
        containers:
        - name: app
          image: busybox:1.36
          command: []
          args: null
          resources:
            requests: {cpu: "0.5", memory: 1e3}
            limits: {cpu: 1500m, memory: "2Gi"}
          ports: [{containerPort: 80, protocol: TCP}]
          readinessProbe:
            httpGet: {path: /, port: http}
            periodSeconds: 5
        volumes: []
- at: 1s
  apiUpdatePod:
    expectError: "may not change"
    pod:
      metadata: {name: web}
      spec:
        containers: [{name: app, image: busybox:1.37}]
- at: 2s
  apiCreatePod:
    pod:
      metadata: {generateName: gen-}
      spec:
        containers: [{name: app, image: busybox:1.36}]
- at: 3s
  apiUpdatePod:
    pod:
      metadata:
        name: web
        labels: {app: web, updated: "yes"}
      spec:
        nodeName: node-1
        containers:
        - name: app
          image: busybox:1.37
          resources:
            requests: {cpu: 500m, memory: "1k"}
            limits: {cpu: 1500m, memory: 2Gi}
          ports: [{containerPort: 80, protocol: TCP}]
          readinessProbe:
            httpGet: {path: /, port: http}
            periodSeconds: 5
`

// TestStowedPodIsTheParsedOne: an apiCreatePod or apiUpdatePod step, decoded again from its JSON
// once Parse stowed it, is the step decoded when the scenario was parsed, field for field, as
// often as it is asked for.
func TestStowedPodIsTheParsedOne(t *testing.T) {
	s, err := Parse("stow.yaml", []byte(stowScenario), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The same steps decoded but not stowed.
	raw, err := yaml.YAMLToJSON([]byte(stowScenario))
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Steps []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	if len(top.Steps) != len(s.Steps) {
		t.Fatalf("%d raw steps, %d parsed", len(top.Steps), len(s.Steps))
	}
	for i, rawStep := range top.Steps {
		fresh, err := decodeStep(rawStep)
		if err != nil {
			t.Fatal(err)
		}
		stowed, ok := s.Steps[i].act.(*stowedPod)
		if !ok {
			t.Fatalf("step %d is a %T, want a stowed pod", i+1, s.Steps[i].act)
		}
		if stowed.kind != s.Steps[i].name {
			t.Errorf("step %d stowed as %q, its key is %q", i+1, stowed.kind, s.Steps[i].name)
		}
		for range 2 {
			again, err := stowed.unstow()
			if err != nil {
				t.Fatalf("step %d: unstow() error = %v", i+1, err)
			}
			if diff := cmp.Diff(fresh.act, action(again), cmp.AllowUnexported(APICreatePod{}, APIUpdatePod{}), cmpopts.IgnoreFields(APICreatePod{}, "body"), cmpopts.IgnoreFields(APIUpdatePod{}, "body")); diff != "" {
				t.Errorf("step %d: stowed step (-parsed +decoded again):\n%s", i+1, diff)
			}
		}
	}
}

// TestStowedScenarioReplaysAlike: a scenario parsed once and replayed twice writes the same pods
// to the API server and traces the same lines, though each replay decodes its stowed steps
// anew: nothing of the first replay's decode is left for the second to find.
func TestStowedScenarioReplaysAlike(t *testing.T) {
	s, err := Parse("stow.yaml", []byte(stowScenario), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replay := func() ([]v1.Pod, string) {
		t.Helper()
		var out bytes.Buffer
		e, err := newEngine(s, RunOptions{Out: &out, Format: trace.Text})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := e.run(ctx, 0); err != nil {
			t.Fatalf("replay: %v", err)
		}
		if len(e.result.StepErrors) != 0 {
			t.Fatalf("replay step errors: %+v", e.result.StepErrors)
		}
		pods, err := e.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pods.Items, out.String()
	}
	firstPods, firstTrace := replay()
	if len(firstPods) != 2 {
		t.Fatalf("the first replay wrote %d pods, want 2 (web and one generated)", len(firstPods))
	}
	for _, p := range firstPods {
		if p.Name == "web" && (p.Labels["updated"] != "yes" || p.Spec.Containers[0].Image != "busybox:1.37") {
			t.Errorf("the first replay's web has labels %v and image %s, want the update's", p.Labels, p.Spec.Containers[0].Image)
		}
	}
	secondPods, secondTrace := replay()
	if diff := cmp.Diff(firstPods, secondPods); diff != "" {
		t.Errorf("pods written by the second replay (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(firstTrace, secondTrace); diff != "" {
		t.Errorf("trace of the second replay (-first +second):\n%s", diff)
	}
}
