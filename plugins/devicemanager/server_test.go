package devicemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/plugins/devicemanager"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/sim/sampleplugin"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The sample device plugin registers on kubelet.sock; its devices reach capacity and
// allocatable, a pod gets devices, unhealthy devices lower allocatable, and a stopped plugin
// leaves its resource with allocatable 0.
func TestSamplePluginRegistersOnKubeletSock(t *testing.T) {
	root, err := os.MkdirTemp("", "dm")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	dir := filepath.Join(root, "device-plugins")

	events := make(chan trace.Event, 64)
	tracer := trace.Func(func(e trace.Event) { events <- e })
	m, err := devicemanager.New(devicemanager.Options{Clock: clock.RealClock{}, Tracer: tracer, Checkpoint: devicemanager.FileCheckpoint{Path: filepath.Join(dir, devicemanager.CheckpointFile)}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := devicemanager.NewHandler(devicemanager.HandlerOptions{Manager: m, Connector: devicemanager.GRPC{Dial: pluginmanager.DialUnix}, Dir: dir, Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devicemanager.NewServer(devicemanager.ServerOptions{Handler: h, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Run(ctx); err != nil {
			t.Error(err)
		}
	}()

	p, err := sampleplugin.NewDevice(sampleplugin.DeviceOptions{Dir: dir, Resource: "example.com/gpu", Count: 4, PreferredAllocation: true})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := p.Run(pctx); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, events, trace.KindDevices, "healthy=4 unhealthy=0")
	check(t, h, "4/4")

	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpu", UID: "u1"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "c", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"example.com/gpu": *resource.NewQuantity(2, resource.DecimalSI)}},
	}}}}
	if ok, _, msg := h.Admit(ctx, pod); !ok {
		t.Fatalf("pod rejected: %s", msg)
	}
	waitFor(t, events, trace.KindAllocate, "devices=gpu-2,gpu-3")

	if err := p.SetHealth(false, "gpu-0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, events, trace.KindDevices, "healthy=3 unhealthy=1")
	check(t, h, "4/3")

	stop()
	waitFor(t, events, trace.KindStopped, "example.com/gpu")
	check(t, h, "4/0")
	if _, err := os.Stat(filepath.Join(dir, devicemanager.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
}

func check(t *testing.T, h *devicemanager.Handler, want string) {
	t.Helper()
	c, a, _ := h.GetCapacity()
	cq, aq := c["example.com/gpu"], a["example.com/gpu"]
	if got := cq.String() + "/" + aq.String(); got != want {
		t.Fatalf("capacity/allocatable = %s, want %s", got, want)
	}
}

func waitFor(t *testing.T, events <-chan trace.Event, kind trace.Kind, msg string) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case e := <-events:
			if e.Event == kind && strings.Contains(e.Message, msg) {
				return
			}
		case <-timeout.C:
			t.Fatalf("no %s event with %q", kind, msg)
		}
	}
}

// TestRunRefusesASocketPathTooLong checks that a directory whose kubelet.sock cannot be a unix
// socket's path is refused with the path and the limit, not Linux's bare "invalid argument".
func TestRunRefusesASocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100), "device-plugins")
	m, err := devicemanager.New(devicemanager.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, Checkpoint: devicemanager.FileCheckpoint{Path: filepath.Join(dir, devicemanager.CheckpointFile)}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := devicemanager.NewHandler(devicemanager.HandlerOptions{Manager: m, Connector: devicemanager.GRPC{Dial: pluginmanager.DialUnix}, Dir: dir, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devicemanager.NewServer(devicemanager.ServerOptions{Handler: h, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, devicemanager.KubeletSocket)) || !strings.Contains(err.Error(), "107") {
		t.Errorf("Run() = %v, want an error naming the socket's path and the limit", err)
	}
}
