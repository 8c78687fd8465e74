package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

// Step is one action at one instant: `at`, an optional `node` and exactly one action key, whose
// body decodes into the type stepKinds names for it.
type Step struct {
	At Duration
	// Node names the node the step acts on or checks, among the scenario's nodes. Empty: the
	// node that has the step's pod, or else the first.
	Node string

	// name is the action's key in the file, such as writeManifest, and act its body. act is nil
	// when the step had no action key or more than one; actions says how many it had, for
	// validate to report.
	name    string
	act     action
	actions int
}

// Action returns the name of the step's action as written in the file, such as writeManifest or
// expect.
func (st *Step) Action() string { return st.name }

// action is the body of one kind of step. Each kind is a type of its own, in the file of its
// family (step_*.go), that checks its fields before anything runs and is either a change or an
// expectation.
type action interface {
	// validate checks the body on its own; what it needs from the scenario (a source, the plugin
	// pipeline, a bound on a duration) it declares through the optional interfaces below.
	validate() error
}

// change is an action that does something to the world or to a node: a file, an API write, a
// runtime fault, a kubelet restart.
type change interface {
	action
	// apply carries the action out on n, the node the step acts on. What it cannot carry out
	// it reports with e.stepError; the replay goes on.
	apply(ctx context.Context, e *engine, n *node)
}

// expectation is an action that checks the state at its instant and returns a verdict. The
// engine fills in the verdict's step and time.
type expectation interface {
	action
	judge(ctx context.Context, e *engine, n *node) Outcome
	// describe is what the summary names the expectation when --until stops the replay before it.
	describe() string
}

// The optional capabilities of a kind, each detected by a type assertion.
type (
	// podNamer is a kind that names a pod ("namespace/name"): with several nodes, the step goes
	// to the node that has the pod. pod may return "" when the step names none after all.
	podNamer interface{ pod() string }
	// sourceUser is a kind that needs a pod source configured ("" for none this time).
	sourceUser interface{ source() string }
	// pluginUser is a kind that needs the plugin pipeline, which only a single node runs.
	pluginUser interface{ usesPlugins() }
	// eventCheck is a kind that judges the trace events of its window (docs/scenarios.md,
	// expectEvent's window): checks in a row at one instant share the window of the first.
	eventCheck interface{ checksEvents() }
	// bounded is a kind with durations that LoadOptions.MaxDuration bounds, because they could
	// only take effect after a replay of that length.
	bounded interface{ durations() []namedDuration }
)

// namedDuration is a duration of a step's body and its field's name in the body.
type namedDuration struct {
	field string
	d     time.Duration
}

// stepKind is one row of the step vocabulary: the key of an action in the file, and the type its
// body decodes into.
type stepKind struct {
	name string
	new  func() action
}

