package fakeapiserver

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/api/apidefaults"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// bindingResource is the Binding kind the pods/binding subresource takes. It is not a served
// resource of its own: only its decoding is needed.
var bindingResource = &resource{
	name: "bindings", singular: "binding", kind: "Binding", gv: coreV1, namespaced: true,
	newObj: func() runtime.Object { return &corev1.Binding{} },
}

// bind serves POST pods/NAME/binding, the scheduler's way of assigning a pod to a node, as
// kube-apiserver's BindingREST does: the binding must name the pod and a node, the pod must be
// unassigned, not being deleted and without scheduling gates. The pod gets spec.nodeName, the
// binding's annotations and a PodScheduled condition that is True. Refusals are 409 Conflict on
// pods/binding, as there; success is a Success Status with 201.
func (s *Server) bind(w http.ResponseWriter, r *http.Request, t target) error {
	data, err := readObjectBody(r)
	if err != nil {
		return err
	}
	obj, _, err := decode(bindingResource, data, validationIgnore)
	if err != nil {
		return err
	}
	b := obj.(*corev1.Binding)
	if b.Name != t.name {
		return apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if b.Namespace != "" && b.Namespace != t.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if b.Target.Name == "" {
		return apierrors.NewInvalid(bindingResource.gvk().GroupKind(), b.Name,
			field.ErrorList{field.Required(field.NewPath("target", "name"), "")})
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		return apierrors.NewInvalid(bindingResource.gvk().GroupKind(), b.Name,
			field.ErrorList{field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", ""})})
	}
	conflict := func(err error) error {
		return apierrors.NewConflict(t.res.gv.WithResource("pods/binding").GroupResource(), t.name, err)
	}
	dryRun := isDryRun(r)
	err = s.store.lockedAs(r.Context(), t.class, func() error {
		old, ok := s.store.get(t.res, t.namespace, t.name)
		if !ok {
			return apierrors.NewNotFound(t.res.groupResource(), t.name)
		}
		pod := old.obj.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			//lint:ignore ST1005 kube-apiserver's exact message, which clients show
			return conflict(fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if b.ResourceVersion != "" && b.ResourceVersion != pod.ResourceVersion {
			return conflict(fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		switch {
		case pod.DeletionTimestamp != nil:
			return conflict(fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		case pod.Spec.NodeName != "":
			return conflict(fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		case len(pod.Spec.SchedulingGates) != 0:
			return conflict(fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name))
		}
		next := pod.DeepCopy()
		next.Spec.NodeName = b.Target.Name
		if len(b.Annotations) > 0 && next.Annotations == nil {
			next.Annotations = map[string]string{}
		}
		for k, v := range b.Annotations {
			next.Annotations[k] = v
		}
		apidefaults.UpdatePodCondition(&next.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, s.now().Time)
		if dryRun {
			return nil
		}
		e, err := s.store.commit(t.res, watch.Modified, next, old)
		if err != nil {
			return err
		}
		s.tracePod(t, trace.KindBind, "POST", e.obj)
		return nil
	})
	if err != nil {
		return err
	}
	writeObject(w, answerForm(r), http.StatusCreated, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
	})
	return nil
}
