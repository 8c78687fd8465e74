package fakeapiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/compactjson"
	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/fieldmanager"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// statusWrite is one random write of a node's or a pod's status (or, rarely, of its main
// resource) that statusWrites makes.
type statusWrite struct {
	res     *resource
	ns      string
	name    string
	manager string
	// sub is the subresource written (shapeWrites' writes; statusWrites' are all of status).
	sub string
	// pt is the patch's type; types.ApplyPatchType is a server-side apply of the status.
	pt   types.PatchType
	body []byte
	desc string
}

// statusWrites makes the random writes of TestStatusScalarUpdatesMatchTheLibrary from rng: node
// heartbeats (the conditions' times change, a condition's status and transition time now and
// then), conditions added, removed and reordered, duplicate addresses, the images (an atomic
// list) and the capacity changed; pod status transitions (phase, conditions, container statuses,
// an atomic list, pod IPs, a list keyed by IP, host IPs); patches by other managers, which take
// fields over, and applies, which share them; merge patches (lists replaced whole) and
// strategic merge patches (lists merged by key).
type statusWrites struct {
	rng *rand.Rand
}

func (g statusWrites) pick(options ...string) string { return options[g.rng.Intn(len(options))] }

// conditions returns a list of conditions of the types given, in an order and with fields that
// mostly stay as they were.
func (g statusWrites) conditions(kinds []string, reasons bool) []map[string]any {
	order := append([]string(nil), kinds...)
	switch g.rng.Intn(10) {
	case 0: // reordered
		g.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	case 1: // one left out
		i := g.rng.Intn(len(order))
		order = append(order[:i:i], order[i+1:]...)
	case 2: // one twice
		order = append(order, order[g.rng.Intn(len(order))])
	}
	probe := g.rng.Intn(6) != 0
	var out []map[string]any
	for _, kind := range order {
		c := map[string]any{
			"type":               kind,
			"status":             g.pick("True", "True", "True", "False"),
			"lastTransitionTime": "2026-01-01T00:00:0" + g.pick("0", "0", "1") + "Z",
		}
		if reasons {
			c["lastHeartbeatTime"] = fmt.Sprintf("2026-01-01T00:%02d:%02dZ", g.rng.Intn(3), g.rng.Intn(60))
		} else if probe {
			c["lastProbeTime"] = nil
		}
		if g.rng.Intn(20) != 0 {
			c["reason"] = kind + "Reason"
			c["message"] = kind + " " + g.pick("is fine", "is fine", "is not")
		}
		out = append(out, c)
	}
	return out
}

