package replay

import (
	"github.com/minikubelet/minikubelet/prober"

	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The worker states an expect step may name, as podworkers prints them; "none" means the pod
// workers have forgotten the UID.
var workerStates = []string{"sync", "terminating", "terminated", "finished", "none"}

// The container states an expect step may name.
var containerStates = []string{"waiting", "running", "terminated", "absent"}

func (s *Scenario) validate(maxDuration time.Duration) error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, errors.New("name is required"))
	}
	switch {
	case len(s.Nodes) > 0 && s.Node != "":
		errs = append(errs, errors.New("node and nodes exclude each other: name the one node in nodes"))
	case len(s.Nodes) > 0:
		s.Node = s.Nodes[0]
	case s.Node == "":
		s.Node = "node-1"
	}
	names := map[string]bool{}
	for _, n := range s.nodeNames() {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("node %q: %s, as the kubelet's node name must be", n, strings.Join(msgs, "; ")))
		}
		if names[n] {
			errs = append(errs, fmt.Errorf("nodes: %q is listed twice", n))
		}
		names[n] = true
	}
	seen := map[string]bool{}
	for _, src := range s.Sources {
		switch src {
		case "file", "http", "api":
		default:
			errs = append(errs, fmt.Errorf("sources: unknown pod source %q: want file, http or api", src))
		}
		if seen[src] {
			errs = append(errs, fmt.Errorf("sources: %q is listed twice", src))
		}
		seen[src] = true
	}
	for name, d := range map[string]*Duration{"syncFrequency": s.SyncFrequency, "fileCheckFrequency": s.FileCheckFrequency, "httpCheckFrequency": s.HTTPCheckFrequency} {
		if d != nil && d.Duration <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", name))
		}
	}
	if err := s.validateSettings(); err != nil {
		errs = append(errs, err)
	}
	if err := s.validateControlPlane(); err != nil {
		errs = append(errs, err)
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		if i > 0 && st.At.Duration < s.Steps[i-1].At.Duration {
			errs = append(errs, fmt.Errorf("step %d (at %v): steps must be in non-decreasing order of at, but step %d is at %v",
				i+1, st.At.Duration, i, s.Steps[i-1].At.Duration))
		}
		var nodeErr error
		switch {
		case st.Node != "" && !names[st.Node]:
			nodeErr = fmt.Errorf("node %q is not one of the scenario's nodes %v", st.Node, s.nodeNames())
		case len(names) > 1 && st.isPluginStep():
			nodeErr = errors.New("plugin steps need a scenario with one node: only a single node runs the plugin pipeline")
		}
		if err := errors.Join(st.validate(seen), st.bound(maxDuration), nodeErr); err != nil {
			errs = append(errs, fmt.Errorf("step %d (at %v): %w", i+1, st.At.Duration, err))
		}
	}
	return errors.Join(errs...)
}

// actionNames lists every action a step may have, in the order of the step's fields.
func actionNames() []string {
	var names []string
	for _, a := range (&Step{}).actions() {
		names = append(names, a.name)
	}
	return names
}

// stepAction is one action of a step and whether the step has it.
type stepAction struct {
	name string
	on   bool
}

// action returns the name of the step's one action and reports how many were set.
func (st *Step) action() (string, int) {
	name, n := "", 0
	for _, a := range st.actions() {
		if a.on {
			name, n = a.name, n+1
		}
	}
	return name, n
}

// actions lists every action with whether st has it.
func (st *Step) actions() []stepAction {
	return []stepAction{
		{"writeManifest", st.WriteManifest != nil},
		{"removeManifest", st.RemoveManifest != nil},
		{"renameManifest", st.RenameManifest != nil},
		{"serveHTTP", st.ServeHTTP != nil},
		{"apiCreatePod", st.APICreatePod != nil},
		{"apiUpdatePod", st.APIUpdatePod != nil},
		{"apiUpdatePodStatus", st.APIUpdatePodStatus != nil},
		{"apiDeletePod", st.APIDeletePod != nil},
		{"apiDeleteMirrorPod", st.APIDeleteMirrorPod != nil},
		{"apiCreateNamespace", st.APICreateNamespace != nil},
		{"apiDeleteNamespace", st.APIDeleteNamespace != nil},
		{"containerExit", st.ContainerExit != nil},
		{"crashLoop", st.CrashLoop != nil},
		{"failImagePull", st.FailImagePull != nil},
		{"runtimeDown", st.RuntimeDown != nil},
		{"apiServerDown", st.APIServerDown != nil},
		{"expect", st.Expect != nil},
		{"expectEvent", st.ExpectEvent != nil},
		{"createPluginSocket", st.CreatePluginSocket != nil},
		{"removePluginSocket", st.RemovePluginSocket != nil},
		{"deviceHealth", st.DeviceHealth != nil},
		{"pluginFails", st.PluginFails != nil},
		{"expectPlugin", st.ExpectPlugin != nil},
		{"expectNode", st.ExpectNode != nil},
		{"expectNoEvent", st.ExpectNoEvent != nil},
		{"containerStop", st.ContainerStop != nil},
		{"hook", st.Hook != nil},
		{"oomKill", st.OOMKill != nil},
		{"killSandbox", st.KillSandbox != nil},
		{"failRuntimeCall", st.FailRuntimeCall != nil},
		{"restartKubelet", st.RestartKubelet != nil},
		{"expectMetric", st.ExpectMetric != nil},
		{"stopNode", st.StopNode != nil},
		{"startNode", st.StartNode != nil},
		{"apiDeleteNode", st.APIDeleteNode != nil},
		{"probe", st.Probe != nil},
	}
}

