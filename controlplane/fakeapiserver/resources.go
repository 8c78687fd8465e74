package fakeapiserver

import (
	"net/http"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// resource describes one REST resource: its names, and the hooks that give it the behaviour of
// its kube-apiserver registry strategy. It is wider than the usual struct because it is a row of
// a descriptor table: each field is one fact or hook.
type resource struct {
	name       string // plural, as in the URL
	singular   string
	kind       string
	gv         schema.GroupVersion
	namespaced bool
	shortNames []string
	// verbs are the verbs the resource serves (verbs.go), and subresources its subresources
	// with theirs.
	verbs        verbs
	subresources []subresource
	// deprecation is the warning every response about the resource carries, derived from its
	// type by resources() (deprecationWarning); "" for most.
	deprecation string
	// returnDeleted makes DELETE answer with the object instead of a Success Status.
	returnDeleted bool
	// encodesOnDemand makes the store keep no JSON of the resource's current versions, only its
	// length and hash (entry.sum), and encode it again for the few readers that want the bytes: a
	// pod's encoding took as much of a fleet's heap as its decoded object, and the kubelets, the
	// controllers and the replay read pods in process (the objects) or in protobuf. Its
	// writes pay for that: an update's comparison of the written version with the stored one's
	// bytes, which the field manager's shortcuts read too, takes the stored object's
	// encoding where it would have read the kept one (sameEncoding, statusChangedScalars,
	// scalarUpdate's liveJSON), as does a JSON or merge patch's original (patch.go's
	// guaranteedUpdate callback). A JSON reader's encoding is shared with the readers that
	// come while it is held (entry.js, sharedEncoding), so the readers of one write encode the
	// version about once (two first readers at the same moment may both encode it).
	encodesOnDemand bool
	// statusKeepsOwners keeps the stored owner references on a write of the status subresource,
	// as the pod status strategy does (old kubelets corrupted them); the rest of the metadata a
	// status write sends is kept on every kind, as kube-apiserver's status strategies do.
	statusKeepsOwners bool
	// categories are the discovery categories the resource belongs to ("all" for kubectl get all).
	categories []string
	// view marks a resource that has no bucket of its own. Its requests are served by
	// converting another resource's objects (events.k8s.io Events, eventsv1.go), or by its
	// serve hook with what that computes (reviews.go, resourcemetrics.go).
	view  bool
	serve func(s *Server, w http.ResponseWriter, r *http.Request, t target, verb verbs) error
	// available reports whether a server serves the resource at all; nil means it always does.
	// Otherwise discovery leaves it out and its paths are not found.
	available func(s *Server) bool

	newObj func() runtime.Object
	// fieldSet is what field selectors match against; every key is a supported field label.
	fieldSet func(runtime.Object) fields.Set
	// prepareCreate resets what a client may not set on create.
	prepareCreate func(obj runtime.Object)
	// beginCreate allocates what a create takes from the server's shared ranges (a Service's
	// cluster IP), after admission and before validation, as the registry's BeginCreate does.
	// The caller holds the store lock.
	beginCreate func(st registry.Store, obj runtime.Object, dryRun bool) error
	// validate checks an object before it is stored.
	validate func(obj runtime.Object) field.ErrorList
	// prepareUpdate makes new keep what an update of the main resource may not change (the
	// status), and rejects forbidden spec changes.
	prepareUpdate func(oldObj, newObj runtime.Object) field.ErrorList
	// beginUpdate allocates what an update newly needs from the server's shared ranges, after
	// prepareUpdate, as the registry's BeginUpdate does. The caller holds the store lock.
	beginUpdate func(st registry.Store, oldObj, newObj runtime.Object, dryRun bool) error
	// validateUpdate checks what an update may not change, as the strategy's ValidateUpdate
	// does before it validates the new object as a create would; its errors come first.
	validateUpdate func(oldObj, newObj runtime.Object) field.ErrorList
	// columns and cells render the object as a kubectl table row; nil means NAME and AGE.
	columns []metav1.TableColumnDefinition
	cells   func(now time.Time, obj runtime.Object) []any

	// fields is the resource as the field manager knows it (managedfields.go), set by
	// resources() for every resource but views.
	fields *fieldmanager.Resource
}

// servedBy reports whether s serves the resource.
func (r *resource) servedBy(s *Server) bool { return r.available == nil || r.available(s) }

func (r *resource) gvk() schema.GroupVersionKind { return r.gv.WithKind(r.kind) }

func (r *resource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.gv.Group, Resource: r.name}
}

