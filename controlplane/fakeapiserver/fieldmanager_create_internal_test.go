package fakeapiserver

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// randomCreates makes the objects of TestCreateFieldsMatchTheLibrary: pods and events from few
// choices, so that shapes repeat with other values (names, images, times, numbers) and differ by
// a field set or left out, a map's key, a list-map element's key (duplicates among them), a set's
// element, an integer or a string where either fits, an empty list or map against none.
type randomCreates struct{ rng *rand.Rand }

func (g randomCreates) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

func (g randomCreates) pod(i int) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", i)},
		Spec: corev1.PodSpec{NodeName: "node-" + g.pick("1", "2")}}
	if g.rng.Intn(3) != 0 {
		pod.Labels = map[string]string{"app": g.pick("a", "b", "c")}
		if g.rng.Intn(3) == 0 {
			pod.Labels[g.pick("tier", "zone")] = g.pick("x", "y")
		}
	} else if g.rng.Intn(2) == 0 {
		pod.Labels = map[string]string{}
	}
	if g.rng.Intn(3) == 0 {
		pod.Annotations = map[string]string{"kubernetes.io/config.hash": fmt.Sprint(g.rng.Int63()), "kubernetes.io/config.mirror": fmt.Sprint(g.rng.Int63())}
	}
	if g.rng.Intn(3) == 0 {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: types.UID(g.pick("u1", "u2")), Controller: ptr.To(true)}}
	}
	if g.rng.Intn(4) == 0 {
		pod.Finalizers = []string{g.pick("example.com/a", "example.com/b")}
		if g.rng.Intn(2) == 0 {
			pod.Finalizers = append(pod.Finalizers, "example.com/c")
		}
	}
	for _, name := range []string{"app", "side", "app"}[:1+g.rng.Intn(2)+g.rng.Intn(2)] {
		c := corev1.Container{Name: name, Image: g.pick("nginx:1.27", "busybox:1.36")}
		if g.rng.Intn(2) == 0 {
			c.Ports = []corev1.ContainerPort{{ContainerPort: int32(80 + g.rng.Intn(2)), Protocol: corev1.Protocol(g.pick("TCP", "UDP"))}}
		}
		switch g.rng.Intn(4) {
		case 0:
			c.Env = []corev1.EnvVar{{Name: "A", Value: fmt.Sprint(g.rng.Intn(9))}, {Name: g.pick("A", "B"), Value: "v"}}
		case 1:
			c.Env = []corev1.EnvVar{}
		}
		if g.rng.Intn(3) == 0 {
			port := intstr.FromInt32(int32(8080 + g.rng.Intn(2)))
			if g.rng.Intn(2) == 0 {
				port = intstr.FromString(g.pick("http", "web"))
			}
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: port}}, PeriodSeconds: int32(g.rng.Intn(20))}
		}
		if g.rng.Intn(3) == 0 {
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceName(g.pick("cpu", "memory")): apiresource.MustParse(g.pick("100m", "1", "64Mi"))}
		}
		if g.rng.Intn(4) == 0 {
			c.Command = []string{"sh", "-c", g.pick("sleep 1", "true")}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	if g.rng.Intn(3) == 0 {
		pod.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(g.pick("NoExecute", "NoSchedule", ""))}}
	}
	if g.rng.Intn(3) == 0 {
		pod.Spec.Volumes = []corev1.Volume{{Name: g.pick("data", "cfg"), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	if g.rng.Intn(5) == 0 {
		pod.Spec.PriorityClassName = g.pick("", "system-node-critical")
		pod.Spec.Priority = ptr.To(int32(g.rng.Intn(3)))
	}
	if g.rng.Intn(6) == 0 {
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Message: g.pick("", "m")}
	}
	return pod
}

func (g randomCreates) event(i int) *corev1.Event {
	at := metav1.NewTime(time.Date(2026, time.January, 1, 0, 0, g.rng.Intn(60), 0, time.UTC))
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("e-%d", i)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("p-%d", g.rng.Intn(9)), UID: types.UID(fmt.Sprint(g.rng.Int63()))},
		Reason:         g.pick("Started", "Pulled", "Created"), Message: g.pick("ok", "Started container app"), Type: g.pick("Normal", "Warning"),
		Source: corev1.EventSource{Component: "kubelet", Host: g.pick("node-1", "")}, FirstTimestamp: at, LastTimestamp: at, Count: int32(1 + g.rng.Intn(2))}
	if g.rng.Intn(3) == 0 {
		ev.InvolvedObject.FieldPath = "spec.containers{app}"
	}
	return ev
}

