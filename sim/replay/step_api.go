package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The API steps: writes through the fake API server's REST API, with its real semantics. They
// stand for a user or a controller on the control plane, not for the node, so an apiServerDown
// does not stop them.

// APIPod carries a pod for apiCreatePod and apiUpdatePod.
type APIPod struct {
	Pod v1.Pod `json:"pod"`
	// ExpectError, when set, says the API server must refuse the write with an error containing
	// this text (for example "pod updates may not change fields other than"); an accepted write,
	// or another error, fails the replay. The refusal is traced with reason Rejected.
	ExpectError string `json:"expectError,omitempty"`
	// body is the step's JSON, kept from its decode (keep) until Parse stows the step.
	body []byte
}

// stowedPod is an apiCreatePod or apiUpdatePod step as Parse keeps it once the scenario is valid:
// the step's JSON, decoded again, by the decoder that decoded it then, when the step is applied.
// A decoded step is a struct of more than a kilobyte, mostly empty (a v1.Pod), where a
// scenario's pod is written in a hundred or two bytes; a fleet's scenario creates thousands,
// each applied once, and the scenario is held for the whole replay. The decoded step is built
// anew at each apply, so a scenario replayed twice writes the same pods.
type stowedPod struct {
	kind string // the step's key: apiCreatePod or apiUpdatePod
	body []byte
}

// stowable is a kind that Parse replaces, once the scenario is valid, by a smaller action that
// gives the same one back when the step is applied.
type stowable interface {
	// keep records raw, the step's JSON, which stays the decoder's until stow.
	keep(raw []byte)
	// stow returns the action to keep in place of this one, the step's key being kind.
	stow(kind string) action
}

func (a *APICreatePod) keep(raw []byte) { a.body = raw }
func (a *APIUpdatePod) keep(raw []byte) { a.body = raw }

func (a *APICreatePod) stow(kind string) action { return stowAPIPod(kind, a.body, a) }
func (a *APIUpdatePod) stow(kind string) action { return stowAPIPod(kind, a.body, a) }

// stowAPIPod returns a stowedPod of a copy of body, or a when body is nil (a step decoded
// without one).
func stowAPIPod(kind string, body []byte, a action) action {
	if body == nil {
		return a
	}
	return &stowedPod{kind: kind, body: bytes.Clone(body)}
}

// unstow decodes the step again.
func (s *stowedPod) unstow() (change, error) {
	var a change
	switch s.kind {
	case "apiCreatePod":
		a = new(APICreatePod)
	case "apiUpdatePod":
		a = new(APIUpdatePod)
	default:
		return nil, fmt.Errorf("stowed step of unknown kind %q", s.kind)
	}
	if strict, err := strictBody(s.kind, s.body, a); err != nil || len(strict) > 0 {
		return nil, fmt.Errorf("decode the step again: %w", errors.Join(append(strict, err)...))
	}
	return a, nil
}

// validate: the step was valid when Parse stowed it.
func (*stowedPod) validate() error { return nil }
func (*stowedPod) source() string  { return podconfig.APISource }

func (s *stowedPod) apply(ctx context.Context, e *engine, n *node) {
	a, err := s.unstow()
	if err != nil {
		e.stepError(trace.Kind(s.kind), err)
		return
	}
	a.apply(ctx, e, n)
}

// APICreatePod creates a pod through the API server.
type APICreatePod APIPod

// APIUpdatePod replaces a pod through the API server, as kubectl replace does.
type APIUpdatePod APIPod

// APIUpdatePodStatus replaces a pod's status through the status subresource.
type APIUpdatePodStatus struct {
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Status    v1.PodStatus `json:"status"`
}

