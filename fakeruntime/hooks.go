package fakeruntime

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The lifecycle hooks a container can have.
const (
	HookPostStart = "postStart"
	HookPreStop   = "preStop"
)

// Annotation key prefixes that script a container's lifecycle hooks, followed by the container's
// name. The value is "fail", a Go duration ("3s"), or both ("fail 3s"): whether the hook fails
// and how long it runs. A real kubelet ignores them.
const (
	AnnotationPostStart = "minikubelet.io/post-start."
	AnnotationPreStop   = "minikubelet.io/pre-stop."
)

// HookBehavior scripts what a lifecycle hook does when the kubelet runs it. Nothing runs in the
// fake runtime, so an exec or HTTP hook succeeds at once unless scripted, and a sleep hook
// sleeps its seconds.
type HookBehavior struct {
	// Fail makes the hook fail: for an exec hook the command exits 1, for an HTTP hook the
	// connection is refused.
	Fail bool
	// Duration is how long the hook runs before it returns. Nil keeps the handler's own: zero
	// for exec and HTTP, the seconds of a sleep.
	Duration *time.Duration
	// HTTPStatus is the status an HTTP hook's server answers; zero is 200. The v1.35 kubelet
	// reads no status: any answer is a success, only a transport error fails the hook.
	HTTPStatus int
	// Times, when positive, limits the script to the next Times runs of the hook; after them the
	// hook runs as if it had not been scripted (its annotation, else a success). Zero scripts
	// every run.
	Times int
}

type hookKey struct {
	pod, container, hook string
}

// SetHook scripts the hook (HookPostStart or HookPreStop) of the named container of the pod
// "namespace/name" from now on, for every run. It wins over the pod's annotations.
func (r *Runtime) SetHook(podKey, container, hook string, b HookBehavior) error {
	if hook != HookPostStart && hook != HookPreStop {
		return fmt.Errorf("script hook %q of container %s: want %s or %s", hook, container, HookPostStart, HookPreStop)
	}
	r.hooks[hookKey{pod: podKey, container: container, hook: hook}] = b
	return nil
}