// stepKinds is every action a step may have, in the order a step without one lists them. A new
// kind is one type in the file of its family and one row here.
var stepKinds = []stepKind{
	{"writeManifest", func() action { return new(WriteManifest) }},
	{"removeManifest", func() action { return new(RemoveManifest) }},
	{"renameManifest", func() action { return new(RenameManifest) }},
	{"serveHTTP", func() action { return new(ServeHTTP) }},
	{"apiCreatePod", func() action { return new(APICreatePod) }},
	{"apiUpdatePod", func() action { return new(APIUpdatePod) }},
	{"apiUpdatePodStatus", func() action { return new(APIUpdatePodStatus) }},
	{"apiDeletePod", func() action { return new(APIDeletePod) }},
	{"apiDeleteMirrorPod", func() action { return new(APIDeleteMirrorPod) }},
	{"apiCreateNamespace", func() action { return new(APICreateNamespace) }},
	{"apiDeleteNamespace", func() action { return new(APIDeleteNamespace) }},
	{"apiCreateObject", func() action { return new(APICreateObject) }},
	{"containerExit", func() action { return new(ContainerExit) }},
	{"crashLoop", func() action { return new(CrashLoop) }},
	{"failImagePull", func() action { return new(FailImagePull) }},
	{"runtimeDown", func() action { return new(RuntimeDown) }},
	{"apiServerDown", func() action { return new(APIServerDown) }},
	{"expect", func() action { return new(Expect) }},
	{"expectEvent", func() action { return new(ExpectEvent) }},
	{"createPluginSocket", func() action { return new(CreatePluginSocket) }},
	{"removePluginSocket", func() action { return new(RemovePluginSocket) }},
	{"deviceHealth", func() action { return new(DeviceHealth) }},
	{"pluginFails", func() action { return new(PluginFails) }},
	{"expectPlugin", func() action { return new(ExpectPlugin) }},
	{"expectNode", func() action { return new(ExpectNode) }},
	{"expectNoEvent", func() action { return new(ExpectNoEvent) }},
	{"containerStop", func() action { return new(ContainerStop) }},
	{"hook", func() action { return new(Hook) }},
	{"oomKill", func() action { return new(OOMKill) }},
	{"killSandbox", func() action { return new(KillSandbox) }},
	{"failRuntimeCall", func() action { return new(FailRuntimeCall) }},
	{"failVolumeOperation", func() action { return new(FailVolumeOperation) }},
	{"restartKubelet", func() action { return new(RestartKubelet) }},
	{"expectMetric", func() action { return new(ExpectMetric) }},
	{"stopNode", func() action { return new(StopNode) }},
	{"startNode", func() action { return new(StartNode) }},
	{"apiDeleteNode", func() action { return new(APIDeleteNode) }},
	{"apiPatchNode", func() action { return new(APIPatchNode) }},
	{"apiPatchPod", func() action { return new(APIPatchPod) }},
	{"apiResizePod", func() action { return new(APIResizePod) }},
	{"probe", func() action { return new(ProbeStep) }},
	{"expectPodMachinery", func() action { return new(ExpectPodMachinery) }},
}

// kindOf finds the row of an action key.
func kindOf(name string) (stepKind, bool) {
	i := slices.IndexFunc(stepKinds, func(k stepKind) bool { return k.name == name })
	if i < 0 {
		return stepKind{}, false
	}
	return stepKinds[i], true
}

// kindNames lists every action key, in the table's order.
func kindNames() []string {
	names := make([]string, len(stepKinds))
	for i, k := range stepKinds {
		names[i] = k.name
	}
	return names
}

// decodeStep decodes one step as strictly as the rest of the file: keys match case-sensitively,
// unknown and duplicate keys are refused and named by their path in the step
// (`expect.exitcode`). An action key whose body is null counts as absent, as it did when a step
// was one struct of optional fields. How many actions the step has is for validate to judge.
func decodeStep(raw json.RawMessage) (Step, error) {
	var keys map[string]json.RawMessage
	if err := strictJSON(raw, &keys); err != nil {
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return Step{}, errors.New("a step is a mapping of at, an optional node and one action")
		}
		return Step{}, err
	}
	var st Step
	// As the JSON decoder does: the first error in a value wins, and the strict errors (unknown
	// and duplicate keys) are reported only when every value decoded.
	var hard error
	var strict []error
	decode := func(key string, v any) {
		s, h := strictBody(key, keys[key], v)
		if hard == nil {
			hard = h
		}
		strict = append(strict, s...)
	}
	if _, ok := keys["at"]; ok {
		decode("at", &st.At)
	}
	if _, ok := keys["node"]; ok {
		decode("node", &st.Node)
	}
	for _, key := range sortedActionKeys(keys) {
		kind, ok := kindOf(key)
		if !ok {
			strict = append(strict, fmt.Errorf("unknown field %q", key))
			continue
		}
		if bytes.Equal(bytes.TrimSpace(keys[key]), []byte("null")) {
			continue
		}
		a := kind.new()
		decode(key, a)
		if k, ok := a.(stowable); ok {
			k.keep(keys[key])
		}
		st.actions++
		st.name, st.act = key, a
	}
	switch {
	case hard != nil:
		return Step{}, hard
	case len(strict) > 0:
		return Step{}, joinLines(strict)
	}
	if st.actions != 1 {
		st.name, st.act = "", nil
	}
	return st, nil
}