func (st *Step) validate(sources map[string]bool) error {
	name, n := st.action()
	switch {
	case n == 0:
		return fmt.Errorf("no action: a step needs exactly one of %s", strings.Join(actionNames(), ", "))
	case n > 1:
		return errors.New("more than one action: a step has exactly one")
	}
	need := func(src string) error {
		if !sources[src] {
			return fmt.Errorf("%s needs the %s source: add it to sources", name, src)
		}
		return nil
	}
	switch {
	case st.WriteManifest != nil:
		return errors.Join(need("file"), manifestName(st.WriteManifest.Name))
	case st.RemoveManifest != nil:
		return errors.Join(need("file"), manifestName(st.RemoveManifest.Name))
	case st.RenameManifest != nil:
		return errors.Join(need("file"), manifestName(st.RenameManifest.From), manifestName(st.RenameManifest.To))
	case st.ServeHTTP != nil:
		if st.ServeHTTP.Status < 100 || st.ServeHTTP.Status > 599 {
			return errors.Join(need("http"), fmt.Errorf("serveHTTP.status %d is not an HTTP status code", st.ServeHTTP.Status))
		}
		return need("http")
	case st.APICreatePod != nil:
		return errors.Join(need("api"), apiPod(&st.APICreatePod.Pod))
	case st.APIUpdatePod != nil:
		return errors.Join(need("api"), apiPod(&st.APIUpdatePod.Pod))
	case st.APIUpdatePodStatus != nil:
		return errors.Join(need("api"), podRef(st.APIUpdatePodStatus.Namespace, st.APIUpdatePodStatus.Name))
	case st.APIDeletePod != nil:
		var err error
		if g := st.APIDeletePod.GracePeriodSeconds; g != nil && *g < 0 {
			err = fmt.Errorf("gracePeriodSeconds %d is negative", *g)
		}
		return errors.Join(need("api"), podRef(st.APIDeletePod.Namespace, st.APIDeletePod.Name), err)
	case st.APIDeleteMirrorPod != nil:
		return errors.Join(need("api"), podRef(st.APIDeleteMirrorPod.Namespace, st.APIDeleteMirrorPod.Name))
	case st.StopNode != nil, st.StartNode != nil:
		return need("api")
	case st.APIDeleteNode != nil:
		return errors.Join(need("api"), required("name", st.APIDeleteNode.Name))
	case st.APICreateNamespace != nil:
		return errors.Join(need("api"), required("name", st.APICreateNamespace.Name))
	case st.APIDeleteNamespace != nil:
		return errors.Join(need("api"), required("name", st.APIDeleteNamespace.Name))
	case st.ContainerExit != nil:
		return errors.Join(podKey(st.ContainerExit.Pod), required("container", st.ContainerExit.Container))
	case st.CrashLoop != nil:
		return errors.Join(podKey(st.CrashLoop.Pod), required("container", st.CrashLoop.Container))
	case st.FailImagePull != nil:
		var err error
		if st.FailImagePull.Times <= 0 {
			err = errors.New("failImagePull.times must be positive")
		}
		return errors.Join(required("image", st.FailImagePull.Image), err)
	case st.RuntimeDown != nil:
		if st.RuntimeDown.For.Duration <= 0 {
			return errors.New("runtimeDown.for must be positive")
		}
	case st.APIServerDown != nil:
		if st.APIServerDown.For.Duration <= 0 {
			return errors.Join(need("api"), errors.New("apiServerDown.for must be positive"))
		}
		return need("api")
	case st.Expect != nil:
		return st.Expect.validate()
	case st.ExpectEvent != nil:
		return errors.Join(required("component", st.ExpectEvent.Component), required("event", st.ExpectEvent.Event))
	case st.ContainerStop != nil:
		return st.ContainerStop.validate()
	case st.Hook != nil:
		return st.Hook.validate()
	case st.OOMKill != nil:
		return errors.Join(podKey(st.OOMKill.Pod), required("container", st.OOMKill.Container))
	case st.KillSandbox != nil:
		return podKey(st.KillSandbox.Pod)
	case st.FailRuntimeCall != nil:
		return st.FailRuntimeCall.validate()
	case st.ExpectNoEvent != nil:
		return errors.Join(required("component", st.ExpectNoEvent.Component), required("event", st.ExpectNoEvent.Event))
	case st.ExpectMetric != nil:
		return st.ExpectMetric.validate()
	case st.Probe != nil:
		return st.Probe.validate()
	}
	return st.validatePlugin(need)
}

