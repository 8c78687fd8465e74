package syncloop

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/trace"
)

// The kubelet's Kubernetes event reasons (pkg/kubelet/events) that the simulator records.
const (
	reasonPulling         = "Pulling"
	reasonPulled          = "Pulled"
	reasonCreated         = "Created"
	reasonStarted         = "Started"
	reasonKilling         = "Killing"
	reasonBackOff         = "BackOff"
	reasonFailed          = "Failed"
	reasonErrImageNever   = "ErrImageNeverPull"
	reasonFailedToKillPod = "FailedKillPod"
)

// recordEvent sends one Kubernetes event about pod through the Recorder; a nil Recorder records
// nothing.
func (l *Loop) recordEvent(pod *v1.Pod, eventType, reason, message string) {
	if l.opts.Recorder == nil {
		return
	}
	l.opts.Recorder.Event(pod, eventType, reason, message)
}

// RuntimeEvents is the Tracer to give the runtime: it passes every event on to Next and records,
// for each runtime step the kubelet reports as a Kubernetes event, that event through Recorder.
//
// In the kubelet, kuberuntime records its events (Pulling, Pulled, Created, Started, Killing,
// BackOff, Failed) while SyncPod and killPod block. The simulated runtime returns at once and
// traces each step at the virtual instant it happens; deriving the Kubernetes events from those
// trace events records each one exactly once, at that instant, without the runtime knowing about
// events or the sync functions guessing what the runtime did.
type RuntimeEvents struct {
	// Next receives every event unchanged. Nil means trace.Discard.
	Next trace.Tracer
	// Recorder receives the Kubernetes events. Nil records none.
	Recorder record.EventRecorder
}

var _ trace.Tracer = RuntimeEvents{}

// Emit passes e on and records the Kubernetes event it stands for, if any.
func (r RuntimeEvents) Emit(e trace.Event) {
	if r.Next != nil {
		r.Next.Emit(e)
	}
	if r.Recorder == nil || e.Component != trace.Runtime {
		return
	}
	eventType, reason, message, ok := kubeletEvent(e)
	if !ok {
		return
	}
	r.Recorder.Event(podRef(e), eventType, reason, message)
}

// kubeletEvent maps a runtime trace event to the kubelet's event type, reason and message.
func kubeletEvent(e trace.Event) (eventType, reason, message string, ok bool) {
	switch {
	case e.Event == "pull":
		return v1.EventTypeNormal, reasonPulling, fmt.Sprintf("Pulling image %q", e.Message), true
	case e.Event == "pulled":
		return v1.EventTypeNormal, reasonPulled, fmt.Sprintf("Successfully pulled image %q", e.Message), true
	case e.Event == "created" && e.Container != "":
		return v1.EventTypeNormal, reasonCreated, "Created container: " + e.Container, true
	case e.Event == "started" && e.Container != "":
		return v1.EventTypeNormal, reasonStarted, "Started container " + e.Container, true
	case e.Event == "killing":
		return v1.EventTypeNormal, reasonKilling, "Stopping container " + e.Container, true
	case e.Event == "backoff" && e.Reason == "CrashLoopBackOff":
		return v1.EventTypeWarning, reasonBackOff, fmt.Sprintf("Back-off restarting failed container %s in pod %s", e.Container, formatPod(e)), true
	case e.Event == "backoff" && e.Reason == "ImagePullBackOff":
		return v1.EventTypeNormal, reasonBackOff, fmt.Sprintf("Back-off pulling image %q", e.Message), true
	case e.Event == "failed" && e.Reason == "ErrImageNeverPull":
		return v1.EventTypeWarning, reasonErrImageNever, fmt.Sprintf("Container image %q is not present with pull policy of Never", e.Message), true
	case e.Event == "failed" && e.Reason == "ErrImagePull":
		return v1.EventTypeWarning, reasonFailed, fmt.Sprintf("Failed to pull image %q", e.Message), true
	case e.Event == "failed":
		return v1.EventTypeWarning, reasonFailed, "Error: " + e.Reason, true
	}
	return "", "", "", false
}

// podRef is the event's involved object: the pod the runtime event names.
func podRef(e trace.Event) *v1.ObjectReference {
	namespace, name, _ := strings.Cut(e.Pod, "/")
	return &v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: namespace, Name: name, UID: types.UID(e.UID)}
}

// formatPod is the kubelet's format.Pod for a trace event: "name_namespace(uid)".
func formatPod(e trace.Event) string {
	namespace, name, _ := strings.Cut(e.Pod, "/")
	return name + "_" + namespace + "(" + e.UID + ")"
}