func (g statusWrites) next(step int) statusWrite {
	node := g.rng.Intn(2) == 0
	w := statusWrite{manager: g.pick("kubelet", "kubelet", "kubelet", "kubelet", "kubelet", "kubelet", "kubelet", "controller", "applier")}
	pt := types.StrategicMergePatchType
	if g.rng.Intn(3) == 0 {
		pt = types.MergePatchType
	}
	if w.manager == "applier" {
		pt = types.ApplyPatchType
	}
	status := map[string]any{}
	if node {
		w.res, w.name = nodesTarget, "node-1"
		status["conditions"] = g.conditions([]string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}, true)
		switch g.rng.Intn(8) {
		case 0:
			status["addresses"] = []map[string]any{{"type": "InternalIP", "address": "10.0.0." + g.pick("1", "2")}, {"type": "Hostname", "address": "node-1"}}
		case 1: // duplicate keys, as a node with two internal IPs has
			status["addresses"] = []map[string]any{{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "InternalIP", "address": "10.0.0." + g.pick("2", "3")}}
		case 2:
			status["images"] = []map[string]any{{"names": []string{"nginx:1.27"}, "sizeBytes": 1000 + g.rng.Intn(2)}}
		case 3:
			status["capacity"] = map[string]any{"cpu": g.pick("2", "4"), "pods": "110"}
		}
	} else {
		w.res, w.ns, w.name = podsTarget, "default", "web"
		status["phase"] = g.pick("Running", "Running", "Running", "Pending")
		status["conditions"] = g.conditions([]string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}, false)
		state := map[string]any{"running": map[string]any{"startedAt": "2026-01-01T00:00:0" + g.pick("1", "2") + "Z"}}
		if g.rng.Intn(5) == 0 {
			state = map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}
		}
		status["containerStatuses"] = []map[string]any{{"name": "app", "image": "nginx:1.27", "imageID": "", "ready": g.rng.Intn(4) != 0,
			"restartCount": g.rng.Intn(2), "started": true, "state": state}}
		ip := "10.1.0." + g.pick("5", "5", "5", "6")
		status["podIP"] = ip
		status["podIPs"] = []map[string]any{{"ip": ip}}
		if g.rng.Intn(6) == 0 {
			status["podIPs"] = []map[string]any{{"ip": ip}, {"ip": "fd00::" + g.pick("5", "6")}}
		}
		status["hostIP"] = "192.168.0.1"
		status["hostIPs"] = []map[string]any{{"ip": "192.168.0." + g.pick("1", "1", "2")}}
		status["startTime"] = "2026-01-01T00:00:00Z"
	}
	if g.rng.Intn(10) == 0 {
		delete(status, "conditions")
	}
	doc := map[string]any{"status": status}
	if pt == types.ApplyPatchType {
		// An apply of the conditions alone, which shares them with their owners when their
		// values are the stored ones.
		doc = map[string]any{"apiVersion": "v1", "kind": w.res.kind, "metadata": map[string]any{"name": w.name, "namespace": w.ns},
			"status": map[string]any{"conditions": status["conditions"]}}
	}
	if g.rng.Intn(12) == 0 {
		// A label through the status subresource: the write is walked whole.
		doc["metadata"] = map[string]any{"labels": map[string]any{"tier": g.pick("a", "b")}}
		if pt == types.ApplyPatchType {
			doc["metadata"].(map[string]any)["name"], doc["metadata"].(map[string]any)["namespace"] = w.name, w.ns
		}
	}
	w.pt = pt
	w.body, _ = json.Marshal(doc)
	w.desc = fmt.Sprintf("step %d: %s %s %s %s", step, w.manager, w.res.name, pt, w.body)
	return w
}

// applyCurrent applies, through t, the stored values of the conditions' type, status and times
// (so that the applier shares them with their owners), or body when the object has none.
func applyCurrent(s *Server, t target, body []byte) error {
	var e *entry
	_ = s.store.locked(func() error { e, _ = s.store.get(t.res, t.namespace, t.name); return nil })
	var stored struct {
		Status struct {
			Conditions []map[string]any `json:"conditions"`
		} `json:"status"`
	}
	if e != nil {
		if err := json.Unmarshal(e.raw, &stored); err != nil {
			return err
		}
	}
	if len(stored.Status.Conditions) > 0 {
		var conditions []map[string]any
		for _, c := range stored.Status.Conditions {
			kept := map[string]any{}
			for _, k := range []string{"type", "status", "lastHeartbeatTime", "lastTransitionTime"} {
				if v, ok := c[k]; ok && v != nil {
					kept[k] = v
				}
			}
			conditions = append(conditions, kept)
		}
		var err error
		body, err = json.Marshal(map[string]any{"apiVersion": "v1", "kind": t.res.kind, "metadata": map[string]any{"name": t.name, "namespace": t.namespace},
			"status": map[string]any{"conditions": conditions}})
		if err != nil {
			return err
		}
	}
	return applyThrough(s, t, body)
}

// applyThrough sends an apply of body through t as the HTTP path does.
func applyThrough(s *Server, t target, body []byte) error {
	r := httptest.NewRequest(http.MethodPatch, "/?fieldManager="+t.manager, bytes.NewReader(body))
	r.Header.Set("Content-Type", string(types.ApplyPatchType))
	w := httptest.NewRecorder()
	if err := s.apply(w, r, t); err != nil {
		return err
	}
	if w.Code >= 300 {
		return fmt.Errorf("apply: %d %s", w.Code, w.Body)
	}
	return nil
}