// APIDeletePod deletes a pod through the API, with an optional grace period.
type APIDeletePod struct {
	Namespace          string `json:"namespace"`
	Name               string `json:"name"`
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// APIDeleteMirrorPod deletes a mirror pod, as kubectl delete pod would.
type APIDeleteMirrorPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// NamespaceRef names a namespace, for apiCreateNamespace and apiDeleteNamespace.
type NamespaceRef struct {
	Name string `json:"name"`
}

// APICreateNamespace creates a namespace.
type APICreateNamespace NamespaceRef

// APIDeleteNamespace deletes a namespace: its pods are deleted gracefully, and it goes once
// their kubelets confirm.
type APIDeleteNamespace NamespaceRef

// The kinds of this file and what they declare: every one needs the api source.
var (
	_ change     = (*APICreatePod)(nil)
	_ change     = (*APIUpdatePod)(nil)
	_ change     = (*APIUpdatePodStatus)(nil)
	_ change     = (*APIDeletePod)(nil)
	_ change     = (*APIDeleteMirrorPod)(nil)
	_ change     = (*APICreateNamespace)(nil)
	_ change     = (*APIDeleteNamespace)(nil)
	_ sourceUser = (*APICreatePod)(nil)
	_ change     = (*stowedPod)(nil)
	_ sourceUser = (*stowedPod)(nil)
	_ stowable   = (*APICreatePod)(nil)
	_ stowable   = (*APIUpdatePod)(nil)
	_ sourceUser = (*APIUpdatePod)(nil)
	_ sourceUser = (*APIUpdatePodStatus)(nil)
	_ sourceUser = (*APIDeletePod)(nil)
	_ sourceUser = (*APIDeleteMirrorPod)(nil)
	_ sourceUser = (*APICreateNamespace)(nil)
	_ sourceUser = (*APIDeleteNamespace)(nil)
)

func (*APICreatePod) source() string       { return podconfig.APISource }
func (*APIUpdatePod) source() string       { return podconfig.APISource }
func (*APIUpdatePodStatus) source() string { return podconfig.APISource }
func (*APIDeletePod) source() string       { return podconfig.APISource }
func (*APIDeleteMirrorPod) source() string { return podconfig.APISource }
func (*APICreateNamespace) source() string { return podconfig.APISource }
func (*APIDeleteNamespace) source() string { return podconfig.APISource }

func (a *APICreatePod) validate() error       { return apiPod(&a.Pod) }
func (a *APIUpdatePod) validate() error       { return apiPod(&a.Pod) }
func (a *APIUpdatePodStatus) validate() error { return podRef(a.Namespace, a.Name) }
func (a *APIDeleteMirrorPod) validate() error { return podRef(a.Namespace, a.Name) }
func (a *APICreateNamespace) validate() error { return required("name", a.Name) }
func (a *APIDeleteNamespace) validate() error { return required("name", a.Name) }

func (a *APIDeletePod) validate() error {
	var err error
	if g := a.GracePeriodSeconds; g != nil && *g < 0 {
		err = fmt.Errorf("gracePeriodSeconds %d is negative", *g)
	}
	return errors.Join(podRef(a.Namespace, a.Name), err)
}

func (a *APICreatePod) apply(ctx context.Context, e *engine, _ *node) {
	pod := withNamespace(&a.Pod)
	e.stepEvent(trace.KindAPICreatePod, podkey.Of(pod), "")
	_, err := e.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	e.apiWritten(trace.KindAPICreatePod, podkey.Of(pod), a.ExpectError, err)
}

func (a *APIUpdatePod) apply(ctx context.Context, e *engine, _ *node) {
	pod := withNamespace(&a.Pod)
	e.stepEvent(trace.KindAPIUpdatePod, podkey.Of(pod), "")
	pods := e.client.CoreV1().Pods(pod.Namespace)
	cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err == nil {
		// The scenario gives the desired object; the resourceVersion and status are the
		// server's, as with kubectl replace. So is the service account admission named at
		// create when the pod named none: no admission plugin fills it in on update, and the
		// spec may not change it.
		pod.ResourceVersion, pod.UID, pod.Status = cur.ResourceVersion, cur.UID, cur.Status
		if pod.Spec.ServiceAccountName == "" {
			pod.Spec.ServiceAccountName = cur.Spec.ServiceAccountName
		}
		keepTokenVolume(pod, cur)
		_, err = pods.Update(ctx, pod, metav1.UpdateOptions{})
	}
	e.apiWritten(trace.KindAPIUpdatePod, podkey.Of(pod), a.ExpectError, err)
}

func (a *APIUpdatePodStatus) apply(ctx context.Context, e *engine, _ *node) {
	e.stepEvent(trace.KindAPIUpdatePodStatus, podkey.Build(a.Namespace, a.Name), "")
	pods := e.client.CoreV1().Pods(a.Namespace)
	cur, err := pods.Get(ctx, a.Name, metav1.GetOptions{})
	if err == nil {
		cur.Status = *a.Status.DeepCopy()
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	}
	e.apiWritten(trace.KindAPIUpdatePodStatus, "", "", err)
}

func (a *APIDeletePod) apply(ctx context.Context, e *engine, _ *node) {
	msg := "default grace period"
	if a.GracePeriodSeconds != nil {
		msg = "grace period " + strconv.FormatInt(*a.GracePeriodSeconds, 10) + "s"
	}
	e.stepEvent(trace.KindAPIDeletePod, podkey.Build(a.Namespace, a.Name), msg)
	err := e.client.CoreV1().Pods(a.Namespace).Delete(ctx, a.Name, metav1.DeleteOptions{GracePeriodSeconds: a.GracePeriodSeconds})
	e.apiWritten(trace.KindAPIDeletePod, "", "", err)
}

func (a *APIDeleteMirrorPod) apply(ctx context.Context, e *engine, _ *node) {
	e.stepEvent(trace.KindAPIDeleteMirrorPod, podkey.Build(a.Namespace, a.Name), "as kubectl delete pod")
	err := e.client.CoreV1().Pods(a.Namespace).Delete(ctx, a.Name, metav1.DeleteOptions{})
	e.apiWritten(trace.KindAPIDeleteMirrorPod, "", "", err)
}

func (a *APICreateNamespace) apply(ctx context.Context, e *engine, _ *node) {
	e.stepEvent(trace.KindAPICreateNamespace, "", a.Name)
	_, err := e.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.Name}}, metav1.CreateOptions{})
	e.apiWritten(trace.KindAPICreateNamespace, "", "", err)
}