var (
	coreV1        = schema.GroupVersion{Version: "v1"}
	coordinationV = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
)

// resources returns the served resources, in the order discovery lists them.
func resources() []*resource {
	rows := []*resource{
		{
			name: "events", singular: "event", kind: "Event", gv: coreV1, namespaced: true,
			shortNames: []string{"ev"}, verbs: verbsStored,
			newObj:   func() runtime.Object { return &corev1.Event{} },
			fieldSet: eventFields,
			validate: validateEvent,
			columns:  eventColumns,
			cells:    eventCells,
		},
		{
			name: "nodes", singular: "node", kind: "Node", gv: coreV1, shortNames: []string{"no"},
			verbs: verbsStored, subresources: []subresource{{name: "status", verbs: verbsStatus}},
			newObj:   func() runtime.Object { return &corev1.Node{} },
			fieldSet: nodeFields,
			validate: validateNode,
			prepareUpdate: func(oldObj, newObj runtime.Object) field.ErrorList {
				newObj.(*corev1.Node).Status = *oldObj.(*corev1.Node).Status.DeepCopy()
				return nil
			},
			columns: nodeColumns,
			cells:   nodeCells,
		},
		{
			name: "pods", singular: "pod", kind: "Pod", gv: coreV1, namespaced: true,
			shortNames: []string{"po"}, returnDeleted: true, categories: []string{"all"},
			verbs: verbsStored,
			subresources: []subresource{
				{name: "binding", kind: "Binding", verbs: verbCreate},
				{name: "resize", verbs: verbsStatus, prepare: prepareResize, validate: validateResize},
				{name: "status", verbs: verbsStatus},
			},
			statusKeepsOwners: true,
			encodesOnDemand:   true,
			newObj:            func() runtime.Object { return &corev1.Pod{} },
			fieldSet:          podFields,
			prepareCreate:     preparePodCreate,
			validate:          validatePod,
			prepareUpdate:     preparePodUpdate,
			columns:           podColumns,
			cells:             podCells,
		},
		{
			name: "leases", singular: "lease", kind: "Lease", gv: coordinationV, namespaced: true,
			verbs:    verbsStored,
			newObj:   func() runtime.Object { return &coordinationv1.Lease{} },
			fieldSet: metaFields,
			validate: validateMetaOnly,
			columns:  leaseColumns,
			cells:    leaseCells,
		},
		csiNodeResource(),
		namespaceResource(),
		eventsV1Resource(),
		configMapResource(),
		secretResource(),
		serviceAccountResource(),
		serviceResource(),
		endpointsResource(),
		endpointSliceResource(),
		resourceSliceResource(),
		crdResource(),
		selfSubjectAccessReviewResource(),
		selfSubjectRulesReviewResource(),
		selfSubjectReviewResource(),
		tokenReviewResource(),
		subjectAccessReviewResource(),
		nodeMetricsResource(),
		podMetricsResource(),
	}
	for _, res := range rows {
		res.deprecation = deprecationWarning(res)
		if !res.view {
			res.fields = fieldsResource(res)
		}
	}
	return rows
}

func metaFields(obj runtime.Object) fields.Set { return registry.MetaFields(obj) }

func podFields(obj runtime.Object) fields.Set {
	pod := obj.(*corev1.Pod)
	set := metaFields(obj)
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	set["status.podIP"] = pod.Status.PodIP
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
	return set
}

func nodeFields(obj runtime.Object) fields.Set {
	node := obj.(*corev1.Node)
	set := metaFields(obj)
	set["spec.unschedulable"] = strconv.FormatBool(node.Spec.Unschedulable)
	return set
}

func eventFields(obj runtime.Object) fields.Set {
	ev := obj.(*corev1.Event)
	set := metaFields(obj)
	set["involvedObject.kind"] = ev.InvolvedObject.Kind
	set["involvedObject.namespace"] = ev.InvolvedObject.Namespace
	set["involvedObject.name"] = ev.InvolvedObject.Name
	set["involvedObject.uid"] = string(ev.InvolvedObject.UID)
	set["involvedObject.apiVersion"] = ev.InvolvedObject.APIVersion
	set["involvedObject.resourceVersion"] = ev.InvolvedObject.ResourceVersion
	set["involvedObject.fieldPath"] = ev.InvolvedObject.FieldPath
	set["reason"] = ev.Reason
	set["reportingComponent"] = ev.ReportingController
	set["source"] = ev.Source.Component
	set["type"] = ev.Type
	return set
}