// TestStatusScalarUpdatesMatchTheLibrary makes random sequences of status writes of a node and a
// pod (statusWrites) on two servers, one whose writes may take statusScalarUpdate (and every
// other shortcut of the field manager) and one that runs the library's field manager over the
// whole objects on every write, and wants every stored object, managed fields and their times
// and order included, to be the same byte for byte, and the errors the same, after every write.
func TestStatusScalarUpdatesMatchTheLibrary(t *testing.T) {
	defer fieldmanager.Shortcuts.Set(true)
	ctx := context.Background()
	seeds, steps := differentialSeeds(40), int64(40)
	taken := int64(0)
	for seed := int64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewSource(seed))
		gen := statusWrites{rng: rng}
		servers := newServerPair(ctx, t, []corev1.Container{{Name: "app", Image: "nginx:1.27"}}...)
		for step := range int(steps) {
			w := gen.next(step)
			tick := time.Duration(500+rng.Intn(2)*700) * time.Millisecond
			before := fieldmanager.ScalarUpdates.Load()
			servers.write(ctx, t, w, "status", tick, fmt.Sprintf("seed %d %s", seed, w.desc))
			taken += fieldmanager.ScalarUpdates.Load() - before
		}
	}
	t.Logf("statusScalarUpdate served %d of %d writes", taken, seeds*steps)
	// The comparison means something only if the shortcut served many of the writes.
	if !raceEnabled && taken < seeds*steps/10 {
		t.Errorf("statusScalarUpdate served %d writes, want at least %d", taken, seeds*steps/10)
	}
}

// TestStatusScalarUpdateServesHeartbeats wants the status writes the kubelet makes most, with
// nothing but values changed (a node's heartbeat, a pod's container restarting, a pod IP), to
// take statusScalarUpdate, and writes that change a list's elements or a field another manager
// owns not to.
func TestStatusScalarUpdateServesHeartbeats(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	d := s.Direct("kubelet/v1.35.4")
	// The node's labels give it managed fields: the field manager tracks no update of an
	// object that has none.
	if _, err := d.CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}); err != nil {
		t.Fatal(err)
	}
	heartbeat := func(at string) string {
		return `{"status":{"conditions":[{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"` + at + `","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletHasSufficientMemory"},` +
			`{"type":"Ready","status":"True","lastHeartbeatTime":"` + at + `","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"KubeletReady"}],` +
			`"addresses":[{"type":"InternalIP","address":"10.0.0.1"},{"type":"Hostname","address":"node-1"}],"images":[{"names":["nginx:1.27"],"sizeBytes":1000}]}}`
	}
	podStatus := func(restarts int, ip string, conditions string) string {
		return fmt.Sprintf(`{"status":{"phase":"Running","conditions":%s,"podIP":%q,"podIPs":[{"ip":%q}],`+
			`"containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"","ready":true,"restartCount":%d,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}}`,
			conditions, ip, ip, restarts)
	}
	ready := `[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]`
	for _, tc := range []struct {
		name    string
		manager string
		res     *resource
		body    string
		served  bool
	}{
		{"the first heartbeat", "kubelet", nodesTarget, heartbeat("2026-01-01T00:00:00Z"), false},
		{"a heartbeat", "kubelet", nodesTarget, heartbeat("2026-01-01T00:00:10Z"), true},
		{"another heartbeat", "kubelet", nodesTarget, heartbeat("2026-01-01T00:00:20Z"), true},
		{"an address changed", "kubelet", nodesTarget, strings2(heartbeat("2026-01-01T00:00:30Z"), "10.0.0.1", "10.0.0.2"), true},
		{"an image's size changed (an atomic list)", "kubelet", nodesTarget, strings2(heartbeat("2026-01-01T00:00:40Z"), "1000", "1001"), true},
		{"a reason added", "kubelet", nodesTarget, strings2(heartbeat("2026-01-01T00:00:50Z"), `"reason":"KubeletReady"`, `"reason":"KubeletReady","message":"ok"`), false},
		{"a heartbeat by another manager", "controller", nodesTarget, heartbeat("2026-01-01T00:01:00Z"), false},
		{"the first pod status", "kubelet", podsTarget, podStatus(0, "10.1.0.5", ready), false},
		{"a container restarted", "kubelet", podsTarget, podStatus(1, "10.1.0.5", ready), true},
		{"a new pod IP", "kubelet", podsTarget, podStatus(1, "10.1.0.6", ready), false}, // podIPs' key changes
		{"a condition's time", "kubelet", podsTarget, podStatus(1, "10.1.0.6", strings2(ready, "00:00:01Z", "00:00:02Z")), true},
		{"the conditions reordered", "kubelet", podsTarget, `{"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:03Z"}]}}`, false},
	} {
		res := tc.res
		ns, name := "", "node-1"
		if res == podsTarget {
			ns, name = "default", "web"
		}
		before := fieldmanager.ScalarUpdates.Load()
		if _, err := s.Direct(tc.manager+"/v1").patch(ctx, s.Direct(tc.manager+"/v1").target(res, ns, name, "status"), types.MergePatchType, []byte(tc.body)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := fieldmanager.ScalarUpdates.Load()-before == 1; got != tc.served {
			t.Errorf("%s: served by statusScalarUpdate = %v, want %v", tc.name, got, tc.served)
		}
		clk.Step(10 * time.Second)
	}
}

