package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/minikubelet/minikubelet/sim/world"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"
)

// The pod condition types an expect step may name.
var conditionTypes = []string{
	string(v1.PodScheduled), string(v1.PodReadyToStartContainers), string(v1.PodInitialized),
	string(v1.ContainersReady), string(v1.PodReady), string(v1.DisruptionTarget),
}

// The values a condition may be expected to have.
var conditionValues = []string{string(v1.ConditionTrue), string(v1.ConditionFalse), string(v1.ConditionUnknown), "absent"}

// APIObject names an API object and a JSONPath into it, and the text the path must print. Kind is
// any kind the API server serves for reading (world.ObjectKinds, the API server's readable kinds); APIVersion picks among
// the group versions serving it (Event: v1, the default, or events.k8s.io/v1).
type APIObject struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Path       string `json:"path"`
	Equals     string `json:"equals"`
}

// readableKind finds the kind an apiObject check names among those the API server serves: the
// first row of that kind, or the one of the asked group version.
func (a *APIObject) readableKind() (world.ObjectKind, error) {
	var names []string
	for _, k := range world.ObjectKinds() {
		if k.Kind == a.Kind && (a.APIVersion == "" || a.APIVersion == k.GroupVersion.String()) {
			return k, nil
		}
		if !slices.Contains(names, k.Kind) {
			names = append(names, k.Kind)
		}
	}
	if a.APIVersion != "" {
		return world.ObjectKind{}, fmt.Errorf("apiObject: the API server serves no kind %q in %q", a.Kind, a.APIVersion)
	}
	return world.ObjectKind{}, fmt.Errorf("apiObject.kind %q: want a kind the API server serves: %s", a.Kind, strings.Join(names, ", "))
}

// checkContainerDetails checks the container's reason, exit code and ready flag.
func checkContainerDetails(status v1.PodStatus, x *Expect, check func(field, want, got string)) {
	c := findContainerStatus(status, x.Container)
	if x.Reason != nil {
		got := "none"
		if c != nil {
			got = ""
			switch {
			case c.State.Waiting != nil:
				got = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				got = c.State.Terminated.Reason
			}
		}
		check("container "+x.Container+" reason", *x.Reason, got)
	}
	if x.ExitCode != nil {
		got := "none"
		if c != nil && c.State.Terminated != nil {
			got = strconv.Itoa(int(c.State.Terminated.ExitCode))
		}
		check("container "+x.Container+" exitCode", strconv.Itoa(*x.ExitCode), got)
	}
	if x.Ready != nil {
		got := "none"
		if c != nil {
			got = strconv.FormatBool(c.Ready)
		}
		check("container "+x.Container+" ready", strconv.FormatBool(*x.Ready), got)
	}
	if x.Started != nil {
		got := "none"
		if c != nil && c.Started != nil {
			got = strconv.FormatBool(*c.Started)
		}
		check("container "+x.Container+" started", strconv.FormatBool(*x.Started), got)
	}
}