// TestCreateFieldsMatchTheLibrary creates random pods and events (randomCreates) on two servers,
// one whose creates may share their managed fields by shape (createFields) and one on the
// library's path for every create, and wants every stored object, managed fields included, and
// every error to be the same.
func TestCreateFieldsMatchTheLibrary(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(true)
	ctx := context.Background()
	seeds, creates := differentialSeeds(20), int64(100)
	shared := int64(0)
	for seed := int64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewSource(seed))
		gen := randomCreates{rng: rng}
		var servers [2]*Server // [0] the library's path, [1] with the shortcuts
		var clocks [2]*clocktesting.FakeClock
		for i := range servers {
			clocks[i] = clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
			s, err := New(Options{Clock: clocks[i], Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			servers[i] = s
		}
		for i := range int(creates) {
			manager := gen.pick("kubelet", "kubelet", "kubectl")
			var pod *corev1.Pod
			var ev *corev1.Event
			if rng.Intn(4) == 0 {
				ev = gen.event(i)
			} else {
				pod = gen.pod(i)
				if rng.Intn(15) == 0 {
					pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "sent", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
						FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}}
				}
			}
			var errs [2]error
			before := fieldmanager.CreatesShared.Load()
			tick := time.Duration(400+rng.Intn(2)*900) * time.Millisecond
			for k, s := range servers {
				fieldmanager.Shortcuts.Set(k == 1)
				d := s.Direct(manager + "/v1")
				if pod != nil {
					_, errs[k] = d.CreatePod(ctx, pod.DeepCopy())
				} else {
					_, errs[k] = d.CreateEvent(ctx, ev.DeepCopy())
				}
				clocks[k].Step(tick)
			}
			fieldmanager.Shortcuts.Set(true)
			shared += fieldmanager.CreatesShared.Load() - before
			res, name := podsTarget, fmt.Sprintf("p-%d", i)
			desc := fmt.Sprintf("seed %d create %d by %s: %+v", seed, i, manager, pod)
			if ev != nil {
				res, name = eventsTarget, fmt.Sprintf("e-%d", i)
				desc = fmt.Sprintf("seed %d create %d by %s: %+v", seed, i, manager, ev)
			}
			if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
				t.Errorf("%s: error = %v on the library's path, %v with the shortcuts", desc, errs[0], errs[1])
			}
			a, b := storedRaw(servers[0], res, "default", name), storedRaw(servers[1], res, "default", name)
			if diff := cmp.Diff(a, b); diff != "" {
				t.Fatalf("%s: stored (-library +shortcuts):\n%s", desc, diff)
			}
		}
	}
	t.Logf("createFields served %d of %d creates", shared, seeds*creates)
	// The comparison means something only if shapes were shared for many of the creates.
	if !raceEnabled && shared < seeds*creates/4 {
		t.Errorf("createFields served %d creates, want at least %d", shared, seeds*creates/4)
	}
}

// TestCreateShapes wants objects that differ only in scalar values to have one shape, and
// objects whose field sets differ, or whose scalars differ in kind, not to.
func TestCreateShapes(t *testing.T) {
	tg := target{res: podsTarget, namespace: "default", manager: "kubelet"}
	base := func() *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", Labels: map[string]string{"app": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27", Env: []corev1.EnvVar{{Name: "A", Value: "1"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}}},
				Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}}}
	}
	key := func(p *corev1.Pod) string {
		k, ok := fieldProbe(t).CreateShape(tg.write(), p)
		if !ok {
			t.Fatalf("CreateShape(%+v) refused", p)
		}
		return k
	}
	want := key(base())
	same := map[string]func(*corev1.Pod){
		"another name":           func(p *corev1.Pod) { p.Name = "b" },
		"another label value":    func(p *corev1.Pod) { p.Labels["app"] = "y" },
		"another image":          func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox" },
		"another env value":      func(p *corev1.Pod) { p.Spec.Containers[0].Env[0].Value = "2" },
		"another port":           func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(81) },
		"another toleration key": func(p *corev1.Pod) { p.Spec.Tolerations[0].Key = "j" },
	}
	for name, change := range same {
		p := base()
		change(p)
		if got := key(p); got != want {
			t.Errorf("%s: the shape changed:\n%q\n%q", name, want, got)
		}
	}
	differ := map[string]func(*corev1.Pod){
		"a label's key":      func(p *corev1.Pod) { p.Labels = map[string]string{"tier": "x"} },
		"a container's name": func(p *corev1.Pod) { p.Spec.Containers[0].Name = "d" },
		"an env var's name":  func(p *corev1.Pod) { p.Spec.Containers[0].Env[0].Name = "B" },
		"an env var's duplicate": func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "A"})
		},
		"a port's kind":            func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromString("http") },
		"a field set":              func(p *corev1.Pod) { p.Spec.NodeName = "n" },
		"an empty struct":          func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{} },
		"a finalizer (a set)":      func(p *corev1.Pod) { p.Finalizers = []string{"f"} },
		"a toleration added":       func(p *corev1.Pod) { p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{}) },
		"a label's key, not value": func(p *corev1.Pod) { p.Labels = map[string]string{"x": "app"} },
	}
	for name, change := range differ {
		p := base()
		change(p)
		if got := key(p); got == want {
			t.Errorf("%s: the shape did not change: %q", name, got)
		}
	}
	sent := base()
	sent.ManagedFields = []metav1.ManagedFieldsEntry{}
	if _, ok := fieldProbe(t).CreateShape(tg.write(), sent); ok {
		t.Error("CreateShape() shaped a create that sends managed fields")
	}
	invalid := base()
	invalid.Labels["app"] = "\xff"
	if _, ok := fieldProbe(t).CreateShape(tg.write(), invalid); ok {
		t.Error("CreateShape() shaped an object with invalid UTF-8")
	}
}