// strings2 replaces the one occurrence of old in s with new.
func strings2(s, old, new string) string {
	i := bytes.Index([]byte(s), []byte(old))
	if i < 0 {
		panic(fmt.Sprintf("%q not in %q", old, s))
	}
	return s[:i] + new + s[i+len(old):]
}

// TestChangedScalarsNamesListElementsByKey wants the paths changedScalars reports inside an
// associative list to name the element by its keys, as the library's field sets do, and an
// atomic list's change to be reported at the list.
func TestChangedScalarsNamesListElementsByKey(t *testing.T) {
	live := &corev1.Node{Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: "Ready", Status: "True"}, {Type: "DiskPressure", Status: "False"}},
		Images:     []corev1.ContainerImage{{Names: []string{"a"}, SizeBytes: 1}},
		Addresses:  []corev1.NodeAddress{{Type: "InternalIP", Address: "10.0.0.1"}, {Type: "InternalIP", Address: "10.0.0.2"}},
	}, Spec: corev1.NodeSpec{PodCIDRs: []string{"10.0.0.0/24"}}}
	obj := live.DeepCopy()
	obj.Status.Conditions[0].Status = "False"
	obj.Status.Images[0].SizeBytes = 2
	changed, ok := fieldProbe(t).ChangedScalars(nodesTarget.fields, live, obj)
	if !ok {
		t.Fatal("ChangedScalars() refused a change of a condition's status and of an image's size")
	}
	var got []string
	for _, p := range changed {
		got = append(got, p.String())
	}
	want := []string{`.status.conditions[type="Ready"].status`, `.status.images`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changed paths (-want +got):\n%s", diff)
	}
	for name, change := range map[string]func(*corev1.Node){
		"an element added": func(n *corev1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: "PIDPressure"})
		},
		"an element removed": func(n *corev1.Node) { n.Status.Conditions = n.Status.Conditions[:1] },
		"elements reordered": func(n *corev1.Node) {
			n.Status.Conditions[0], n.Status.Conditions[1] = n.Status.Conditions[1], n.Status.Conditions[0]
		},
		"a key changed":    func(n *corev1.Node) { n.Status.Conditions[1].Type = "PIDPressure" },
		"duplicate keys":   func(n *corev1.Node) { n.Status.Addresses[1].Address = "10.0.0.3" },
		"a field added":    func(n *corev1.Node) { n.Status.Conditions[0].Reason = "r" },
		"a set of scalars": func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.0.1.0/24"} },
		"a list emptied":   func(n *corev1.Node) { n.Status.Images = []corev1.ContainerImage{} },
		"a scalar's kind":  func(n *corev1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.Now() },
		"a map's new key":  func(n *corev1.Node) { n.Status.Capacity = corev1.ResourceList{"cpu": {}} },
	} {
		obj := live.DeepCopy()
		change(obj)
		if changed, ok := fieldProbe(t).ChangedScalars(nodesTarget.fields, live, obj); ok {
			t.Errorf("%s: ChangedScalars() = %v, true; want false", name, changed)
		}
	}
}