// sortedActionKeys is the step's keys but at and node, in a fixed order.
func sortedActionKeys(keys map[string]json.RawMessage) []string {
	var out []string
	for k := range keys {
		if k != "at" && k != "node" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// strictBody decodes the value of a step's key into v, naming key in what it refuses: an unknown
// or duplicate field by its path from the step (`expect.exitcode`), any other error by the key.
func strictBody(key string, data []byte, v any) (strict []error, hard error) {
	strict, err := sigsjson.UnmarshalStrict(data, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", key, strings.TrimPrefix(err.Error(), "json: "))
	}
	for _, e := range strict {
		if fe, ok := e.(sigsjson.FieldError); ok {
			fe.SetFieldPath(key + "." + fe.FieldPath())
		}
	}
	return strict, nil
}

// joinLines joins errors as strictJSON does, on one line.
func joinLines(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = strings.TrimPrefix(e.Error(), "json: ")
	}
	return errors.New(strings.Join(msgs, "; "))
}

// validate checks that the step has exactly one action, that the scenario has the source the
// action needs, and the action's own fields.
func (st *Step) validate(sources map[string]bool) error {
	switch {
	case st.actions == 0:
		return fmt.Errorf("no action: a step needs exactly one of %s", strings.Join(kindNames(), ", "))
	case st.actions > 1:
		return errors.New("more than one action: a step has exactly one")
	}
	var need error
	if u, ok := st.act.(sourceUser); ok {
		if src := u.source(); src != "" && !sources[src] {
			need = fmt.Errorf("%s needs the %s source: add it to sources", st.name, src)
		}
	}
	return errors.Join(need, st.act.validate())
}

// bound refuses durations above limit among those that set how long the replay runs (at) or
// that could only take effect after it (runtimeDown.for, crashLoop.after, ...).
func (st *Step) bound(limit time.Duration) error {
	check := func(field string, d time.Duration) error {
		if d > limit {
			return fmt.Errorf("%s %v: %w %v", field, d, ErrTooLong, limit)
		}
		return nil
	}
	errs := []error{check("at", st.At.Duration)}
	if b, ok := st.act.(bounded); ok {
		for _, d := range b.durations() {
			errs = append(errs, check(st.name+"."+d.field, d.d))
		}
	}
	return errors.Join(errs...)
}

// usesPlugins reports whether the step needs the plugin pipeline.
func (st *Step) usesPlugins() bool {
	_, ok := st.act.(pluginUser)
	return ok
}

// checksEvents reports whether the step judges the trace events of its window.
func (st *Step) checksEvents() bool {
	_, ok := st.act.(eventCheck)
	return ok
}

// podKey returns the "namespace/name" of the pod the step's action names, if it names one.
func (st *Step) podKey() string {
	if p, ok := st.act.(podNamer); ok {
		return p.pod()
	}
	return ""
}

// nodeFor returns the node a step acts on or checks: the one it names; else the node that has
// seen the step's pod (the first in the scenario's order), or the node the API server binds it
// to; else the first node.
func (e *engine) nodeFor(ctx context.Context, st *Step) *node {
	n, seen := e.findNode(ctx, st)
	if e.checkNodeFor != nil {
		e.checkNodeFor(ctx, st, n, seen)
	}
	return n
}

// findNode is nodeFor's answer, and whether seenBy gave it. It looks the names up in byName and
// seenBy rather than scanning every node: a fleet of a thousand nodes would scan them for every
// step that names a pod.
func (e *engine) findNode(ctx context.Context, st *Step) (n *node, seen bool) {
	if len(e.nodes) == 1 {
		return e.nodes[0], false
	}
	if i, ok := e.byName[st.Node]; ok && st.Node != "" {
		return e.nodes[i], false
	}
	key := st.podKey()
	if key == "" {
		return e.nodes[0], false
	}
	if i, ok := e.seenBy[key]; ok {
		return e.nodes[i], true
	}
	if e.client != nil {
		if ns, name, ok := strings.Cut(key, "/"); ok {
			if pod, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				if i, ok := e.byName[pod.Spec.NodeName]; ok && pod.Spec.NodeName != "" {
					return e.nodes[i], false
				}
			}
		}
	}
	return e.nodes[0], false
}
