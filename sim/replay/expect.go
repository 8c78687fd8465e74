package replay

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// checkExpect judges an expect step against the kubelet's own view of the pod: the pod manager
// (present), the status manager (phase, containers), the pod workers (workerState) and the API
// server (mirror).
func (e *engine) checkExpect(ctx context.Context, i int, x *Expect) Outcome {
	o := Outcome{Step: i + 1, At: e.s.Steps[i].At.Duration}
	var what, seen []string
	fail := false
	check := func(field, want, got string) {
		what = append(what, field+"="+want)
		seen = append(seen, field+"="+got)
		if want != got {
			fail = true
		}
	}
	if x.Pod == "" {
		// Only an apiObject check.
		e.checkAPIObject(ctx, x.APIObject, check)
		o.What = "expect " + strings.Join(what, " ")
		o.Met = !fail
		if fail {
			o.Seen = strings.Join(seen, " ")
		}
		return o
	}
	ns, name, _ := strings.Cut(x.Pod, "/")
	pod, present := e.node.Pods.GetPodByName(ns, name)
	uid := e.uids[x.Pod]
	if present {
		uid = pod.UID
	}
	if x.Present != nil {
		check("present", strconv.FormatBool(*x.Present), strconv.FormatBool(present))
	}
	status, hasStatus := e.node.Status.GetPodStatus(uid)
	if x.Phase != "" {
		got := "none"
		if hasStatus {
			got = string(status.Phase)
		}
		check("phase", x.Phase, got)
	}
	if x.WorkerState != "" {
		got := "none"
		if uid != "" {
			if st, ok := e.node.Workers.State(uid); ok {
				got = st.String()
			}
		}
		check("workerState", x.WorkerState, got)
	}
	if x.Mirror != "" {
		check("mirror", x.Mirror, e.mirrorState(ctx, ns, name))
	}
	if x.Container != "" {
		state, restarts := containerState(status, x.Container)
		if x.State != "" {
			check("container "+x.Container+" state", x.State, state)
		}
		if x.RestartCount != nil {
			check("container "+x.Container+" restartCount", strconv.Itoa(*x.RestartCount), strconv.Itoa(restarts))
		}
		checkContainerDetails(status, x, check)
	}
	checkPodFields(status, hasStatus, x, check)
	if x.APIObject != nil {
		e.checkAPIObject(ctx, x.APIObject, check)
	}
	o.What = "expect " + x.Pod + " " + strings.Join(what, " ")
	o.Met = !fail
	if fail {
		o.Seen = strings.Join(seen, " ") + e.unknownPodHint(x.Pod)
	}
	return o
}

// describeExpect renders an expect step as the summary names it, such as
// `expect default/web-node-1 phase=Running`.
func describeExpect(x *Expect) string {
	what := []string{"expect", x.Pod}
	add := func(field, want string) { what = append(what, field+"="+want) }
	if x.Present != nil {
		add("present", strconv.FormatBool(*x.Present))
	}
	if x.Phase != "" {
		add("phase", x.Phase)
	}
	if x.WorkerState != "" {
		add("workerState", x.WorkerState)
	}
	if x.Mirror != "" {
		add("mirror", x.Mirror)
	}
	if x.Container != "" {
		if x.State != "" {
			add("container "+x.Container+" state", x.State)
		}
		if x.RestartCount != nil {
			add("container "+x.Container+" restartCount", strconv.Itoa(*x.RestartCount))
		}
	}
	return strings.Join(what, " ")
}

// mirrorState says whether the API server holds a mirror pod under the name.
func (e *engine) mirrorState(ctx context.Context, ns, name string) string {
	if e.client == nil {
		return "absent"
	}
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "absent"
	case err != nil:
		return "error: " + err.Error()
	case !kubecontainer.IsMirrorPod(p):
		return "absent" // a regular pod has the name, which is no mirror pod
	}
	return "present"
}

// containerState reads a container's state and restart count from the kubelet's pod status.
func containerState(status v1.PodStatus, name string) (string, int) {
	all := append(append([]v1.ContainerStatus(nil), status.InitContainerStatuses...), status.ContainerStatuses...)
	for _, c := range all {
		if c.Name != name {
			continue
		}
		switch {
		case c.State.Running != nil:
			return "running", int(c.RestartCount)
		case c.State.Terminated != nil:
			return "terminated", int(c.RestartCount)
		default:
			return "waiting", int(c.RestartCount)
		}
	}
	return "absent", 0
}

// checkEvent judges an expectEvent step: a matching trace event since the step before.
func (e *engine) checkEvent(i int, x *ExpectEvent) Outcome {
	o := Outcome{Step: i + 1, At: e.s.Steps[i].At.Duration}
	o.What = "expectEvent " + x.describe()
	events := e.rec.EventsSince(e.window)
	near := 0
	for _, ev := range events {
		if string(ev.Component) != x.Component || string(ev.Event) != x.Event {
			continue
		}
		near++
		if x.matches(ev) {
			o.Met = true
			return o
		}
	}
	o.Seen = fmt.Sprintf("%d %s/%s events since the previous step, none matching", near, x.Component, x.Event)
	return o
}

// checkNoEvent judges an expectNoEvent step: no matching trace event in the window an
// expectEvent at the same place would look at.
func (e *engine) checkNoEvent(i int, x *ExpectEvent) Outcome {
	o := Outcome{Step: i + 1, At: e.s.Steps[i].At.Duration, What: "expectNoEvent " + x.describe(), Met: true}
	for _, ev := range e.rec.EventsSince(e.window) {
		if string(ev.Component) == x.Component && string(ev.Event) == x.Event && x.matches(ev) {
			o.Met = false
			o.Seen = fmt.Sprintf("at %v: %s/%s pod=%s container=%s reason=%s", ev.T, ev.Component, ev.Event, ev.Pod, ev.Container, ev.Reason)
			return o
		}
	}
	return o
}

// describe lists the fields an expectEvent or expectNoEvent matches on.
func (x *ExpectEvent) describe() string {
	parts := []string{"component=" + x.Component, "event=" + x.Event}
	for _, f := range []struct{ k, v string }{{"op", x.Op}, {"source", x.Source}, {"pod", x.Pod}, {"container", x.Container}, {"reason", x.Reason}} {
		if f.v != "" {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	return strings.Join(parts, " ")
}

// matches reports whether ev's optional fields match x's; component and event are checked by the
// caller.
func (x *ExpectEvent) matches(ev trace.Event) bool {
	return (x.Op == "" || ev.Op == x.Op) && (x.Source == "" || ev.Source == x.Source) &&
		(x.Pod == "" || eventNamesPod(ev.Pod, ev.Pods, x.Pod)) &&
		(x.Container == "" || ev.Container == x.Container) && (x.Reason == "" || ev.Reason == x.Reason)
}

// eventNamesPod matches an event's pod, or one of the pods an update carries.
func eventNamesPod(pod string, pods []string, want string) bool {
	if pod == want {
		return true
	}
	for _, p := range pods {
		if p == want {
			return true
		}
	}
	return false
}