// serverPair is the differential tests' two servers: [0] runs the library's field manager over
// whole objects on every write, [1] may take the field manager's shortcuts.
type serverPair [2]struct {
	s   *Server
	clk *clocktesting.FakeClock
}

// newServerPair starts the pair, each with the node node-1 (labelled, so that it has managed
// fields) and the pod default/web of the containers given.
func newServerPair(ctx context.Context, t *testing.T, containers ...corev1.Container) *serverPair {
	t.Helper()
	var servers serverPair
	for i := range servers {
		clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
		s, err := New(Options{Clock: clk, Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		servers[i].s, servers[i].clk = s, clk
		if _, err := s.Direct("kubelet/v1").CreateNode(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1",
			Labels: map[string]string{"kubernetes.io/hostname": "node-1"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: corev1.PodSpec{NodeName: "node-1", Containers: containers}}); err != nil {
			t.Fatal(err)
		}
	}
	return &servers
}

// write makes w through the subresource sub on both servers (the library's path on [0], the
// shortcuts allowed on [1]) and steps their clocks by tick, then fails t, naming the write, if
// the errors or the stored node and pod, managed fields and their times included, differ.
func (servers *serverPair) write(ctx context.Context, t *testing.T, w statusWrite, sub string, tick time.Duration, name string) {
	t.Helper()
	var errs [2]error
	for i, srv := range servers {
		fieldmanager.Shortcuts.Set(i == 1)
		d := srv.s.Direct(w.manager + "/v1")
		tg := d.target(w.res, w.ns, w.name, sub)
		if w.pt == types.ApplyPatchType {
			errs[i] = applyCurrent(srv.s, tg, w.body)
		} else {
			_, errs[i] = d.patch(ctx, tg, w.pt, w.body)
		}
		srv.clk.Step(tick)
	}
	fieldmanager.Shortcuts.Set(true)
	if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
		t.Errorf("%s: error = %v on the library's path, %v with the shortcuts", name, errs[0], errs[1])
	}
	for _, key := range []statusWrite{{res: nodesTarget, name: "node-1"}, {res: podsTarget, ns: "default", name: "web"}} {
		var raw [2]string
		for i, srv := range servers {
			raw[i] = storedRaw(srv.s, key.res, key.ns, key.name)
		}
		if diff := cmp.Diff(raw[0], raw[1]); diff != "" {
			t.Fatalf("%s: stored %s (-library +shortcuts):\n%s", name, key.res.name, diff)
		}
	}
}

// TestStatusScalarUpdateReadsTheStoredEncoding wants statusScalarUpdate to give the same answer,
// served or not and the same managed fields, whether it reads the live pod's status from a
// stored encoding, encodes the live status alone (liveStatus: the store keeps no pod's encoding)
// or encodes both cuts: for status writes it serves (a condition's time, the pod's IP) and writes
// it refuses (nothing changed, a field added, another manager's, the pod's IP that is not valid
// UTF-8 made valid, a pod whose UID is not valid UTF-8), on the stored pod and on one whose
// managed fields hold an entry of a manager whose name is not valid UTF-8. The stored encoding
// is checked to be the live pod's.
func TestStatusScalarUpdateReadsTheStoredEncoding(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC))
	s, err := New(Options{Clock: clk, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Direct("kubectl/v1").CreatePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}); err != nil {
		t.Fatal(err)
	}
	d := s.Direct("kubelet/v1")
	body := `{"status":{"phase":"Running","podIP":"10.0.0.1","conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	if _, err := d.patch(ctx, d.target(podsTarget, "default", "web", "status"), types.StrategicMergePatchType, []byte(body)); err != nil {
		t.Fatal(err)
	}
	var stored *entry
	_ = s.store.locked(func() error { stored, _ = s.store.get(podsTarget, "default", "web"); return nil })
	if enc, err := json.Marshal(stored.obj); err != nil || !stored.sameEncoding(enc) {
		t.Fatalf("the stored encoding is not the stored pod's (%v):\n%s\n%s", err, stored.encoded(), enc)
	}
	pod := stored.obj.(*corev1.Pod)
	withManager := pod.DeepCopy()
	withManager.ManagedFields = append(withManager.ManagedFields, metav1.ManagedFieldsEntry{Manager: "m\xff", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", Time: withManager.ManagedFields[0].Time, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:nodeName":{}}}`)}})
	invalid := pod.DeepCopy()
	invalid.Status.PodIP = "10.0.0.1\xff"
	invalidUID := pod.DeepCopy()
	invalidUID.UID = "52fdfc07\xff"
	writes := []struct {
		name    string
		manager string
		serves  bool
		live    *corev1.Pod
		change  func(*corev1.Pod)
	}{
		{"a condition's time", "kubelet", true, nil, func(p *corev1.Pod) {
			p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(clk.Now().Add(time.Minute))
		}},
		{"the pod's IP", "kubelet", true, nil, func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.2" }},
		{"nothing", "kubelet", false, nil, func(*corev1.Pod) {}},
		{"a field added", "kubelet", false, nil, func(p *corev1.Pod) { p.Status.Message = "m" }},
		{"another manager's", "controller", false, nil, func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.2" }},
		{"the pod's IP made valid UTF-8", "kubelet", false, invalid, func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.1" }},
		{"the pod's IP, its UID not valid UTF-8", "kubelet", false, invalidUID, func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.2" }},
	}
	defer fieldmanager.LiveStatusAlone.Set(true)
	for _, live := range []*corev1.Pod{pod, withManager} {
		for _, w := range writes {
			l := live
			if w.live != nil {
				l = w.live
			}
			raw, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s, %d managers", w.name, len(l.ManagedFields))
			tg := target{res: podsTarget, namespace: "default", name: "web", subresource: "status", manager: w.manager}
			// Both cuts encoded, the live status encoded alone (a stored pod keeps no encoding),
			// the stored encoding read.
			var served [3]bool
			var out [3][]metav1.ManagedFieldsEntry
			for i, r := range [][]byte{nil, nil, raw} {
				fieldmanager.LiveStatusAlone.Set(i == 1)
				obj := l.DeepCopy()
				w.change(obj)
				liveCut, objCut, ok := fieldProbe(t).StatusOnly(tg.write(), l, obj)
				if !ok {
					t.Fatalf("%s: StatusOnly() refused the write", name)
				}
				served[i] = fieldProbe(t).StatusScalarUpdate(tg.write(), liveCut, objCut, r, obj)
				out[i] = obj.ManagedFields
			}
			if ok := fieldProbe(t).ReadsStoredStatus(raw); ok == compactjson.HasReplacementEscape(raw) {
				t.Fatalf("%s: ReadsStoredStatus() = %v, want the stored status read where the encoding has no escape of U+FFFD", name, ok)
			}
			if served[0] != w.serves {
				t.Errorf("%s: StatusScalarUpdate() encoding both cuts = %v, want %v", name, served[0], w.serves)
			}
			for i, way := range []string{"", "encoding the live status alone", "with the stored encoding"} {
				if i == 0 {
					continue
				}
				if served[i] != served[0] {
					t.Errorf("%s: StatusScalarUpdate() = %v %s, %v encoding both cuts", name, served[i], way, served[0])
				}
				if diff := cmp.Diff(out[0], out[i]); diff != "" {
					t.Errorf("%s: managed fields (-encoding both cuts +%s):\n%s", name, way, diff)
				}
			}
		}
	}
}
