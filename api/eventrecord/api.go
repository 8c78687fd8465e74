package eventrecord

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Sink is where an APIRecorder writes its events: the two requests client-go's event sink
// makes, with its answers and errors. ClientsetSink makes them over HTTP; an API server in the
// same process can take them directly.
type Sink interface {
	// CreateEvent creates a core/v1 Event.
	CreateEvent(ctx context.Context, ev *v1.Event) (*v1.Event, error)
	// PatchEvent applies a strategic merge patch to an Event.
	PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Event, error)
}

// ClientsetSink is a Sink over a client-go clientset.
type ClientsetSink struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ Sink = ClientsetSink{}

// CreateEvent creates the event.
func (s ClientsetSink) CreateEvent(ctx context.Context, ev *v1.Event) (*v1.Event, error) {
	return s.Client.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
}

// PatchEvent patches the event.
func (s ClientsetSink) PatchEvent(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*v1.Event, error) {
	return s.Client.CoreV1().Events(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{})
}

// APIRecorderOptions configure an APIRecorder.
type APIRecorderOptions struct {
	// Clock stamps the events and drives the correlator's aggregation and spam filter. Required.
	Clock clock.PassiveClock
	// Sink is the API server the events are written to. Required.
	Sink Sink
	// Source names the recorder, as the kubelet's: component "kubelet", host the node name.
	Source v1.EventSource
	// LastNano, when set, is the name suffix counter shared by every recorder that writes to
	// one server, so that two recorders' events about one object at one virtual instant get
	// different names, as the real clock would give them. Nil keeps a counter of its own.
	LastNano *int64
}

// APIRecorder writes Kubernetes events to the API server synchronously, on its clock: what
// client-go's recorder, broadcaster and sink do for the kubelet, without their goroutines, so
// that a replay records the same Events every time. Each event is built as the recorder builds
// it (name "<object>.<hex nanoseconds>", first and last timestamp, count 1, source and reporting
// fields), passed through client-go's EventCorrelator with the kubelet's default options
// (similar events aggregated, repeats counted, a spam limit per source and object), then created,
// or patched when it repeats an earlier one. It is a core: one goroutine only.
type APIRecorder struct {
	clock      clock.PassiveClock
	sink       Sink
	source     v1.EventSource
	correlator *record.EventCorrelator
	// lastNano is the name suffix last used: two events at one virtual instant get successive
	// nanoseconds, where the real clock would have moved on.
	lastNano *int64
}

var _ record.EventRecorder = (*APIRecorder)(nil)

// NewAPIRecorder returns an APIRecorder.
func NewAPIRecorder(opts APIRecorderOptions) (*APIRecorder, error) {
	if opts.Clock == nil || opts.Sink == nil {
		return nil, fmt.Errorf("new API event recorder: %w", errors.New("clock and sink are required"))
	}
	last := opts.LastNano
	if last == nil {
		last = new(int64)
	}
	return &APIRecorder{
		clock:      opts.Clock,
		sink:       opts.Sink,
		source:     opts.Source,
		correlator: record.NewEventCorrelatorWithOptions(record.CorrelatorOptions{Clock: opts.Clock}),
		lastNano:   last,
	}, nil
}

// Event records one event.
func (r *APIRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.record(object, nil, eventtype, reason, message)
}

// Eventf is Event with a formatted message.
func (r *APIRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.record(object, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf is Eventf with annotations on the Event object.
func (r *APIRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.record(object, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r *APIRecorder) record(object runtime.Object, annotations map[string]string, eventtype, reason, message string) {
	ref, err := reference.GetReference(scheme.Scheme, object)
	if err != nil {
		klog.ErrorS(err, "Could not construct reference, will not report event", "eventType", eventtype, "reason", reason)
		return
	}
	if !util.ValidateEventType(eventtype) {
		klog.ErrorS(nil, "Unsupported event type", "eventType", eventtype)
		return
	}
	now := r.clock.Now()
	nanos := max(now.UnixNano(), *r.lastNano+1)
	*r.lastNano = nanos
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	t := metav1.NewTime(now)
	ev := &v1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, nanos), Namespace: namespace, Annotations: annotations},
		InvolvedObject:      *ref,
		Reason:              reason,
		Message:             message,
		FirstTimestamp:      t,
		LastTimestamp:       t,
		Count:               1,
		Type:                eventtype,
		Source:              r.source,
		ReportingInstance:   r.source.Host,
		ReportingController: r.source.Component,
	}
	result, err := r.correlator.EventCorrelate(ev)
	if err != nil {
		klog.ErrorS(err, "Event correlation failed", "reason", reason)
	}
	if result == nil || result.Skip {
		return
	}
	r.write(result.Event, result.Patch)
}

// write creates the event, or patches the existing one when the correlator counted a repeat; a
// patch of an event that is gone falls back to a create, as client-go's recordEvent does.
func (r *APIRecorder) write(ev *v1.Event, patch []byte) {
	ctx := context.Background()
	var out *v1.Event
	var err error
	repeat := ev.Count > 1
	if repeat {
		out, err = r.sink.PatchEvent(ctx, ev.Namespace, ev.Name, types.StrategicMergePatchType, patch)
	}
	if !repeat || apierrors.IsNotFound(err) {
		ev.ResourceVersion = ""
		out, err = r.sink.CreateEvent(ctx, ev)
	}
	if err != nil {
		klog.ErrorS(err, "Server rejected event (will not retry!)", "event", klog.KObj(ev), "reason", ev.Reason)
		return
	}
	r.correlator.UpdateState(out)
}