func findContainerStatus(status v1.PodStatus, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// checkPodFields checks the pod status's conditions, reason and message, in a fixed order.
func checkPodFields(status v1.PodStatus, hasStatus bool, x *Expect, check func(field, want, got string)) {
	for _, t := range conditionTypes {
		want, ok := x.Conditions[t]
		if !ok {
			continue
		}
		got := "absent"
		for _, c := range status.Conditions {
			if string(c.Type) == t {
				got = string(c.Status)
			}
		}
		check("condition "+t, want, got)
	}
	none := func(s string) string {
		if !hasStatus {
			return "none"
		}
		return s
	}
	if x.PodReason != nil {
		check("podReason", strconv.Quote(*x.PodReason), none(strconv.Quote(status.Reason)))
	}
	if x.PodMessage != nil {
		check("podMessage", strconv.Quote(*x.PodMessage), none(strconv.Quote(status.Message)))
	}
}

// checkAPIObject reads the object from the API server and checks the text its path prints.
func (e *engine) checkAPIObject(ctx context.Context, a *APIObject, check func(field, want, got string)) {
	field := fmt.Sprintf("%s %s %s", a.Kind, objectName(a.Namespace, a.Name), a.Path)
	got, err := e.readAPIPath(ctx, a)
	if err != nil {
		got = "error: " + err.Error()
	}
	check(field, strconv.Quote(a.Equals), strconv.Quote(got))
}

func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// readAPIPath gets the object (without a name, the list of the kind in the namespace, as
// `kubectl get events -o jsonpath` reads it) as the API server sends it, and prints its JSONPath as
// kubectl would. An object that does not exist prints "<absent>".
func (e *engine) readAPIPath(ctx context.Context, a *APIObject) (string, error) {
	if e.client == nil {
		return "", fmt.Errorf("no API server: add the api source")
	}
	kind, err := a.readableKind()
	if err != nil {
		return "", err
	}
	data, err := e.client.Discovery().RESTClient().Get().AbsPath(kind.Path(a.Namespace, a.Name)).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return "<absent>", nil
	}
	if err != nil {
		return "", err
	}
	jp, err := parseJSONPath(a.Path)
	if err != nil {
		return "", err
	}
	// Numbers as kubectl's unstructured objects hold them: whole ones as int64.
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return "", fmt.Errorf("decode %s: %w", kind.Path(a.Namespace, a.Name), err)
	}
	var out bytes.Buffer
	if err := jp.Execute(&out, obj); err != nil {
		return "", err
	}
	return out.String(), nil
}

// parseJSONPath parses a kubectl-style JSONPath; a path without braces is wrapped in them.
func parseJSONPath(path string) (*jsonpath.JSONPath, error) {
	if !strings.Contains(path, "{") {
		path = "{" + path + "}"
	}
	jp := jsonpath.New("apiObject").AllowMissingKeys(true)
	if err := jp.Parse(path); err != nil {
		return nil, fmt.Errorf("path %q: %w", path, err)
	}
	return jp, nil
}

// validate checks an apiObject check before anything runs.
func (a *APIObject) validate() error {
	var errs []error
	if kind, err := a.readableKind(); err != nil {
		errs = append(errs, err)
	} else {
		if kind.Namespaced && a.Namespace == "" {
			errs = append(errs, fmt.Errorf("apiObject.namespace is required for a %s", a.Kind))
		}
		if !kind.Namespaced && a.Namespace != "" {
			errs = append(errs, fmt.Errorf("apiObject.namespace must be empty for a %s: it is cluster-scoped", a.Kind))
		}
	}
	errs = append(errs, required("apiObject.path", a.Path))
	if a.Path != "" {
		if _, err := parseJSONPath(a.Path); err != nil {
			errs = append(errs, fmt.Errorf("apiObject.%w", err))
		}
	}
	return errors.Join(errs...)
}

// validateDetails checks the fields an expect step gained beside the original ones.
func (x *Expect) validateDetails() error {
	var errs []error
	if x.Container == "" && (x.Reason != nil || x.ExitCode != nil || x.Ready != nil || x.Started != nil) {
		errs = append(errs, errors.New("reason, exitCode, ready and started describe a container: name it with container"))
	}
	for t, v := range x.Conditions {
		if !slices.Contains(conditionTypes, t) {
			errs = append(errs, fmt.Errorf("conditions: %q is not a pod condition type: want one of %s", t, strings.Join(conditionTypes, ", ")))
		}
		if !slices.Contains(conditionValues, v) {
			errs = append(errs, fmt.Errorf("conditions.%s: %q: want one of %s", t, v, strings.Join(conditionValues, ", ")))
		}
	}
	if x.APIObject != nil {
		errs = append(errs, x.APIObject.validate())
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return errors.Join(errs...)
}

// checksPodDetails reports whether the expect step checks one of the newer pod fields.
func (x *Expect) checksPodDetails() bool {
	return len(x.Conditions) > 0 || x.PodReason != nil || x.PodMessage != nil
}
