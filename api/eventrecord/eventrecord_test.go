package eventrecord_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func newAPIRecorder(t *testing.T) (*eventrecord.APIRecorder, kubernetes.Interface, *vclock.Clock) {
	t.Helper()
	clk := vclock.New(vclock.Epoch)
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{Host: "http://apiserver.invalid", Transport: srv.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := eventrecord.NewAPIRecorder(eventrecord.APIRecorderOptions{Clock: clk, Sink: eventrecord.ClientsetSink{Client: client}, Source: v1.EventSource{Component: "kubelet", Host: "node-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return r, client, clk
}

var web = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"}}

// summary lists the Events in the API server as "reason count message".
func summary(t *testing.T, client kubernetes.Interface) []string {
	t.Helper()
	list, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, fmt.Sprintf("%s %d %s", e.Reason, e.Count, e.Message))
	}
	return out
}

// TestAPIRecorderCountsRepeats checks the correlator's dedup: an identical event repeated is one
// Event with a growing count and a later lastTimestamp; two events at one instant get two names.
func TestAPIRecorderCountsRepeats(t *testing.T) {
	r, client, clk := newAPIRecorder(t)
	r.Event(web, v1.EventTypeNormal, "Pulling", "Pulling image \"nginx\"")
	r.Event(web, v1.EventTypeNormal, "Pulled", "Successfully pulled image \"nginx\"")
	for range 3 {
		clk.Advance(10 * time.Second)
		r.Event(web, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app")
	}
	want := []string{"BackOff 3 Back-off restarting failed container app", "Pulled 1 Successfully pulled image \"nginx\"", "Pulling 1 Pulling image \"nginx\""}
	got := summary(t, client)
	if diff := cmp.Diff(want, sorted(got)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	list, _ := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	for _, e := range list.Items {
		if e.Reason == "BackOff" && (!e.LastTimestamp.Time.Equal(vclock.Epoch.Add(30*time.Second)) || !e.FirstTimestamp.Time.Equal(vclock.Epoch.Add(10*time.Second))) {
			t.Errorf("BackOff first/last timestamp = %v/%v, want 10s/30s", e.FirstTimestamp, e.LastTimestamp)
		}
		if e.Source.Host != "node-1" || e.ReportingController != "kubelet" || e.InvolvedObject.UID != "uid-web" {
			t.Errorf("event %s source %+v controller %q object %+v, want the kubelet on node-1 about web", e.Name, e.Source, e.ReportingController, e.InvolvedObject)
		}
	}
}

// TestAPIRecorderAggregatesSimilarEvents checks the aggregator: from the tenth event with the
// same reason and different messages within 10 minutes, they are combined into one Event.
func TestAPIRecorderAggregatesSimilarEvents(t *testing.T) {
	r, client, clk := newAPIRecorder(t)
	for i := range 12 {
		clk.Advance(time.Second)
		r.Event(web, v1.EventTypeWarning, "Failed", fmt.Sprintf("failure %d", i))
	}
	var combined []string
	for _, s := range summary(t, client) {
		if strings.Contains(s, "(combined from similar events)") {
			combined = append(combined, s)
		}
	}
	if diff := cmp.Diff([]string{"Failed 3 (combined from similar events): failure 11"}, combined); diff != "" {
		t.Errorf("combined events (-want +got):\n%s", diff)
	}
}

// TestTracingNamesThePod checks the trace of recorded events, for a pod and a reference to one.
func TestTracingNamesThePod(t *testing.T) {
	var got []string
	tr, err := eventrecord.NewTracing(nil, trace.Func(func(e trace.Event) {
		got = append(got, fmt.Sprintf("%s %s %s [%s] %s %s", e.Component, e.Event, e.Pod, e.Container, e.Reason, e.Message))
	}))
	if err != nil {
		t.Fatal(err)
	}
	tr.Eventf(web, v1.EventTypeWarning, "FailedKillPod", "error killing pod: %s", "timeout")
	tr.Event(&v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", UID: "uid-web"}, v1.EventTypeNormal, "Started", "Started container app")
	tr.Event(&v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", UID: "uid-web", FieldPath: "spec.containers{app}"}, v1.EventTypeNormal, "Created", "Container created")
	tr.Event(&v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", UID: "uid-web", FieldPath: "spec.initContainers{setup}"}, v1.EventTypeNormal, "Pulled", "pulled")
	tr.Event(&v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "gone", FieldPath: "implicitly required container app"}, v1.EventTypeNormal, "Killing", "Stopping container app")
	tr.Event(&v1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "node-1"}, v1.EventTypeNormal, "NodeReady", "Node node-1 status is now: NodeReady")
	tr.Event(web, "Odd", "X", "not a type the kubelet records")
	want := []string{
		"events Warning default/web [] FailedKillPod error killing pod: timeout",
		"events Normal default/web [] Started Started container app",
		"events Normal default/web [app] Created Container created",
		"events Normal default/web [setup] Pulled pulled",
		"events Normal default/gone [app] Killing Stopping container app",
		"events Normal  [] NodeReady Node node-1 status is now: NodeReady",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

// objectLog is a next recorder that keeps what it was handed.
type objectLog struct{ objects []runtime.Object }

func (l *objectLog) Event(o runtime.Object, _, _, _ string) { l.objects = append(l.objects, o) }
func (l *objectLog) Eventf(o runtime.Object, _, _, _ string, _ ...interface{}) {
	l.objects = append(l.objects, o)
}
func (l *objectLog) AnnotatedEventf(o runtime.Object, _ map[string]string, _, _, _ string, _ ...interface{}) {
	l.objects = append(l.objects, o)
}

// TestTracingPodEventIsEvent checks that an event recorded with the pod's key and container
// given traces the same event as one recorded about the reference alone, and hands the next
// recorder the same reference.
func TestTracingPodEventIsEvent(t *testing.T) {
	tests := []struct {
		name           string
		ref            *v1.ObjectReference
		key, container string
		eventtype      string
	}{
		{"pod", &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web", UID: "uid-web"}, "default/web", "", v1.EventTypeNormal},
		{"container", &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web", UID: "uid-web", FieldPath: "spec.containers{app}"}, "default/web", "app", v1.EventTypeWarning},
		{"init container", &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "kube-system", Name: "etcd", UID: "uid-etcd", FieldPath: "spec.initContainers{setup}"}, "kube-system/etcd", "setup", v1.EventTypeNormal},
		{"implicit container", &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "gone", FieldPath: "implicitly required container app"}, "default/gone", "app", v1.EventTypeNormal},
		{"a type not recorded", &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web"}, "default/web", "", "Odd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			record := func(f func(tr *eventrecord.Tracing)) ([]trace.Event, []runtime.Object) {
				var evs []trace.Event
				next := &objectLog{}
				tr, err := eventrecord.NewTracing(next, trace.Func(func(e trace.Event) { evs = append(evs, e) }))
				if err != nil {
					t.Fatal(err)
				}
				f(tr)
				return evs, next.objects
			}
			wantEvs, wantObjs := record(func(tr *eventrecord.Tracing) { tr.Event(tt.ref, tt.eventtype, "Pulled", "pulled") })
			gotEvs, gotObjs := record(func(tr *eventrecord.Tracing) {
				tr.PodEvent(tt.ref, tt.key, tt.container, tt.eventtype, "Pulled", "pulled")
			})
			if diff := cmp.Diff(wantEvs, gotEvs); diff != "" {
				t.Errorf("PodEvent's trace differs from Event's (-Event +PodEvent):\n%s", diff)
			}
			if len(gotObjs) != 1 || gotObjs[0] != runtime.Object(tt.ref) || len(wantObjs) != 1 {
				t.Errorf("next recorder got %v from PodEvent and %v from Event, want the reference once each", gotObjs, wantObjs)
			}
		})
	}
}
