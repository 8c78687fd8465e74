package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// APIPatchNode patches a node object through the API server, as `kubectl patch node` does, and as
// `kubectl label`, `kubectl taint` and `kubectl cordon` do underneath: labels, taints,
// spec.unschedulable, or (with subresource status) what a node's status holds. Name defaults to
// the node the step acts on.
type APIPatchNode struct {
	Name string `json:"name,omitempty"`
	// Type is the patch type as kubectl patch names it: strategic (the default), merge or json.
	Type string `json:"type,omitempty"`
	// Subresource is "" for the node itself or "status".
	Subresource string `json:"subresource,omitempty"`
	// Patch is the patch: a mapping for strategic and merge, a list of operations for json.
	Patch json.RawMessage `json:"patch"`
}

// patchTypes maps the patch types a step may name to their content types, in kubectl's words.
var patchTypes = map[string]types.PatchType{
	"strategic": types.StrategicMergePatchType,
	"merge":     types.MergePatchType,
	"json":      types.JSONPatchType,
}

// The kind of this file and what it declares.
var (
	_ change     = (*APIPatchNode)(nil)
	_ sourceUser = (*APIPatchNode)(nil)
)

func (*APIPatchNode) source() string { return podconfig.APISource }

func (a *APIPatchNode) validate() error {
	var errs []error
	if _, ok := patchTypes[a.patchType()]; !ok {
		errs = append(errs, fmt.Errorf("apiPatchNode.type %q: want strategic, merge or json", a.Type))
	}
	if a.Subresource != "" && a.Subresource != "status" {
		errs = append(errs, fmt.Errorf("apiPatchNode.subresource %q: want status or none", a.Subresource))
	}
	body := bytes.TrimSpace(a.Patch)
	switch {
	case len(body) == 0 || bytes.Equal(body, []byte("null")):
		errs = append(errs, errors.New("apiPatchNode.patch is required"))
	case a.patchType() == "json" && body[0] != '[':
		errs = append(errs, errors.New("apiPatchNode.patch: a json patch is a list of operations"))
	case a.patchType() != "json" && body[0] != '{':
		errs = append(errs, fmt.Errorf("apiPatchNode.patch: a %s patch is a mapping", a.patchType()))
	}
	return errors.Join(errs...)
}

func (a *APIPatchNode) patchType() string {
	if a.Type == "" {
		return "strategic"
	}
	return a.Type
}

// apply sends the patch. A patch the API server refuses fails the step.
func (a *APIPatchNode) apply(ctx context.Context, e *engine, n *node) {
	name := a.Name
	if name == "" {
		name = n.name
	}
	target := name
	var sub []string
	if a.Subresource != "" {
		target += "/" + a.Subresource
		sub = append(sub, a.Subresource)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, a.Patch); err != nil {
		compact.Write(a.Patch)
	}
	e.stepEvent(trace.KindAPIPatchNode, "", fmt.Sprintf("%s %s %s", target, a.patchType(), compact.String()))
	if _, err := e.client.CoreV1().Nodes().Patch(ctx, name, patchTypes[a.patchType()], a.Patch, metav1.PatchOptions{}, sub...); err != nil {
		e.stepError(trace.KindAPIPatchNode, fmt.Errorf("patch node %s: %w", target, err))
	}
}