// bound refuses durations above limit among those that set how long the replay runs (at) or
// that could only take effect after it (runtimeDown.for, crashLoop.after).
func (st *Step) bound(limit time.Duration) error {
	check := func(field string, d time.Duration) error {
		if d > limit {
			return fmt.Errorf("%s %v: %w %v", field, d, ErrTooLong, limit)
		}
		return nil
	}
	errs := []error{check("at", st.At.Duration)}
	if st.RuntimeDown != nil {
		errs = append(errs, check("runtimeDown.for", st.RuntimeDown.For.Duration))
	}
	if st.APIServerDown != nil {
		errs = append(errs, check("apiServerDown.for", st.APIServerDown.For.Duration))
	}
	if st.CrashLoop != nil {
		errs = append(errs, check("crashLoop.after", st.CrashLoop.After.Duration))
	}
	if st.Probe != nil {
		errs = append(errs, check("probe.for", st.Probe.For.Duration))
	}
	if st.ContainerStop != nil && st.ContainerStop.After != nil {
		errs = append(errs, check("containerStop.after", st.ContainerStop.After.Duration))
	}
	if st.Hook != nil && st.Hook.Duration != nil {
		errs = append(errs, check("hook.duration", st.Hook.Duration.Duration))
	}
	return errors.Join(errs...)
}

func (e *Expect) validate() error {
	var errs []error
	podChecks := e.Phase != "" || e.Present != nil || e.WorkerState != "" || e.Mirror != "" || e.Container != "" || e.checksPodDetails()
	switch {
	case e.Pod != "":
		errs = append(errs, podKey(e.Pod))
	case podChecks:
		errs = append(errs, errors.New("pod is required: which pod (namespace/name)"))
	}
	if !podChecks && e.APIObject == nil {
		errs = append(errs, errors.New("expect checks nothing: give phase, present, workerState, mirror, container, conditions, podReason, podMessage or apiObject"))
	}
	errs = append(errs, e.validateDetails())
	switch v1.PodPhase(e.Phase) {
	case "", v1.PodPending, v1.PodRunning, v1.PodSucceeded, v1.PodFailed, v1.PodUnknown:
	default:
		errs = append(errs, fmt.Errorf("phase %q is not a pod phase", e.Phase))
	}
	if e.WorkerState != "" && !slices.Contains(workerStates, e.WorkerState) {
		errs = append(errs, fmt.Errorf("workerState %q: want one of %s", e.WorkerState, strings.Join(workerStates, ", ")))
	}
	if e.Mirror != "" && e.Mirror != "present" && e.Mirror != "absent" {
		errs = append(errs, fmt.Errorf("mirror %q: want present or absent", e.Mirror))
	}
	if e.Container == "" && (e.State != "" || e.RestartCount != nil) {
		errs = append(errs, errors.New("state and restartCount describe a container: name it with container"))
	}
	if e.State != "" && !slices.Contains(containerStates, e.State) {
		errs = append(errs, fmt.Errorf("state %q: want one of %s", e.State, strings.Join(containerStates, ", ")))
	}
	return errors.Join(errs...)
}

func (p *ProbeStep) validate() error {
	errs := []error{podKey(p.Pod), required("container", p.Container)}
	if _, ok := prober.ParseProbeType(p.Type); !ok {
		errs = append(errs, fmt.Errorf("probe.type %q: want liveness, readiness or startup", p.Type))
	}
	if _, ok := prober.ParseOutcome(p.Result); !ok {
		errs = append(errs, fmt.Errorf("probe.result %q: want success, failure, unknown or error", p.Result))
	}
	switch {
	case p.Times < 0:
		errs = append(errs, errors.New("probe.times must not be negative"))
	case p.For.Duration < 0:
		errs = append(errs, errors.New("probe.for must not be negative"))
	case p.Times > 0 && p.For.Duration > 0:
		errs = append(errs, errors.New("probe: give times or for, not both"))
	}
	return errors.Join(errs...)
}

func required(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is required", field)
	}
	return nil
}

func podKey(key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("pod %q: want namespace/name", key)
	}
	return nil
}

func podRef(ns, name string) error {
	return errors.Join(required("namespace", ns), required("name", name))
}

func manifestName(name string) error {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return fmt.Errorf("manifest name %q must be a plain file name inside the static pod directory", name)
	}
	return nil
}

func apiPod(pod *v1.Pod) error {
	var errs []error
	if pod.Name == "" && pod.GenerateName == "" {
		errs = append(errs, errors.New("pod.metadata.name is required"))
	}
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, errors.New("pod.spec.containers must not be empty"))
	}
	for i, c := range pod.Spec.Containers {
		if c.Name == "" || c.Image == "" {
			errs = append(errs, fmt.Errorf("pod.spec.containers[%d] needs a name and an image", i))
		}
	}
	return errors.Join(errs...)
}

// Action returns the name of the step's action as written in the file, such as writeManifest or
// expect.
func (st *Step) Action() string {
	name, _ := st.action()
	return name
}