// ParseHookAnnotation parses the value of a hook annotation: "fail", a positive Go duration, or
// both separated by a space. The error wraps ErrBadAnnotation.
func ParseHookAnnotation(value string) (HookBehavior, error) {
	var b HookBehavior
	fields := strings.Fields(value)
	if len(fields) == 0 || len(fields) > 2 {
		return b, fmt.Errorf("%q: want \"fail\", a duration such as 3s, or both: %w", value, ErrBadAnnotation)
	}
	for _, f := range fields {
		if f == "fail" && !b.Fail {
			b.Fail = true
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 || b.Duration != nil {
			return HookBehavior{}, fmt.Errorf("%q: want \"fail\", a duration such as 3s, or both: %w", value, ErrBadAnnotation)
		}
		b.Duration = &d
	}
	return b, nil
}

// checkHookAnnotations reports a hook annotation of container that does not parse, naming its
// key; the start then fails as for the other scripting annotations.
func checkHookAnnotations(annotations map[string]string, container string) error {
	for _, prefix := range []string{AnnotationPostStart, AnnotationPreStop} {
		if v, ok := annotations[prefix+container]; ok {
			if _, err := ParseHookAnnotation(v); err != nil {
				return fmt.Errorf("%s%s=%w", prefix, container, err)
			}
		}
	}
	return nil
}

// hookRun is one run of a lifecycle hook, decided when the kubelet starts it.
type hookRun struct {
	// d is how long the hook runs; err is non-empty when it fails, with msg the handler
	// runner's message (the postStart waiting message). answered is the status an HTTP hook's
	// server answered, 0 for another handler or a failure.
	d        time.Duration
	err      string
	msg      string
	answered int
}

// runHook decides how the hook h of container c runs: scripted by SetHook, else by the pod's
// annotation, else by its handler (the kubelet's handlerRunner.Run). A bad annotation fails the
// hook with the parse error as its message. podIPs are the IPs the runtime reports for the pod's
// sandbox when the hook runs, which an HTTP hook without a host is aimed at.
func (r *Runtime) runHook(pod *v1.Pod, c *v1.Container, hook string, h *v1.LifecycleHandler, podIPs []string) hookRun {
	key := hookKey{pod: podKeyOf(pod), container: c.Name, hook: hook}
	b, ok := r.hooks[key]
	if ok && b.Times > 0 {
		// One run of a limited script used up; the last one ends the script.
		if b.Times--; b.Times == 0 {
			delete(r.hooks, key)
		} else {
			r.hooks[key] = b
		}
	}
	if !ok {
		prefix := AnnotationPostStart
		if hook == HookPreStop {
			prefix = AnnotationPreStop
		}
		if v, has := pod.Annotations[prefix+c.Name]; has {
			var err error
			if b, err = ParseHookAnnotation(v); err != nil {
				e := fmt.Errorf("%s%s=%w", prefix, c.Name, err)
				return hookRun{err: e.Error(), msg: "Cannot run handler: " + e.Error()}
			}
		}
	}
	var run hookRun
	switch {
	case h.Exec != nil:
		if b.Fail {
			run.err = fmt.Sprintf("command '%s' exited with 1: ", strings.Join(h.Exec.Command, " "))
			run.msg = fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, c.Name, formatPod(pod), run.err, "")
		}
	case h.HTTPGet != nil:
		// runHTTPHandler: without a host, the pod IP the runtime reports for its sandbox, which
		// a host-network pod's sandbox, or a sandbox that is not ready, does not have; the
		// request is made at once, and any answer is a success.
		host := h.HTTPGet.Host
		if host == "" {
			if len(podIPs) == 0 {
				run.err = fmt.Sprintf("failed to find networking container: &{%s %s %s [] ...}", pod.UID, pod.Name, pod.Namespace)
				run.msg = fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, formatPod(pod), run.err)
				return run
			}
			host = podIPs[0]
		}
		port, err := hookPort(h.HTTPGet.Port, c)
		if err != nil {
			run.err = err.Error()
			run.msg = fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, formatPod(pod), run.err)
			return run
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		if b.Fail {
			run.err = fmt.Sprintf("Get %q: dial tcp %s: connect: connection refused", httpHookURL(h.HTTPGet, addr), addr)
			run.msg = fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, formatPod(pod), run.err)
		} else {
			run.answered = b.HTTPStatus
			if run.answered == 0 {
				run.answered = http.StatusOK
			}
		}
	case h.Sleep != nil:
		run.d = time.Duration(h.Sleep.Seconds) * time.Second
		if b.Fail {
			run.err = "container terminated before sleep hook finished"
			run.msg = fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, c.Name, formatPod(pod), run.err)
		}
	default:
		// A tcpSocket handler passes validation but the kubelet cannot run it: it always fails.
		err := errors.New("invalid handler: " + describeHandler(h))
		run.err = err.Error()
		run.msg = "Cannot run handler: " + err.Error()
	}
	if b.Duration != nil {
		run.d = *b.Duration
	}
	return run
}

// httpHookURL is the URL an HTTP hook requests from addr, host and port.
func httpHookURL(h *v1.HTTPGetAction, addr string) string {
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	return fmt.Sprintf("%s://%s%s", scheme, addr, h.Path)
}

// hookPort is the port an HTTP hook requests: probe.ResolveContainerPort, with its errors: a
// number, or the container port of that name, or else a name that parses as a number.
func hookPort(p intstr.IntOrString, c *v1.Container) (int, error) {
	port := p.IntValue()
	if p.Type == intstr.String {
		port = -1
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				port = int(cp.ContainerPort)
				break
			}
		}
		if port < 0 {
			var err error
			if port, err = strconv.Atoi(p.StrVal); err != nil {
				return port, err
			}
		}
	}
	if port > 0 && port < 65536 {
		return port, nil
	}
	return port, fmt.Errorf("invalid port number: %v", port)
}

// describeHandler names what a handler the kubelet cannot run holds.
func describeHandler(h *v1.LifecycleHandler) string {
	if h.TCPSocket != nil {
		return fmt.Sprintf("tcpSocket port %s", h.TCPSocket.Port.String())
	}
	return "no action"
}

// podKeyOf is the trace's "namespace/name" of pod.
func podKeyOf(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }
