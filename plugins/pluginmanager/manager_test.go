package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

type world struct {
	t       *testing.T
	clock   *vclock.Clock
	m       *Manager
	dialer  *fakeDialer
	handler *fakeHandler
	// started counts the operations each pass started, by kind.
	started []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	c := vclock.New(time.Unix(1000, 0))
	m, err := New(Options{Clock: c, Tracer: trace.Discard, NewID: counter()})
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHandler{}
	m.AddHandler(registerapi.DevicePlugin, h)
	return &world{t: t, clock: c, m: m, dialer: &fakeDialer{plugins: map[string]*fakePlugin{}}, handler: h}
}

// pass advances to the next reconciler pass and runs the operations it starts, as replay does.
func (w *world) pass() {
	w.t.Helper()
	if at, _ := w.m.NextWake(); !at.IsZero() {
		w.clock.Set(at)
	}
	env := Env{Dialer: w.dialer, Books: w.m.Actual(), Tracer: trace.Discard}
	for _, op := range w.m.Reconcile() {
		w.started = append(w.started, op.Kind.String()+" "+op.Plugin.SocketPath)
		w.m.Finish(op, RunOperation(context.Background(), op, env))
	}
}

func (w *world) serve(path, name string) *fakePlugin {
	p := &fakePlugin{info: &registerapi.PluginInfo{Type: registerapi.DevicePlugin, Name: name, SupportedVersions: []string{"v1beta1"}}}
	w.dialer.plugins[path] = p
	if _, err := w.m.Desired().AddOrUpdatePlugin(path); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) remove(path string) {
	delete(w.dialer.plugins, path)
	w.m.Desired().RemovePlugin(path)
}

func TestReconcileRegisterThenUnregister(t *testing.T) {
	w := newWorld(t)
	p := w.serve("/r/gpu.sock", "example.com/gpu")
	w.pass()
	if diff := cmp.Diff([]string{"validate example.com/gpu /r/gpu.sock", "register example.com/gpu /r/gpu.sock"}, w.handler.calls); diff != "" {
		t.Fatalf("handler calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"true "}, p.notified); diff != "" {
		t.Fatalf("notifications (-want +got):\n%s", diff)
	}
	if got := w.m.Actual().GetRegisteredPlugins(); len(got) != 1 || got[0].ID != "id-1" || got[0].Name != "example.com/gpu" {
		t.Fatalf("actual state = %+v", got)
	}
	w.pass()
	if len(w.started) != 1 {
		t.Fatalf("a registered plugin is registered again: %v", w.started)
	}
	w.handler.calls = nil
	w.remove("/r/gpu.sock")
	w.pass()
	if diff := cmp.Diff([]string{"deregister example.com/gpu /r/gpu.sock"}, w.handler.calls); diff != "" {
		t.Fatalf("handler calls (-want +got):\n%s", diff)
	}
	if got := w.m.Actual().GetRegisteredPlugins(); len(got) != 0 {
		t.Fatalf("actual state after removal = %+v", got)
	}
}

// A recreated socket takes two passes: the first unregisters and finds the register busy.
func TestReconcileRecreatedSocketReRegisters(t *testing.T) {
	w := newWorld(t)
	w.serve("/r/gpu.sock", "example.com/gpu")
	w.pass()
	w.serve("/r/gpu.sock", "example.com/gpu")
	w.pass()
	w.pass()
	want := []string{"register /r/gpu.sock", "unregister /r/gpu.sock", "register /r/gpu.sock"}
	if diff := cmp.Diff(want, w.started); diff != "" {
		t.Fatalf("operations (-want +got):\n%s", diff)
	}
	if got := w.m.Actual().GetRegisteredPlugins(); len(got) != 1 || got[0].ID != "id-2" {
		t.Fatalf("actual state = %+v, want the new id", got)
	}
}

func TestReconcileFailedValidationBacksOff(t *testing.T) {
	w := newWorld(t)
	w.handler.validateErr = errors.New("bad version")
	p := w.serve("/r/gpu.sock", "example.com/gpu")
	start := w.clock.Now()
	var attempts []time.Duration
	for range 20 {
		n := len(w.started)
		w.pass()
		if len(w.started) > n {
			attempts = append(attempts, w.clock.Now().Sub(start))
		}
	}
	// Passes run every second; a register may start once the window since the last failure
	// (0.5s, 1s, 2s, 4s, 8s) has passed.
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	if diff := cmp.Diff(want, attempts); diff != "" {
		t.Fatalf("attempt times (-want +got):\n%s", diff)
	}
	if len(p.notified) == 0 || p.notified[0] != "false RegisterPlugin error -- plugin validation failed with err: bad version" {
		t.Fatalf("notifications = %q", p.notified)
	}
	if got := w.m.Actual().GetRegisteredPlugins(); len(got) != 0 {
		t.Fatalf("a plugin that failed validation is in the actual state: %+v", got)
	}
}

// A failed RegisterPlugin leaves the plugin in the actual state: it is not retried until the
// socket is recreated, and its removal still deregisters it.
func TestReconcileFailedRegisterIsNotRetried(t *testing.T) {
	w := newWorld(t)
	w.handler.registerErr = errors.New("no room")
	w.serve("/r/gpu.sock", "example.com/gpu")
	for range 5 {
		w.pass()
	}
	if diff := cmp.Diff([]string{"register /r/gpu.sock"}, w.started); diff != "" {
		t.Fatalf("operations (-want +got):\n%s", diff)
	}
	w.handler.registerErr = nil
	w.serve("/r/gpu.sock", "example.com/gpu")
	for range 3 {
		w.pass()
	}
	want := []string{"register /r/gpu.sock", "unregister /r/gpu.sock", "register /r/gpu.sock"}
	if diff := cmp.Diff(want, w.started); diff != "" {
		t.Fatalf("operations after recreate (-want +got):\n%s", diff)
	}
}

func TestReconcileRegisterFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(w *world)
		wantErr error
		notify  []string
	}{
		{"dial", func(w *world) {
			_, _ = w.m.Desired().AddOrUpdatePlugin("/r/dead.sock")
		}, ErrDial, nil},
		{"GetInfo", func(w *world) {
			w.serve("/r/dead.sock", "x").getInfo = errors.New("deadline exceeded")
		}, ErrGetInfo, nil},
		{"unknown type", func(w *world) {
			w.serve("/r/dead.sock", "x").info.Type = "Mystery"
		}, ErrNoHandler, []string{"false RegisterPlugin error -- no handler registered for plugin type: Mystery at socket /r/dead.sock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(w)
			env := Env{Dialer: w.dialer, Books: w.m.Actual(), Tracer: trace.Discard}
			ops := w.m.Reconcile()
			if len(ops) != 1 {
				t.Fatalf("operations = %v", ops)
			}
			err := RunOperation(context.Background(), ops[0], env)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if p := w.dialer.plugins["/r/dead.sock"]; p != nil {
				if diff := cmp.Diff(tc.notify, p.notified); diff != "" {
					t.Fatalf("notifications (-want +got):\n%s", diff)
				}
			}
			if len(w.handler.calls) != 0 {
				t.Fatalf("handler called: %v", w.handler.calls)
			}
		})
	}
}