func (a *APIDeleteNamespace) apply(ctx context.Context, e *engine, _ *node) {
	e.stepEvent(trace.KindAPIDeleteNamespace, "", a.Name)
	err := e.client.CoreV1().Namespaces().Delete(ctx, a.Name, metav1.DeleteOptions{})
	e.apiWritten(trace.KindAPIDeleteNamespace, "", "", err)
}

// apiWritten judges the answer to an API step's write. Without expectError an error fails the
// step. With it the write must be refused with an error containing that text: the refusal is
// traced, on pod, with reason Rejected, and anything else fails the step.
func (e *engine) apiWritten(kind trace.Kind, pod, expectError string, err error) {
	switch {
	case expectError == "":
		if err != nil {
			e.stepError(kind, err)
		}
	case err == nil:
		e.stepError(kind, fmt.Errorf("the API server accepted the write, want an error containing %q", expectError))
	case !strings.Contains(err.Error(), expectError):
		e.stepError(kind, fmt.Errorf("want an error containing %q: %w", expectError, err))
	default:
		// The server's message ends in a multi-line diff of the specs; the trace keeps its
		// first line.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		e.rec.Emit(trace.Event{Component: trace.Scenario, Event: kind, Pod: pod, Reason: "Rejected", Message: msg})
	}
}

// withNamespace copies the step's pod, in the default namespace when it names none.
func withNamespace(p *v1.Pod) *v1.Pod {
	pod := p.DeepCopy()
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	return pod
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

func podRef(ns, name string) error {
	return errors.Join(required("namespace", ns), required("name", name))
}

// keepTokenVolume carries over to pod the service account token volume (kube-api-access-*) that
// admission mounted in cur at create, and its mounts: the scenario's pod predates admission, and
// the spec may not drop them.
func keepTokenVolume(pod, cur *v1.Pod) {
	for _, vol := range cur.Spec.Volumes {
		if !strings.HasPrefix(vol.Name, "kube-api-access-") || slices.ContainsFunc(pod.Spec.Volumes, func(v v1.Volume) bool { return v.Name == vol.Name }) {
			continue
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		for _, pair := range [][2][]v1.Container{{pod.Spec.InitContainers, cur.Spec.InitContainers}, {pod.Spec.Containers, cur.Spec.Containers}} {
			for i := range pair[0] {
				c := &pair[0][i]
				j := slices.IndexFunc(pair[1], func(o v1.Container) bool { return o.Name == c.Name })
				if j < 0 {
					continue
				}
				for _, m := range pair[1][j].VolumeMounts {
					if m.Name == vol.Name && !slices.ContainsFunc(c.VolumeMounts, func(o v1.VolumeMount) bool { return o.Name == vol.Name }) {
						c.VolumeMounts = append(c.VolumeMounts, m)
					}
				}
			}
		}
	}
}
