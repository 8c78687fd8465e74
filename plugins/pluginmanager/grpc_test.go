package pluginmanager_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet/filewatch"
	"github.com/minikubelet/minikubelet/plugins/pluginmanager"
	"github.com/minikubelet/minikubelet/plugins/pluginwatcher"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// registrar serves the pluginregistration v1 API the way node-driver-registrar does.
type registrar struct {
	registerapi.UnimplementedRegistrationServer
	info     *registerapi.PluginInfo
	statuses chan *registerapi.RegistrationStatus
}

func (r *registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return r.info, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	r.statuses <- s
	return &registerapi.RegistrationStatusResponse{}, nil
}

// chanHandler reports every handler call on a channel.
type chanHandler struct{ calls chan string }

func (h chanHandler) ValidatePlugin(name, endpoint string, _ []string) error {
	h.calls <- "validate " + name + " " + endpoint
	return nil
}

func (h chanHandler) RegisterPlugin(name, endpoint string, _ []string, _ *time.Duration) error {
	h.calls <- "register " + name + " " + endpoint
	return nil
}

func (h chanHandler) DeRegisterPlugin(name, endpoint string) {
	h.calls <- "deregister " + name + " " + endpoint
}

// A real registrar on a real socket registers through the watcher, the reconciler and gRPC, and
// removing its socket deregisters it: the kubelet's TestPluginManager, at depths 0 and 1.
func TestRunRegistersOverGRPC(t *testing.T) {
	root, err := os.MkdirTemp("", "pm")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(root) }()
	dir := filepath.Join(root, "plugins_registry")

	n := 0
	m, err := pluginmanager.New(pluginmanager.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, NewID: func() string { n++; return string(rune('a' + n)) }})
	if err != nil {
		t.Fatal(err)
	}
	h := chanHandler{calls: make(chan string, 16)}
	m.AddHandler(registerapi.CSIPlugin, h)
	r, err := pluginmanager.NewRunner(pluginmanager.RunnerOptions{Manager: m, Clock: clock.RealClock{}, Dialer: pluginmanager.GRPCDialer{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pluginwatcher.New(pluginwatcher.Options{Dir: dir, FS: pluginwatcher.OS{}, Desired: m.Desired(), Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	// No inotify instance left on a shared machine fails the test here, not with a wait.
	fw, err := filewatch.NewInotify()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	ready := make(chan struct{})
	wg.Add(3)
	// A watcher that cannot start never closes ready: its error ends the test instead of a
	// wait with no end.
	watchErr := make(chan error, 1)
	go func() { defer wg.Done(); _ = fw.Run(ctx) }()
	go func() { defer wg.Done(); watchErr <- pluginwatcher.Run(ctx, w, fw.Watch(), r.Lock, ready) }()
	go func() { defer wg.Done(); _ = r.Run(ctx) }()
	defer func() { cancel(); wg.Wait() }()
	select {
	case <-ready:
	case err := <-watchErr:
		t.Fatalf("plugin watcher did not start: %v", err)
	}

	for _, sub := range []string{"", "depth1"} {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(d, "example.csi.k8s.io-reg.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		reg := &registrar{
			info:     &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: "example.csi.k8s.io", Endpoint: "/csi/csi.sock", SupportedVersions: []string{"1.0.0"}},
			statuses: make(chan *registerapi.RegistrationStatus, 4),
		}
		srv := grpc.NewServer()
		registerapi.RegisterRegistrationServer(srv, reg)
		served := make(chan struct{})
		go func() { defer close(served); _ = srv.Serve(l) }()

		expectCall(t, h.calls, "validate example.csi.k8s.io /csi/csi.sock")
		expectCall(t, h.calls, "register example.csi.k8s.io /csi/csi.sock")
		select {
		case s := <-reg.statuses:
			if !s.PluginRegistered || s.Error != "" {
				t.Fatalf("status = %v, want registered", s)
			}
		case <-time.After(time.Minute): // 10x a registration on a loaded machine
			t.Fatal("no registration status")
		}
		srv.Stop() // closes the listener, which removes the socket
		<-served
		expectCall(t, h.calls, "deregister example.csi.k8s.io /csi/csi.sock")
	}
}

func expectCall(t *testing.T, calls <-chan string, want string) {
	t.Helper()
	select {
	case got := <-calls:
		if got != want {
			t.Fatalf("handler call %q, want %q", got, want)
		}
	case <-time.After(time.Minute): // 10x a reconciler pass and a call on a loaded machine
		t.Fatalf("no handler call %q", want)
	}
}
