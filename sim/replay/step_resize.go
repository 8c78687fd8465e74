package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// APIResizePod resizes a pod in place through the API server's pods/resize subresource, as
// `kubectl patch pod <name> --subresource resize --patch '{"spec":{"containers":[...]}}'` does:
// a strategic merge patch that gives each named container (or sidecar, under initContainers) the
// resources given. The API server validates the resize as kube-apiserver does (ValidatePodResize)
// and refuses what it refuses; with ExpectError the write must be refused with an error containing
// that text.
type APIResizePod struct {
	Namespace      string            `json:"namespace"`
	Name           string            `json:"name"`
	Containers     []ContainerResize `json:"containers,omitempty"`
	InitContainers []ContainerResize `json:"initContainers,omitempty"`
	ExpectError    string            `json:"expectError,omitempty"`
}

// ContainerResize is one container's new resources.
type ContainerResize struct {
	Name      string                  `json:"name"`
	Resources v1.ResourceRequirements `json:"resources"`
}

var (
	_ change     = (*APIResizePod)(nil)
	_ sourceUser = (*APIResizePod)(nil)
	_ podNamer   = (*APIResizePod)(nil)
)

func (*APIResizePod) source() string { return podconfig.APISource }

func (a *APIResizePod) pod() string { return podkey.Build(a.Namespace, a.Name) }

func (a *APIResizePod) validate() error {
	errs := []error{required("namespace", a.Namespace), required("name", a.Name)}
	if len(a.Containers)+len(a.InitContainers) == 0 {
		errs = append(errs, errors.New("apiResizePod: containers or initContainers is required"))
	}
	seen := map[string]bool{}
	for _, c := range append(append([]ContainerResize(nil), a.InitContainers...), a.Containers...) {
		switch {
		case c.Name == "":
			errs = append(errs, errors.New("apiResizePod: every container needs a name"))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("apiResizePod: container %q is named twice", c.Name))
		}
		seen[c.Name] = true
	}
	return errors.Join(errs...)
}

// patch is the strategic merge patch kubectl would send.
func (a *APIResizePod) patch() ([]byte, error) {
	spec := map[string][]ContainerResize{}
	if len(a.Containers) > 0 {
		spec["containers"] = a.Containers
	}
	if len(a.InitContainers) > 0 {
		spec["initContainers"] = a.InitContainers
	}
	return json.Marshal(map[string]any{"spec": spec})
}

// apply sends the resize. A resize the API server refuses fails the step, unless it was expected.
func (a *APIResizePod) apply(ctx context.Context, e *engine, _ *node) {
	body, err := a.patch()
	if err != nil {
		e.stepError(trace.KindAPIResizePod, fmt.Errorf("resize pod %s: %w", a.pod(), err))
		return
	}
	e.stepEvent(trace.KindAPIResizePod, a.pod(), string(body))
	_, err = e.client.CoreV1().Pods(a.Namespace).Patch(ctx, a.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "resize")
	e.apiWritten(trace.KindAPIResizePod, a.pod(), a.ExpectError, err)
}