func TestUnregisterWithoutHandlerFails(t *testing.T) {
	w := newWorld(t)
	err := RunOperation(context.Background(), Operation{Kind: Unregister, Plugin: PluginInfo{SocketPath: "/r/a.sock"}}, Env{Books: w.m.Actual(), Tracer: trace.Discard})
	if !errors.Is(err, ErrNoPluginEntry) {
		t.Fatalf("err = %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Fatalf("err = %v", err)
	}
}

// The kubelet returns a generic error for a failed validation; the reason goes to the plugin.
func TestValidationErrorIsGeneric(t *testing.T) {
	w := newWorld(t)
	w.handler.validateErr = errors.New("bad version")
	p := w.serve("/r/gpu.sock", "example.com/gpu")
	ops := w.m.Reconcile()
	err := RunOperation(context.Background(), ops[0], Env{Dialer: w.dialer, Books: w.m.Actual(), Tracer: trace.Discard})
	if !errors.Is(err, ErrValidation) || err.Error() != "RegisterPlugin error -- pluginHandler.ValidatePluginFunc failed" {
		t.Errorf("err = %v", err)
	}
	if !errors.Is(err, w.handler.validateErr) {
		t.Errorf("err does not wrap the handler's error")
	}
	if len(p.notified) != 1 || p.notified[0] != "false RegisterPlugin error -- plugin validation failed with err: bad version" {
		t.Errorf("notified = %q", p.notified)
	}
}

// quotingHandler refuses every plugin with an error that quotes its name, as the device manager's
// and the CSI handler's validations do.
type quotingHandler struct{ fakeHandler }

func (h *quotingHandler) ValidatePlugin(name, _ string, _ []string) error {
	return fmt.Errorf("the ResourceName %q is invalid", name)
}

// TestHugePluginNameIsQuotedCapped registers a plugin whose GetInfo answers a 3 MB name, as a
// hostile plugin server may, and retries it: every trace line quotes at most trace.MaxQuote
// bytes of it, where the whole name went into two lines per retry.
func TestHugePluginNameIsQuotedCapped(t *testing.T) {
	w := newWorld(t)
	h := &quotingHandler{}
	w.m.AddHandler(registerapi.DevicePlugin, h)
	rec, err := trace.NewRecorder(trace.RecorderOptions{Clock: w.clock, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("n", 3<<20)
	p := &fakePlugin{info: &registerapi.PluginInfo{Type: registerapi.DevicePlugin, Name: name, Endpoint: name, SupportedVersions: []string{name}}}
	w.dialer.plugins["/r/huge.sock"] = p
	if _, err := w.m.Desired().AddOrUpdatePlugin("/r/huge.sock"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if at, _ := w.m.NextWake(); !at.IsZero() {
			w.clock.Set(at)
		}
		env := Env{Dialer: w.dialer, Books: w.m.Actual(), Tracer: rec}
		for _, op := range w.m.Reconcile() {
			w.m.Finish(op, RunOperation(context.Background(), op, env))
		}
	}
	evs := rec.Events()
	if len(evs) == 0 {
		t.Fatal("no trace events")
	}
	// A line may quote the name in up to four fields (name, endpoint, versions, an error).
	const limit = 4*trace.MaxQuote + 512
	for _, e := range evs {
		if n := len(e.Message); n > limit {
			t.Errorf("trace %s/%s message is %d bytes, want at most %d", e.Component, e.Event, n, limit)
		}
	}
}
