package devicemanager

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/podtest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// memCheckpoint keeps the checkpoint in memory.
type memCheckpoint struct{ data []byte }

func (c *memCheckpoint) Write(b []byte) error  { c.data = append([]byte(nil), b...); return nil }
func (c *memCheckpoint) Read() ([]byte, error) { return c.data, nil }

// fakePlugin answers Allocate with one env var per device and prefers the devices in prefer.
type fakePlugin struct {
	prefer    []string
	allocated [][]string
}

func (p *fakePlugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	ids := req.ContainerRequests[0].DevicesIds
	p.allocated = append(p.allocated, ids)
	return &pluginapi.AllocateResponse{ContainerResponses: []*pluginapi.ContainerAllocateResponse{{Envs: map[string]string{"DEVICES": strings.Join(ids, ",")}}}}, nil
}

func (p *fakePlugin) GetPreferredAllocation(context.Context, *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return &pluginapi.PreferredAllocationResponse{ContainerResponses: []*pluginapi.ContainerPreferredAllocationResponse{{DeviceIDs: p.prefer}}}, nil
}

func newManager(t *testing.T, cp *memCheckpoint) (*Manager, *vclock.Clock) {
	t.Helper()
	c := vclock.New(time.Unix(0, 0))
	m, err := New(Options{Clock: c, Tracer: trace.Discard, Checkpoint: cp})
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

func devs(spec string) []*pluginapi.Device {
	var out []*pluginapi.Device
	for _, f := range strings.Fields(spec) {
		id, h, _ := strings.Cut(f, ":")
		health := pluginapi.Healthy
		if h == "u" {
			health = pluginapi.Unhealthy
		}
		out = append(out, &pluginapi.Device{ID: id, Health: health})
	}
	return out
}

// counts renders GetCapacity as "resource capacity/allocatable ..." plus the removed resources.
func counts(m *Manager) string {
	c, a, removed := m.GetCapacity()
	var b strings.Builder
	for name, q := range c {
		al := a[name]
		b.WriteString(string(name) + " " + q.String() + "/" + al.String() + " ")
	}
	for _, r := range removed {
		b.WriteString("removed " + r + " ")
	}
	return strings.TrimSpace(b.String())
}

// The worked example of the kubelet's TestUpdateCapacityAllocatable, then the grace period.
func TestCapacityAllocatableAndGrace(t *testing.T) {
	m, clk := newManager(t, &memCheckpoint{})
	const r = "example.com/gpu"
	m.PluginConnected(r, "/dp/gpu.sock", &fakePlugin{}, &pluginapi.DevicePluginOptions{})
	steps := []struct {
		do   func()
		want string
	}{
		{func() { m.Update(r, devs("A B C:u")) }, r + " 3/2"},
		{func() { m.Update(r, devs("A B")) }, r + " 2/2"},
		{func() { m.Update(r, devs("A B:u C:u")) }, r + " 3/1"},
		{func() { m.PluginDisconnected(r, "/dp/other.sock") }, r + " 3/1"},
		{func() { m.PluginDisconnected(r, "/dp/gpu.sock") }, r + " 3/0"},
		{func() { clk.Advance(EndpointStopGracePeriod - time.Second) }, r + " 3/0"},
		{func() { clk.Advance(time.Second) }, "removed " + r},
		{func() {}, ""},
	}
	for i, s := range steps {
		s.do()
		if got := counts(m); got != s.want {
			t.Fatalf("step %d: %q, want %q", i, got, s.want)
		}
	}
}

func TestNextWakeIsGraceEnd(t *testing.T) {
	m, _ := newManager(t, &memCheckpoint{})
	if _, ok := m.NextWake(); ok {
		t.Fatal("nothing stopped, yet a wake")
	}
	m.PluginConnected("example.com/gpu", "/s", &fakePlugin{}, nil)
	m.PluginDisconnected("example.com/gpu", "/s")
	if at, ok := m.NextWake(); !ok || !at.Equal(time.Unix(0, 0).Add(EndpointStopGracePeriod)) {
		t.Fatalf("wake = %v %v", at, ok)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		version, name string
		wantMsg       string
	}{
		{"v1beta1", "nvidia.com/gpu", ""},
		{"v1beta1", "example.com/foo", ""},
		{"v1alpha", "example.com/foo", `requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]`},
		{"v1beta1", "gpu", `the ResourceName "gpu" is invalid`},
		{"v1beta1", "kubernetes.io/gpu", `the ResourceName "kubernetes.io/gpu" is invalid`},
		{"v1beta1", "foo.kubernetes.io/x", `the ResourceName "foo.kubernetes.io/x" is invalid`},
		{"v1beta1", "a/b/c", `the ResourceName "a/b/c" is invalid`},
		{"v1beta1", "example.com/-x", `the ResourceName "example.com/-x" is invalid`},
		{"v1beta1", "requests.example.com/x", `the ResourceName "requests.example.com/x" is invalid`},
	} {
		err := validateRegisterRequest(tc.version, tc.name)
		if tc.wantMsg == "" {
			if err != nil {
				t.Errorf("%s %s: %v", tc.version, tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidRegistration) || !strings.HasPrefix(err.Error(), tc.wantMsg) {
			t.Errorf("%s %s: err = %v, want %q", tc.version, tc.name, err, tc.wantMsg)
		}
	}
	if err := ValidatePlugin("example.com/gpu", []string{"v1alpha1"}); err == nil || !strings.Contains(err.Error(), "is not among plugin supported versions") {
		t.Errorf("plugin manager path, wrong version: %v", err)
	}
}

func gpuPod(uid string, n int64) *v1.Pod {
	return podtest.New(uid, podtest.UID(types.UID(uid)), podtest.Containers(podtest.Container("c", podtest.DefaultImage)),
		podtest.Limits(map[v1.ResourceName]string{"example.com/gpu": strconv.FormatInt(n, 10)}))
}

func TestAdmitAllocatesAndRejects(t *testing.T) {
	cp := &memCheckpoint{}
	m, _ := newManager(t, cp)
	p := &fakePlugin{prefer: []string{"D", "C"}}
	m.PluginConnected("example.com/gpu", "/s", p, &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true})
	m.Update("example.com/gpu", devs("A B C D E:u"))
	ctx := context.Background()
	if ok, _, msg := m.Admit(ctx, gpuPod("p1", 2)); !ok {
		t.Fatalf("p1 rejected: %s", msg)
	}
	ok, reason, msg := m.Admit(ctx, gpuPod("p2", 3))
	wantMsg := "Allocate failed due to requested number of devices unavailable for example.com/gpu. Requested: 3, Available: 2, which is unexpected"
	if ok || reason != AdmissionReason || msg != wantMsg {
		t.Fatalf("p2: %v %q %q, want a rejection %q", ok, reason, msg, wantMsg)
	}
	if ok, _, msg := m.Admit(ctx, gpuPod("p3", 2)); !ok {
		t.Fatalf("p3 rejected: %s", msg)
	}
	if diff := cmp.Diff([][]string{{"C", "D"}, {"A", "B"}}, p.allocated); diff != "" {
		t.Fatalf("allocations (-want +got):\n%s", diff)
	}

	// The checkpoint holds both pods and the healthy devices; a new manager restores the pods
	// and a stopped, empty endpoint.
	m2, _ := newManager(t, cp)
	if err := m2.ReadCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m.checkpoint().PodDeviceEntries, m2.checkpoint().PodDeviceEntries); diff != "" {
		t.Fatalf("restored pods (-want +got):\n%s", diff)
	}
	if got := counts(m2); got != "example.com/gpu 0/0" {
		t.Fatalf("after restart: %q", got)
	}
	if ok, _, msg := m2.Admit(ctx, gpuPod("p4", 1)); ok || !strings.Contains(msg, "no healthy devices present") {
		t.Fatalf("p4 after restart: %v %q", ok, msg)
	}
	m2.RemovePods(map[string]bool{"p1": true})
	if n := len(m2.checkpoint().PodDeviceEntries); n != 1 {
		t.Fatalf("entries after removing p3: %d", n)
	}
}

func TestCorruptCheckpoint(t *testing.T) {
	cp := &memCheckpoint{}
	m, _ := newManager(t, cp)
	m.PluginConnected("example.com/gpu", "/s", &fakePlugin{}, nil)
	m.Update("example.com/gpu", devs("A"))
	cp.data = []byte(strings.Replace(string(cp.data), `"A"`, `"B"`, 1))
	m2, _ := newManager(t, cp)
	if err := m2.ReadCheckpoint(); !errors.Is(err, ErrCorruptCheckpoint) {
		t.Fatalf("err = %v, want ErrCorruptCheckpoint", err)
	}
}
