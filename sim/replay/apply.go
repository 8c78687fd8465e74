package replay

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/prober"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sources"
)

// apply carries out step i. Expectations are judged on the state after everything due before
// them at this instant has settled.
func (e *engine) apply(ctx context.Context, i int) {
	st := &e.s.Steps[i]
	e.step = i
	mark := e.rec.Len()
	prev := e.proc
	e.proc = e.procFor(ctx, st)
	defer func() { e.proc = prev }()
	switch {
	case st.WriteManifest != nil:
		e.writeManifest(st.WriteManifest)
	case st.RemoveManifest != nil:
		e.removeManifest(st.RemoveManifest.Name)
	case st.RenameManifest != nil:
		e.renameManifest(st.RenameManifest)
	case st.ServeHTTP != nil:
		e.serve.status, e.serve.body = st.ServeHTTP.Status, st.ServeHTTP.Content
		e.stepEvent(trace.KindServeHTTP, "", fmt.Sprintf("%d, %d bytes", st.ServeHTTP.Status, len(st.ServeHTTP.Content)))
	case st.APICreatePod != nil, st.APIUpdatePod != nil, st.APIUpdatePodStatus != nil,
		st.APIDeletePod != nil, st.APIDeleteMirrorPod != nil, st.APICreateNamespace != nil, st.APIDeleteNamespace != nil:
		e.applyAPI(ctx, st)
	case st.ContainerExit != nil:
		c := st.ContainerExit
		e.stepEvent(trace.KindContainerExit, c.Pod, fmt.Sprintf("container %s exits with %d", c.Container, c.ExitCode))
		if err := e.node.Runtime.ContainerExit(c.Pod, c.Container, c.ExitCode); err != nil {
			e.stepError(trace.KindContainerExit, err)
		}
	case st.CrashLoop != nil:
		c := st.CrashLoop
		e.stepEvent(trace.KindCrashLoop, c.Pod, fmt.Sprintf("container %s exits with %d after %v, every run", c.Container, c.ExitCode, c.After.Duration))
		e.node.Runtime.SetBehavior(c.Pod, c.Container, fakeruntime.Behavior{ExitCode: c.ExitCode, RunFor: c.After.Duration})
	case st.FailImagePull != nil:
		f := st.FailImagePull
		e.stepEvent(trace.KindFailImagePull, "", fmt.Sprintf("the next %d pulls of %s fail", f.Times, f.Image))
		e.node.Runtime.FailImagePull(f.Image, f.Times)
	case st.RuntimeDown != nil:
		e.stepEvent(trace.KindRuntimeDown, "", "for "+st.RuntimeDown.For.String())
		e.node.Runtime.Down(e.clk.Now().Add(st.RuntimeDown.For.Duration))
	case st.APIServerDown != nil:
		e.stepEvent(trace.KindAPIServerDown, "", "for "+st.APIServerDown.For.String())
		e.link.until = e.clk.Now().Add(st.APIServerDown.For.Duration)
	case st.ContainerStop != nil:
		e.containerStop(st.ContainerStop)
	case st.Hook != nil:
		e.hook(st.Hook)
	case st.OOMKill != nil, st.KillSandbox != nil, st.FailRuntimeCall != nil:
		e.applyFault(st)
	case st.RestartKubelet != nil:
		e.restartKubelet()
	case st.StopNode != nil:
		e.stopNode()
	case st.StartNode != nil:
		e.startNode()
	case st.APIDeleteNode != nil:
		e.apiDeleteNode(ctx, st.APIDeleteNode)
	case st.Probe != nil:
		e.probe(st.Probe)
	case st.Expect != nil:
		e.judged(e.checkExpect(ctx, i, st.Expect))
	case st.ExpectEvent != nil:
		e.judged(e.checkEvent(i, st.ExpectEvent))
	case st.ExpectPlugin != nil:
		e.judged(e.checkExpectPlugin(i, st.ExpectPlugin))
	case st.ExpectNode != nil:
		e.judged(e.checkExpectNode(ctx, i, st.ExpectNode))
	case st.isPluginStep():
		e.applyPlugin(st)
	case st.ExpectNoEvent != nil:
		e.judged(e.checkNoEvent(i, st.ExpectNoEvent))
	case st.ExpectMetric != nil:
		e.judged(e.checkMetric(i, st.ExpectMetric))
	}
	for _, ev := range e.rec.EventsSince(mark) {
		if ev.Component == trace.Scenario {
			e.result.StepSeqs[i] = ev.Seq
			break
		}
	}
	// An expectEvent looks at the events since the step before it began, that step's own events
	// included. expectEvents in a row at one instant share the window of the first of them:
	// nothing happens between them, and they check what the same earlier steps caused.
	if i+1 == len(e.s.Steps) || !sameCheck(st, &e.s.Steps[i+1]) {
		e.window = mark
	}
}

