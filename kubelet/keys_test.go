package kubelet

import (
	"testing"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestOneTraceKeyAPod checks that the components that trace a running pod share the pod
// workers' key string (kubecontainer.SharedKeys) instead of building their own: the same text,
// and the same bytes in memory.
func TestOneTraceKeyAPod(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, noFileSource: true, syncFrequency: 10 * time.Second})
	pod := staticPod("web", "uid-web", v1.RestartPolicyAlways)
	e.handPods(pod)
	if !e.run(time.Minute, func() bool { return e.phase(pod.UID) == v1.PodRunning }) {
		t.Fatalf("pod not Running after a minute")
	}
	e.runFor(30 * time.Second) // periodic syncs, whose sync ticks name the pod
	want := pod.Namespace + "/" + pod.Name
	var workers string
	for _, ev := range e.rec.Events() {
		if ev.Component == trace.PodWorkers && ev.Pod == want {
			workers = ev.Pod
			break
		}
	}
	if workers == "" {
		t.Fatalf("no pod workers' event about %s", want)
	}
	shared := map[trace.Component]bool{}
	for _, ev := range e.rec.Events() {
		keys := ev.Pods
		if ev.Pod != "" {
			keys = append(keys, ev.Pod)
		}
		for _, key := range keys {
			if key != want {
				continue
			}
			switch ev.Component {
			case trace.Runtime, trace.PLEG, trace.Status, trace.SyncLoop:
			default:
				continue
			}
			same := unsafe.StringData(key) == unsafe.StringData(workers)
			if !same && ev.Component == trace.SyncLoop && ev.Event == trace.KindConfig {
				continue // the config update that creates the worker comes before it
			}
			if !same {
				t.Errorf("%s %s event's key %q is a copy of its own, not the pod workers'", ev.Component, ev.Event, key)
				continue
			}
			shared[ev.Component] = true
		}
	}
	for _, c := range []trace.Component{trace.Runtime, trace.PLEG, trace.Status, trace.SyncLoop} {
		if !shared[c] {
			t.Errorf("no %s event named the pod with the shared key", c)
		}
	}
}
