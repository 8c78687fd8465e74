package fakeruntime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// TestCheckpointRestore: a runtime restored from a checkpoint reports the same sandboxes and
// containers (IDs, image references, which the checkpoint leaves out, start times, restart
// counts), and hands out new IDs after the old ones, as a
// CRI runtime's state survives a kubelet restart.
func TestCheckpointRestore(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	lat := Latencies{SandboxStart: time.Second, ImagePull: time.Second, ContainerStart: time.Second}
	rt, err := New(Options{Clock: clk, Latencies: lat, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	pod := podtest.New("web")
	if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(10 * time.Second))
	before, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(before.ContainerStatuses); n != 1 || before.ContainerStatuses[0].State != kubecontainer.ContainerStateRunning {
		t.Fatalf("before the checkpoint: %+v, want one running container", before.ContainerStatuses)
	}
	if got, want := before.ContainerStatuses[0].ImageRef, "fake://"+pod.Spec.Containers[0].Image; got != want {
		t.Errorf("the container's image reference is %q, want %q", got, want)
	}
	data, err := rt.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}

	restored, err := New(Options{Clock: clk, Latencies: lat, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.Restore(data); err != nil {
		t.Fatalf("Restore() = %v", err)
	}
	after, err := restored.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("pod status after a restore (-before +after):\n%s", diff)
	}
	again, err := restored.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("checkpoint of the restored runtime differs:\n%s\n%s", data, again)
	}

	other := podtest.New("other")
	if _, err := restored.SyncPod(other, &kubecontainer.PodStatus{}, nil); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(20 * time.Second))
	st, err := restored.GetPodStatus(other.UID, other.Name, other.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if got, old := st.Sandboxes[0].ID, before.Sandboxes[0].ID; got == old {
		t.Errorf("new sandbox ID %s reuses the restored one", got)
	}
	if got, old := st.ContainerStatuses[0].ID, before.ContainerStatuses[0].ID; got == old {
		t.Errorf("new container ID %s reuses the restored one", got)
	}
}

// TestRestoreRefusesBadCheckpoints: a checkpoint that does not decode or contradicts itself is
// refused whole, with the reason, and leaves the runtime empty.
func TestRestoreRefusesBadCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"not JSON", `{`, "decode checkpoint"},
		{"unknown field", `{"version":1,"pods":[],"extra":1}`, "unknown field"},
		{"version", `{"version":2,"pods":[]}`, "version 2"},
		{"no UID", `{"version":1,"lastContainer":1,"pods":[{"name":"a","namespace":"d"}]}`, "no UID"},
		{"pod twice", `{"version":1,"pods":[{"uid":"u"},{"uid":"u"}]}`, "twice"},
		{"container ID twice", `{"version":1,"lastContainer":2,"pods":[{"uid":"u","containers":[{"status":{"ID":"c-1"},"seq":1},{"status":{"ID":"c-1"},"seq":2}]}]}`, "twice"},
		{"counter behind", `{"version":1,"lastContainer":1,"pods":[{"uid":"u","containers":[{"status":{"ID":"c-2"},"seq":2}]}]}`, "outside 1..1"},
		{"sandbox counter behind", `{"version":1,"pods":[{"uid":"u","sandboxes":[{"status":{"ID":"s-1"},"seq":1}]}]}`, "outside 1..0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
			if err != nil {
				t.Fatal(err)
			}
			err = rt.Restore([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Restore(%s) = %v, want an error with %q", tc.data, err, tc.want)
			}
			if pods, _ := rt.GetPods(true); len(pods) != 0 {
				t.Errorf("after a refused restore the runtime has %d pods", len(pods))
			}
		})
	}
}

