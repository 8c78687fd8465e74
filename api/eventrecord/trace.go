package eventrecord

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Tracing is the event recorder the components record through: it traces every event at the
// instant it is recorded (component events, event word Normal or Warning), then hands it to the
// next recorder, client-go's broadcaster in run, the APIRecorder in replay, or none.
type Tracing struct {
	next   record.EventRecorder
	tracer trace.Tracer
}

var _ record.EventRecorder = (*Tracing)(nil)

// NewTracing returns a Tracing recorder. next may be nil: the events are then only traced, as a
// kubelet without an API server only logs them.
func NewTracing(next record.EventRecorder, tracer trace.Tracer) (*Tracing, error) {
	if tracer == nil {
		return nil, errors.New("new tracing event recorder: the tracer is required")
	}
	return &Tracing{next: next, tracer: tracer}, nil
}

// Event traces the event and records it with the next recorder.
func (t *Tracing) Event(object runtime.Object, eventtype, reason, message string) {
	t.emit(object, eventtype, reason, message)
	if t.next != nil {
		t.next.Event(object, eventtype, reason, message)
	}
}

// Eventf is Event with a formatted message.
func (t *Tracing) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	t.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf with annotations on the Event object.
func (t *Tracing) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	message := fmt.Sprintf(messageFmt, args...)
	t.emit(object, eventtype, reason, message)
	if t.next != nil {
		t.next.AnnotatedEventf(object, annotations, eventtype, reason, "%s", message)
	}
}

// PodEvent records an event about ref, a reference to a pod or to one of its containers, that
// the caller also names by its "namespace/name" key and its container's name ("" for the pod):
// the trace event takes them as given instead of building them again from the reference. The
// fake runtime records each pod's pulls, creations and starts this way; the trace is the same
// as Event(ref, ...) would give.
func (t *Tracing) PodEvent(ref *v1.ObjectReference, podKey, container, eventtype, reason, message string) {
	if kind, ok := traceKind(eventtype); ok {
		t.tracer.Emit(trace.Event{Component: trace.Events, Event: kind, Pod: podKey, UID: string(ref.UID), Container: container, Reason: reason, Message: message})
	}
	if t.next != nil {
		t.next.Event(ref, eventtype, reason, message)
	}
}

// traceKind is the trace event word of an event type, and false for a type other than Normal or
// Warning, which is not traced: the kubelet's recorder refuses it too.
func traceKind(eventtype string) (trace.Kind, bool) {
	switch eventtype {
	case v1.EventTypeNormal:
		return trace.KindNormal, true
	case v1.EventTypeWarning:
		return trace.KindWarning, true
	}
	return "", false
}

// emit traces one event. An event of another type than Normal or Warning is not traced: the
// kubelet's recorder refuses it too.
func (t *Tracing) emit(object runtime.Object, eventtype, reason, message string) {
	kind, ok := traceKind(eventtype)
	if !ok {
		return
	}
	e := trace.Event{Component: trace.Events, Event: kind, Reason: reason, Message: message}
	if pod, ok := object.(*v1.Pod); ok {
		e.Pod, e.UID = podkey.Of(pod), string(pod.UID)
	} else if ref, ok := object.(*v1.ObjectReference); ok && ref.Kind == "Pod" {
		// kuberuntime records about a reference to the pod (or to one of its containers).
		e.Pod, e.UID = podkey.Build(ref.Namespace, ref.Name), string(ref.UID)
		e.Container = containerOfFieldPath(ref.FieldPath)
	} else if m, err := meta.Accessor(object); err == nil {
		e.Message = fmt.Sprintf("%T %s: %s", object, m.GetName(), message)
	}
	t.tracer.Emit(e)
}

// containerOfFieldPath returns the container a reference's field path names
// ("spec.containers{name}", "spec.initContainers{name}", or the kubelet's "implicitly required
// container name" for a container of a pod it knows only from the runtime), or "".
func containerOfFieldPath(path string) string {
	for _, prefix := range []string{"spec.containers{", "spec.initContainers{", "spec.ephemeralContainers{"} {
		if name, ok := strings.CutPrefix(path, prefix); ok {
			return strings.TrimSuffix(name, "}")
		}
	}
	if name, ok := strings.CutPrefix(path, "implicitly required container "); ok {
		return name
	}
	return ""
}
