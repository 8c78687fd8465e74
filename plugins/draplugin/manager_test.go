package draplugin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/fields"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// events collects what the manager traces, as "kind message" lines (with the delay when set).
type events struct{ got []string }

func (e *events) Emit(ev trace.Event) {
	s := string(ev.Event) + " " + ev.Message
	if ev.Delay != 0 {
		s += " in " + ev.Delay.String()
	}
	e.got = append(e.got, s)
}

// take returns what was traced since the last take.
func (e *events) take() []string {
	got := e.got
	e.got = nil
	return got
}

// fixedRand draws the same jitter every time.
type fixedRand float64

func (r fixedRand) Float64() float64 { return float64(r) }

// fakeConnector makes connections the test brings up and down.
type fakeConnector struct {
	conns map[string]*fakeConn
	err   error
}

type fakeConn struct {
	watch   func(bool)
	started bool
	up      bool
	closed  bool
}

func (c *fakeConnector) Connect(endpoint string, watch func(bool)) (Conn, error) {
	if c.err != nil {
		return nil, c.err
	}
	fc := &fakeConn{watch: watch}
	c.conns[endpoint] = fc
	return fc, nil
}

func (c *fakeConn) Start() { c.started = true }

// set brings the connection up or down, as its plugin starting or stopping does.
func (c *fakeConn) set(up bool) {
	if c.up != up && !c.closed {
		c.up = up
		c.watch(up)
	}
}

func (c *fakeConn) Close() error {
	c.set(false)
	c.closed = true
	return nil
}

// fakeSlices records the deletes and fails the first fails of them.
type fakeSlices struct {
	deletes []string
	fails   int
}

func (s *fakeSlices) DeleteSlices(_ context.Context, sel fields.Set) error {
	s.deletes = append(s.deletes, sel.String())
	if s.fails > 0 {
		s.fails--
		return errors.New("etcdserver: request timed out")
	}
	return nil
}

type fixture struct {
	h      *Handler
	clock  *testingclock.FakeClock
	ev     *events
	conns  *fakeConnector
	slices *fakeSlices
}

func newFixture(t *testing.T, wipes bool) *fixture {
	t.Helper()
	f := &fixture{clock: testingclock.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), ev: &events{},
		conns: &fakeConnector{conns: map[string]*fakeConn{}}, slices: &fakeSlices{}}
	m, err := New(Options{Clock: f.clock, Tracer: f.ev, Rand: fixedRand(0), NodeName: "node-1", Wipes: wipes})
	if err != nil {
		t.Fatal(err)
	}
	if f.h, err = NewHandler(HandlerOptions{Manager: m, Connector: f.conns, Slices: f.slices, Tracer: f.ev}); err != nil {
		t.Fatal(err)
	}
	return f
}

// step moves the clock by d and carries out what is due.
func (f *fixture) step(d time.Duration) {
	f.clock.Step(d)
	f.h.Advance(context.Background())
}