// FuzzRestore: Restore of any bytes returns an error or a runtime whose checkpoint restores to
// the same checkpoint.
func FuzzRestore(f *testing.F) {
	f.Add([]byte(`{"version":1,"lastContainer":1,"lastSandbox":1,"pods":[{"uid":"u","name":"a","namespace":"d","sandboxes":[{"status":{"ID":"s-000001","State":"ready"},"seq":1}],"containers":[{"status":{"ID":"c-000001","Name":"a","State":"running"},"seq":1}]}]}`))
	f.Add([]byte(`{"version":1,"pods":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rt, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if rt.Restore(data) != nil {
			return
		}
		cp, err := rt.Checkpoint()
		if err != nil {
			t.Fatalf("Checkpoint() after a restore = %v", err)
		}
		again, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Restore(cp); err != nil {
			t.Fatalf("Restore(Checkpoint()) = %v", err)
		}
		cp2, err := again.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		if string(cp) != string(cp2) {
			t.Errorf("checkpoint round trip differs:\n%s\n%s", cp, cp2)
		}
	})
}

// TestStateVersion: the state version stays while the checkpoint stays, and grows when a sync
// changes what a checkpoint holds (an ID handed out, an image pulled, a container created,
// started, exited), so that a keeper may skip the encoding of an unchanged state.
func TestStateVersion(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	lat := Latencies{SandboxStart: time.Second, ImagePull: time.Second, ContainerStart: time.Second, ContainerStop: time.Second}
	rt, err := New(Options{Clock: clk, Latencies: lat, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		version uint64
		data    string
	}
	take := func() point {
		t.Helper()
		v := rt.StateVersion()
		data, err := rt.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		if again := rt.StateVersion(); again != v {
			t.Fatalf("Checkpoint changed the state version from %d to %d", v, again)
		}
		return point{v, string(data)}
	}
	var points []point
	points = append(points, take(), take())
	pod := podtest.New("web")
	if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
		t.Fatal(err)
	}
	points = append(points, take())
	for s := 1; s <= 6; s++ {
		clk.Set(at(time.Duration(s) * time.Second / 2))
		points = append(points, take(), take())
	}
	if _, err := rt.KillPod(pod, nil, nil); err != nil {
		t.Fatal(err)
	}
	for s := 7; s <= 12; s++ {
		clk.Set(at(time.Duration(s) * time.Second / 2))
		points = append(points, take())
	}
	changes := 0
	for i := 1; i < len(points); i++ {
		prev, cur := points[i-1], points[i]
		switch {
		case cur.version < prev.version:
			t.Errorf("point %d: the state version went back from %d to %d", i, prev.version, cur.version)
		case cur.version == prev.version && cur.data != prev.data:
			t.Errorf("point %d: the checkpoint changed at the same state version %d:\n%s\n%s", i, cur.version, prev.data, cur.data)
		case cur.data != prev.data:
			changes++
		}
	}
	if changes < 4 {
		t.Errorf("the checkpoint changed %d times over a sync and a kill, want at least 4 (sandbox, pull, create, start, exit)", changes)
	}
}

// marshalCheckpoint is the checkpoint as Checkpoint encoded it with json.Marshal before
// AppendCheckpoint, kept as the reference AppendCheckpoint's bytes are held to.
func marshalCheckpoint(t *testing.T, r *Runtime) []byte {
	t.Helper()
	now := r.clock.Now()
	r.applyDue(now)
	cp := checkpoint{Version: checkpointVersion, LastContainer: r.lastContainer, LastSandbox: r.lastSandbox,
		Images: r.sentImages(now), Pods: []checkpointPod{}}
	for _, uid := range slices.Sorted(maps.Keys(r.pods)) {
		p := r.pods[uid]
		cpod := checkpointPod{UID: p.uid, Name: p.name, Namespace: p.namespace,
			Sandboxes: []checkpointSandbox{}, Containers: []checkpointContainer{}}
		for _, s := range p.sandboxes {
			cpod.Sandboxes = append(cpod.Sandboxes, checkpointSandbox{Status: s.status, Seq: s.seq, IP: s.ip})
		}
		for _, c := range p.containers {
			cpod.Containers = append(cpod.Containers, checkpointContainer{Status: c.status, Seq: c.seq})
		}
		cp.Pods = append(cp.Pods, cpod)
	}
	data, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAppendCheckpointAsMarshal: AppendCheckpoint appends json.Marshal's bytes of the
// checkpoint, without the Encoder's newline, after what the buffer held, at every point of pods'
// lives (none, starting, pulling, running, stopped, removed), with names and messages that
// JSON escapes; Checkpoint returns the same bytes. The pods have one container, several, or
// init containers and a sidecar, and a pod with more containers sorts before one with fewer
// and after one with none left, so that the one record AppendCheckpoint reuses from pod to
// pod is seen both to shrink and to grow.
func TestAppendCheckpointAsMarshal(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	lat := Latencies{SandboxStart: time.Second, ImagePull: 2 * time.Second, ContainerStart: time.Second, ContainerStop: time.Second}
	rt, err := New(Options{Clock: clk, Latencies: lat, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		want := marshalCheckpoint(t, rt)
		buf := bytes.NewBufferString("kept<&>")
		version, err := rt.AppendCheckpoint(buf)
		if err != nil {
			t.Fatalf("%s: AppendCheckpoint() = %v", when, err)
		}
		if got, ok := strings.CutPrefix(buf.String(), "kept<&>"); !ok || got != string(want) {
			t.Errorf("%s: AppendCheckpoint appended\n%s\nwant json.Marshal's\n%s", when, buf, want)
		}
		if version != rt.StateVersion() {
			t.Errorf("%s: AppendCheckpoint's version %d, want StateVersion %d", when, version, rt.StateVersion())
		}
		data, err := rt.Checkpoint()
		if err != nil || string(data) != string(want) {
			t.Errorf("%s: Checkpoint() = %s, %v; want %s", when, data, err, want)
		}
	}
	check("no pods")
	// UIDs in the order odd < early < many < web < zinit.
	early := podtest.New("early", podtest.RestartPolicy(v1.RestartPolicyNever), withExit("app", "1s", "0"))
	many := podtest.New("many", podtest.Containers(podtest.Container("app", podtest.DefaultImage),
		podtest.Container("logger", podtest.DefaultImage), podtest.Container("proxy", podtest.DefaultImage)))
	web := podtest.New("web")
	odd := podtest.New("odd")
	odd.Name, odd.Namespace, odd.UID = "a<b>&c\u2028é", "ns\"x", "uid-<odd>"
	odd.Spec.Containers[0].Name = "main<&>"
	zinit := podtest.New("zinit", withInit("i1", "i2"), withSidecar("s"))
	pods := []*v1.Pod{early, many, odd, web, zinit}
	for _, pod := range pods {
		if _, err := rt.SyncPod(pod, &kubecontainer.PodStatus{}, nil); err != nil {
			t.Fatal(err)
		}
		check(pod.Name + " synced")
	}
	for _, d := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond,
		4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second, 12 * time.Second} {
		clk.Set(at(d))
		for _, pod := range pods {
			status, err := rt.GetPodStatus(pod.UID, pod.Name, pod.Namespace)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.SyncPod(pod, status, nil); err != nil {
				t.Fatal(err)
			}
		}
		check(fmt.Sprintf("at %v", d))
	}
	// The record must have grown and shrunk from one pod to the next in UID order, or the
	// test shows nothing about its reuse.
	var grew, shrank bool
	prev := -1
	listed, err := rt.GetPods(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range listed {
		n := len(p.Containers)
		grew, shrank = grew || (prev >= 0 && n > prev), shrank || n < prev
		prev = n
	}
	if !grew || !shrank {
		t.Fatalf("container instances from pod to pod grew %v, shrank %v; want both", grew, shrank)
	}
	if _, err := rt.KillPod(odd, nil, nil); err != nil {
		t.Fatal(err)
	}
	check("odd killed")
	clk.Set(at(20 * time.Second))
	check("odd stopped")
	if err := rt.RemovePod(early.UID); err != nil {
		t.Fatal(err)
	}
	check("early removed")
	if err := rt.RemovePod(odd.UID); err != nil {
		t.Fatal(err)
	}
	check("odd removed")
	if _, err := rt.KillPod(many, nil, nil); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(30 * time.Second))
	if err := rt.RemovePod(many.UID); err != nil {
		t.Fatal(err)
	}
	if pods, _ := rt.GetPods(true); len(pods) != 2 {
		t.Fatalf("after three removals the runtime lists %d pods, want 2", len(pods))
	}
	check("many removed")
}

// TestAppendCheckpointFollowsRandomLives holds AppendCheckpoint to json.Marshal's bytes after
// every step of random pods' lives (randomLives), into one buffer reused from step to step as
// the kubelet's keeper reuses its buffers.
func TestAppendCheckpointFollowsRandomLives(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var buf bytes.Buffer
			randomLives(t, seed, 200, func(e *env) {
				want := marshalCheckpoint(t, e.rt)
				buf.Reset()
				if _, err := e.rt.AppendCheckpoint(&buf); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Fatalf("AppendCheckpoint appended\n%s\nwant json.Marshal's\n%s", buf.Bytes(), want)
				}
			})
		})
	}
}

// TestOpenPodsList: the pods are spliced in only where the encoding ends in the empty list of
// pods; an encoding with a field after the list, or without the list, is refused with its bytes
// and the buffer is left as it was.
func TestOpenPodsList(t *testing.T) {
	for _, tc := range []struct {
		name, encoded, want string
		ok                  bool
	}{
		{name: "pods last", encoded: `{"version":1,"pods":[]}` + "\n", want: `{"version":1,"pods":[`, ok: true},
		{name: "a field after the pods", encoded: `{"version":1,"pods":[],"extra":{}}` + "\n"},
		{name: "pods left out when empty", encoded: `{"version":1,"images":{"a":[]}}` + "\n"},
		{name: "pods null", encoded: `{"version":1,"pods":null}` + "\n"},
		{name: "another list last", encoded: `{"version":1,"more":[]}` + "\n"},
		{name: "only the end", encoded: `[]}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := bytes.NewBufferString("kept")
			buf.WriteString(tc.encoded)
			err := openPodsList(buf, len("kept"))
			if !tc.ok {
				if !errors.Is(err, errPodsNotLast) || !strings.Contains(err.Error(), strings.TrimSuffix(tc.encoded, "\n")) {
					t.Errorf("openPodsList(%q) = %v, want errPodsNotLast naming the encoding", tc.encoded, err)
				}
				if got := buf.String(); got != "kept"+tc.encoded {
					t.Errorf("openPodsList(%q) refused but left %q", tc.encoded, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("openPodsList(%q) = %v", tc.encoded, err)
			}
			if got := buf.String(); got != "kept"+tc.want {
				t.Errorf("openPodsList(%q) left %q, want %q", tc.encoded, got, "kept"+tc.want)
			}
		})
	}
}
