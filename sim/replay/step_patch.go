package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// APIPatch is a patch as `kubectl patch` sends it: of the object itself or of its status.
type APIPatch struct {
	// Type is the patch type as kubectl patch names it: strategic (the default), merge or json.
	Type string `json:"type,omitempty"`
	// Subresource is "" for the object itself or "status".
	Subresource string `json:"subresource,omitempty"`
	// Patch is the patch: a mapping for strategic and merge, a list of operations for json.
	Patch json.RawMessage `json:"patch"`
}

// APIPatchNode patches a node object through the API server, as `kubectl patch node` does, and as
// `kubectl label`, `kubectl taint` and `kubectl cordon` do underneath: labels, taints,
// spec.unschedulable, or (with subresource status) what a node's status holds. Name defaults to
// the node the step acts on.
type APIPatchNode struct {
	Name string `json:"name,omitempty"`
	APIPatch
}

// APIPatchPod patches a pod through the API server, as `kubectl patch pod` does, or its status, as
// a controller that owns one of its conditions (a readiness gate's) does.
type APIPatchPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	APIPatch
}

// patchTypes maps the patch types a step may name to their content types, in kubectl's words.
var patchTypes = map[string]types.PatchType{
	"strategic": types.StrategicMergePatchType,
	"merge":     types.MergePatchType,
	"json":      types.JSONPatchType,
}

// The kinds of this file and what they declare.
var (
	_ change     = (*APIPatchNode)(nil)
	_ change     = (*APIPatchPod)(nil)
	_ sourceUser = (*APIPatchNode)(nil)
	_ sourceUser = (*APIPatchPod)(nil)
	_ podNamer   = (*APIPatchPod)(nil)
)

func (*APIPatchNode) source() string { return podconfig.APISource }
func (*APIPatchPod) source() string  { return podconfig.APISource }

func (a *APIPatchPod) pod() string { return podkey.Build(a.Namespace, a.Name) }

func (a *APIPatchNode) validate() error { return a.APIPatch.validate("apiPatchNode") }

func (a *APIPatchPod) validate() error {
	return errors.Join(required("namespace", a.Namespace), required("name", a.Name), a.APIPatch.validate("apiPatchPod"))
}

// validate checks the patch's type, subresource and shape; action names the step in errors.
func (p *APIPatch) validate(action string) error {
	var errs []error
	if _, ok := patchTypes[p.patchType()]; !ok {
		errs = append(errs, fmt.Errorf("%s.type %q: want strategic, merge or json", action, p.Type))
	}
	if p.Subresource != "" && p.Subresource != "status" {
		errs = append(errs, fmt.Errorf("%s.subresource %q: want status or none", action, p.Subresource))
	}
	body := bytes.TrimSpace(p.Patch)
	switch {
	case len(body) == 0 || bytes.Equal(body, []byte("null")):
		errs = append(errs, fmt.Errorf("%s.patch is required", action))
	case p.patchType() == "json" && body[0] != '[':
		errs = append(errs, fmt.Errorf("%s.patch: a json patch is a list of operations", action))
	case p.patchType() != "json" && body[0] != '{':
		errs = append(errs, fmt.Errorf("%s.patch: a %s patch is a mapping", action, p.patchType()))
	}
	return errors.Join(errs...)
}

func (p *APIPatch) patchType() string {
	if p.Type == "" {
		return "strategic"
	}
	return p.Type
}

// describe is the step's trace message: the target, the patch type and the patch on one line.
func (p *APIPatch) describe(target string) string {
	if p.Subresource != "" {
		target += "/" + p.Subresource
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, p.Patch); err != nil {
		compact.Write(p.Patch)
	}
	return fmt.Sprintf("%s %s %s", target, p.patchType(), compact.String())
}

// subresources is the subresource argument of a client's Patch.
func (p *APIPatch) subresources() []string {
	if p.Subresource == "" {
		return nil
	}
	return []string{p.Subresource}
}

// apply sends the patch. A patch the API server refuses fails the step.
func (a *APIPatchNode) apply(ctx context.Context, e *engine, n *node) {
	name := a.Name
	if name == "" {
		name = n.name
	}
	e.stepEvent(trace.KindAPIPatchNode, "", a.describe(name))
	if _, err := e.client.CoreV1().Nodes().Patch(ctx, name, patchTypes[a.patchType()], a.Patch, metav1.PatchOptions{}, a.subresources()...); err != nil {
		e.stepError(trace.KindAPIPatchNode, fmt.Errorf("patch node %s: %w", name, err))
	}
}

// apply sends the patch. A patch the API server refuses fails the step.
func (a *APIPatchPod) apply(ctx context.Context, e *engine, _ *node) {
	e.stepEvent(trace.KindAPIPatchPod, a.pod(), a.describe(a.pod()))
	if _, err := e.client.CoreV1().Pods(a.Namespace).Patch(ctx, a.Name, patchTypes[a.patchType()], a.Patch, metav1.PatchOptions{}, a.subresources()...); err != nil {
		e.stepError(trace.KindAPIPatchPod, fmt.Errorf("patch pod %s: %w", a.pod(), err))
	}
}