func TestOptionsRequired(t *testing.T) {
	if _, err := New(Options{}); !errors.Is(err, minikubelet.ErrMissingOption) || !strings.Contains(err.Error(), "Clock, Tracer, Rand, NodeName") {
		t.Errorf("New(Options{}) = %v", err)
	}
	m, err := New(Options{Clock: testingclock.NewFakeClock(time.Time{}), Tracer: trace.Discard, Rand: fixedRand(0), NodeName: "n", Wipes: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewHandler(HandlerOptions{Manager: m}); !errors.Is(err, minikubelet.ErrMissingOption) || !strings.Contains(err.Error(), "Connector, Tracer, Slices") {
		t.Errorf("NewHandler without Connector, Tracer, Slices = %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		services []string
		want     string // the chosen service, or the end of the error
	}{
		{[]string{"v1.DRAPlugin"}, "v1.DRAPlugin"},
		{[]string{"v1beta1.DRAPlugin"}, "v1beta1.DRAPlugin"},
		// The plugin's order decides, not the kubelet's preference.
		{[]string{"v1beta1.DRAPlugin", "v1.DRAPlugin"}, "v1beta1.DRAPlugin"},
		{[]string{"v1alpha4.NodeServer", "v1.DRAPlugin"}, "v1.DRAPlugin"},
		{nil, ": empty list of supported gRPC services (aka supported versions)"},
		{[]string{"1.0.0"}, `: none of services supported by the plugin (["1.0.0"]) are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])`},
	} {
		f := newFixture(t, true)
		err := f.h.ValidatePlugin("dra.example.com", "/p/dra.sock", tc.services)
		got, _ := f.h.opts.Manager.Validate("dra.example.com", "/p/dra.sock", tc.services)
		if err != nil {
			want := "invalid supported gRPC versions of DRA driver plugin dra.example.com at endpoint /p/dra.sock" + tc.want
			if err.Error() != want || !errors.Is(err, ErrValidation) {
				t.Errorf("%v: ValidatePlugin = %v, want %s", tc.services, err, want)
			}
			if ev := f.ev.take(); len(ev) != 1 || !strings.HasPrefix(ev[0], "error ") {
				t.Errorf("%v: traced %q, want one error", tc.services, ev)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%v: chose %q, want %q", tc.services, got, tc.want)
		}
	}
}

// TestLifecycle follows one plugin: it registers, connects, is deregistered, and after the wiping
// delay the driver's slices go.
func TestLifecycle(t *testing.T) {
	f := newFixture(t, true)
	const driver, ep = "dra.example.com", "/var/lib/kubelet/plugins/dra.example.com/dra.sock"
	if err := f.h.RegisterPlugin(driver, ep, []string{"v1.DRAPlugin"}, nil); err != nil {
		t.Fatal(err)
	}
	c := f.conns.conns[ep]
	if !c.started {
		t.Error("the connection was not started")
	}
	want := []string{
		`registered driver=dra.example.com endpoint=` + ep + ` service=v1.DRAPlugin plugins=1`,
		`wipe-at driver=dra.example.com in 30s`,
	}
	if diff := cmp.Diff(want, f.ev.take()); diff != "" {
		t.Errorf("register (-want +got):\n%s", diff)
	}
	c.set(true)
	want = []string{`connected driver=dra.example.com endpoint=` + ep, `wipe-cancel driver=dra.example.com`}
	if diff := cmp.Diff(want, f.ev.take()); diff != "" {
		t.Errorf("connect (-want +got):\n%s", diff)
	}
	if _, ok := f.h.NextWake(); ok {
		t.Error("a wipe is pending with the driver connected")
	}
	if diff := cmp.Diff(map[string][]string{driver: {ep}}, f.h.Drivers()); diff != "" {
		t.Errorf("Drivers (-want +got):\n%s", diff)
	}

	f.step(10 * time.Second)
	f.h.DeRegisterPlugin(driver, ep)
	want = []string{
		`unregistered driver=dra.example.com endpoint=` + ep + ` plugins=0`,
		`wipe-at driver=dra.example.com in 30s`,
		// The close reports the end; the wipe already pending keeps its time.
		`disconnected driver=dra.example.com endpoint=` + ep,
	}
	if diff := cmp.Diff(want, f.ev.take()); diff != "" {
		t.Errorf("deregister (-want +got):\n%s", diff)
	}
	if !c.closed {
		t.Error("the connection was not closed")
	}
	at, ok := f.h.NextWake()
	if want := f.clock.Now().Add(WipingDelay); !ok || !at.Equal(want) {
		t.Errorf("NextWake = %v, %v; want %v", at, ok, want)
	}
	f.step(WipingDelay - time.Millisecond)
	if len(f.slices.deletes) != 0 {
		t.Fatalf("deleted before the delay: %q", f.slices.deletes)
	}
	f.step(time.Millisecond)
	if diff := cmp.Diff([]string{"spec.driver=dra.example.com,spec.nodeName=node-1"}, f.slices.deletes); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`wiped fieldSelector=spec.driver=dra.example.com,spec.nodeName=node-1`}, f.ev.take()); diff != "" {
		t.Errorf("wipe (-want +got):\n%s", diff)
	}
	if _, ok := f.h.NextWake(); ok {
		t.Error("a wipe is still pending after it was done")
	}
	if len(f.h.Drivers()) != 0 {
		t.Errorf("Drivers = %v after the last plugin went", f.h.Drivers())
	}
}

// TestSeveralPlugins: a driver with a second plugin (an update rolling out) stays usable while one
// of them is connected, and one endpoint cannot be registered twice.
func TestSeveralPlugins(t *testing.T) {
	f := newFixture(t, true)
	const driver = "gpu.example.com"
	for _, ep := range []string{"/p/old.sock", "/p/new.sock"} {
		if err := f.h.RegisterPlugin(driver, ep, []string{"v1beta1.DRAPlugin"}, nil); err != nil {
			t.Fatal(err)
		}
		f.conns.conns[ep].set(true)
	}
	f.ev.take()
	err := f.h.RegisterPlugin(driver, "/p/new.sock", []string{"v1.DRAPlugin"}, nil)
	if err == nil || err.Error() != "endpoint /p/new.sock already registered for DRA driver plugin gpu.example.com" {
		t.Errorf("second registration of an endpoint = %v", err)
	}
	f.conns.conns["/p/old.sock"].set(false)
	f.h.DeRegisterPlugin(driver, "/p/old.sock")
	want := []string{
		"error " + `endpoint /p/new.sock already registered for DRA driver plugin gpu.example.com`,
		`disconnected driver=gpu.example.com endpoint=/p/old.sock`,
		`unregistered driver=gpu.example.com endpoint=/p/old.sock plugins=1`,
	}
	got := f.ev.take()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := f.h.NextWake(); ok {
		t.Error("a wipe is pending while the new plugin is connected")
	}
}

// TestWipeRetries: a delete that fails is tried again after 1s, 2s, 4s ...; the ninth failure
// is the last attempt, and the wipe ends after one more wait.
func TestWipeRetries(t *testing.T) {
	f := newFixture(t, true)
	f.slices.fails = 100
	if err := f.h.RegisterPlugin("d", "/p/d.sock", []string{"v1.DRAPlugin"}, nil); err != nil {
		t.Fatal(err)
	}
	f.step(WipingDelay)
	var waits []time.Duration
	for {
		at, ok := f.h.NextWake()
		if !ok {
			break
		}
		d := at.Sub(f.clock.Now())
		waits = append(waits, d)
		f.step(d)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if len(f.slices.deletes) != 9 {
		t.Errorf("%d attempts, want 9", len(f.slices.deletes))
	}
	got := f.ev.take()
	if last := got[len(got)-1]; !strings.HasSuffix(last, `etcdserver: request timed out, no more attempts`) {
		t.Errorf("last event %q, want the end of the retries", last)
	}
	// The queue entry went with the wipe: the next change schedules a new one.
	f.h.DeRegisterPlugin("d", "/p/d.sock")
	if _, ok := f.h.NextWake(); !ok {
		t.Error("no wipe after the failed one ended and the plugin went")
	}
}

// TestJitter: a retry waits up to 20% longer, as the rand draws.
func TestJitter(t *testing.T) {
	m, err := New(Options{Clock: testingclock.NewFakeClock(time.Time{}), Tracer: trace.Discard, Rand: fixedRand(0.5), NodeName: "n", Wipes: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	due := m.Due()
	m.Done(due[0], errors.New("x"))
	if at, _ := m.NextWake(); at.Sub(time.Time{}) != 1100*time.Millisecond {
		t.Errorf("first retry after %v, want 1.1s", at.Sub(time.Time{}))
	}
}

// TestStart: the wipe of every driver's slices at start selects the node only and is not traced
// when it succeeds; a standalone kubelet wipes nothing and schedules no wipe.
func TestStart(t *testing.T) {
	f := newFixture(t, true)
	f.h.Start()
	f.h.Advance(context.Background())
	if diff := cmp.Diff([]string{"spec.nodeName=node-1"}, f.slices.deletes); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}
	if ev := f.ev.take(); len(ev) != 0 {
		t.Errorf("traced %q", ev)
	}

	f = newFixture(t, false)
	f.h.Start()
	if err := f.h.RegisterPlugin("d", "/p/d.sock", []string{"v1.DRAPlugin"}, nil); err != nil {
		t.Fatal(err)
	}
	f.h.DeRegisterPlugin("d", "/p/d.sock")
	if _, ok := f.h.NextWake(); ok {
		t.Error("a standalone kubelet scheduled a wipe")
	}
	if ev := f.ev.take(); len(ev) != 2 {
		t.Errorf("traced %q, want registered and unregistered only", ev)
	}
}

// TestStop: after Stop no plugin registers, connections are closed and their ends not recorded.
func TestStop(t *testing.T) {
	f := newFixture(t, true)
	if err := f.h.RegisterPlugin("d", "/p/d.sock", []string{"v1.DRAPlugin"}, nil); err != nil {
		t.Fatal(err)
	}
	f.conns.conns["/p/d.sock"].set(true)
	f.ev.take()
	f.h.Stop()
	if !f.conns.conns["/p/d.sock"].closed {
		t.Error("Stop left the connection open")
	}
	if ev := f.ev.take(); len(ev) != 0 {
		t.Errorf("traced %q after Stop", ev)
	}
	if err := f.h.RegisterPlugin("e", "/p/e.sock", []string{"v1.DRAPlugin"}, nil); !errors.Is(err, ErrStopped) {
		t.Errorf("RegisterPlugin after Stop = %v", err)
	}
}

// TestConnectFails: a connection that cannot be made refuses the registration.
func TestConnectFails(t *testing.T) {
	f := newFixture(t, true)
	f.conns.err = errors.New("bad target")
	err := f.h.RegisterPlugin("d", "/p/d.sock", []string{"v1.DRAPlugin"}, nil)
	if err == nil || err.Error() != "create gRPC connection to DRA driver d plugin at endpoint /p/d.sock: bad target" {
		t.Errorf("RegisterPlugin = %v", err)
	}
	if len(f.h.Drivers()) != 0 {
		t.Errorf("Drivers = %v", f.h.Drivers())
	}
}

func TestWipeStateString(t *testing.T) {
	for s, want := range map[wipeState]string{wipeScheduled: "Scheduled", wipeRunning: "Running", wipeEnding: "Ending", 7: "wipeState(7)"} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", int(s), got, want)
		}
	}
}