// sameCheck reports whether b, the step after a, is an event check judged on a's window: both
// are expectEvents or expectNoEvents at the same instant.
func sameCheck(a, b *Step) bool {
	isEventCheck := func(s *Step) bool { return s.ExpectEvent != nil || s.ExpectNoEvent != nil }
	return isEventCheck(a) && isEventCheck(b) && a.At == b.At
}

// writeManifest writes the file and delivers what inotify would: a new file is IN_CREATE then
// IN_MODIFY (add, then modify), a rewritten one IN_MODIFY alone.
func (e *engine) writeManifest(w *WriteManifest) {
	existed := e.dir.has(w.Name)
	e.dir.files[w.Name] = []byte(w.Content)
	e.stepEvent(trace.KindWriteManifest, "", e.manifestPath(w.Name))
	if !existed {
		e.watchEvent(w.Name, sources.WatchAdd)
	}
	e.watchEvent(w.Name, sources.WatchModify)
}

func (e *engine) removeManifest(name string) {
	e.stepEvent(trace.KindRemoveManifest, "", e.manifestPath(name))
	if !e.dir.has(name) {
		e.stepError(trace.KindRemoveManifest, fmt.Errorf("%s: no such file", e.manifestPath(name)))
		return
	}
	delete(e.dir.files, name)
	e.watchEvent(name, sources.WatchDelete)
}

// renameManifest moves a file inside the directory: inotify reports IN_MOVED_FROM for the old
// name (a delete for the file source) and IN_MOVED_TO for the new one (an add).
func (e *engine) renameManifest(r *RenameManifest) {
	e.stepEvent(trace.KindRenameManifest, "", e.manifestPath(r.From)+" -> "+e.manifestPath(r.To))
	data, ok := e.dir.files[r.From]
	if !ok {
		e.stepError(trace.KindRenameManifest, fmt.Errorf("%s: no such file", e.manifestPath(r.From)))
		return
	}
	delete(e.dir.files, r.From)
	e.dir.files[r.To] = data
	e.watchEvent(r.From, sources.WatchDelete)
	e.watchEvent(r.To, sources.WatchAdd)
}

func (e *engine) watchEvent(name string, op sources.WatchOp) {
	u, _ := e.file.HandleEvent(sources.WatchEvent{Path: e.manifestPath(name), Op: op}) // errors are in the trace
	e.queue(u)
}

// applyAPI sends an API step through the fake API server's REST API, with its real semantics.
func (e *engine) applyAPI(ctx context.Context, st *Step) {
	var err error
	core := e.client.CoreV1()
	switch {
	case st.APICreatePod != nil:
		pod := st.APICreatePod.Pod.DeepCopy()
		if pod.Namespace == "" {
			pod.Namespace = metav1.NamespaceDefault
		}
		e.stepEvent(trace.KindAPICreatePod, podkey.Of(pod), "")
		_, err = core.Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	case st.APIUpdatePod != nil:
		pod := st.APIUpdatePod.Pod.DeepCopy()
		if pod.Namespace == "" {
			pod.Namespace = metav1.NamespaceDefault
		}
		e.stepEvent(trace.KindAPIUpdatePod, podkey.Of(pod), "")
		cur, gerr := core.Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err = gerr; err == nil {
			// The scenario gives the desired object; the resourceVersion and status are the
			// server's, as with kubectl replace. So is the service account admission named at
			// create when the pod named none: no admission plugin fills it in on update, and
			// the spec may not change it.
			pod.ResourceVersion, pod.UID, pod.Status = cur.ResourceVersion, cur.UID, cur.Status
			if pod.Spec.ServiceAccountName == "" {
				pod.Spec.ServiceAccountName = cur.Spec.ServiceAccountName
			}
			_, err = core.Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{})
		}
	case st.APIUpdatePodStatus != nil:
		a := st.APIUpdatePodStatus
		e.stepEvent(trace.KindAPIUpdatePodStatus, podkey.Build(a.Namespace, a.Name), "")
		cur, gerr := core.Pods(a.Namespace).Get(ctx, a.Name, metav1.GetOptions{})
		if err = gerr; err == nil {
			cur.Status = *a.Status.DeepCopy()
			_, err = core.Pods(a.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		}
	case st.APIDeletePod != nil:
		a := st.APIDeletePod
		msg := "default grace period"
		if a.GracePeriodSeconds != nil {
			msg = "grace period " + strconv.FormatInt(*a.GracePeriodSeconds, 10) + "s"
		}
		e.stepEvent(trace.KindAPIDeletePod, podkey.Build(a.Namespace, a.Name), msg)
		err = core.Pods(a.Namespace).Delete(ctx, a.Name, metav1.DeleteOptions{GracePeriodSeconds: a.GracePeriodSeconds})
	case st.APIDeleteMirrorPod != nil:
		a := st.APIDeleteMirrorPod
		e.stepEvent(trace.KindAPIDeleteMirrorPod, podkey.Build(a.Namespace, a.Name), "as kubectl delete pod")
		err = core.Pods(a.Namespace).Delete(ctx, a.Name, metav1.DeleteOptions{})
	case st.APICreateNamespace != nil:
		name := st.APICreateNamespace.Name
		e.stepEvent(trace.KindAPICreateNamespace, "", name)
		_, err = core.Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	case st.APIDeleteNamespace != nil:
		name := st.APIDeleteNamespace.Name
		e.stepEvent(trace.KindAPIDeleteNamespace, "", name)
		err = core.Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	}
	name, _ := st.action()
	if want := expectedAPIError(st); want != "" {
		switch {
		case err == nil:
			e.stepError(trace.Kind(name), fmt.Errorf("the API server accepted the write, want an error containing %q", want))
		case !strings.Contains(err.Error(), want):
			e.stepError(trace.Kind(name), fmt.Errorf("want an error containing %q: %w", want, err))
		default:
			// The server's message ends in a multi-line diff of the specs; the trace keeps its
			// first line.
			msg, _, _ := strings.Cut(err.Error(), "\n")
			e.rec.Emit(trace.Event{Component: trace.Scenario, Event: trace.Kind(name), Pod: stepPodKey(st), Reason: "Rejected", Message: msg})
		}
		return
	}
	if err != nil {
		e.stepError(trace.Kind(name), err)
	}
}

// probe scripts what a container's probe answers from now on. The script belongs to the world,
// so it outlives a kubelet restart.
func (e *engine) probe(p *ProbeStep) {
	t, _ := prober.ParseProbeType(p.Type)
	o, _ := prober.ParseOutcome(p.Result)
	r := prober.Rule{Outcome: o, Times: p.Times, For: p.For.Duration}
	e.stepEvent(trace.KindProbe, p.Pod, fmt.Sprintf("container %s %s probe answers %s", p.Container, p.Type, r))
	e.probes.Set(p.Pod, p.Container, t, r, e.clk.Now())
}

// stepPodKey is the "namespace/name" of the pod an apiCreatePod or apiUpdatePod step writes.
func stepPodKey(st *Step) string {
	var pod *v1.Pod
	switch {
	case st.APICreatePod != nil:
		pod = &st.APICreatePod.Pod
	case st.APIUpdatePod != nil:
		pod = &st.APIUpdatePod.Pod
	default:
		return ""
	}
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return podkey.Build(ns, pod.Name)
}

// expectedAPIError is the error an apiCreatePod or apiUpdatePod step expects, if any.
func expectedAPIError(st *Step) string {
	switch {
	case st.APICreatePod != nil:
		return st.APICreatePod.ExpectError
	case st.APIUpdatePod != nil:
		return st.APIUpdatePod.ExpectError
	}
	return ""
}
