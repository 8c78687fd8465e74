package draplugin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/fields"
	drapbv1 "k8s.io/kubelet/pkg/apis/dra/v1"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Services are the gRPC services of the DRA plugin API the kubelet can call, newest first
// (servicesSupportedByKubelet): a plugin lists those it serves as its supported versions.
var Services = []string{drapbv1.DRAPluginService, drapbv1beta1.DRAPluginService}

// WipingDelay is how long a driver may be without a connected plugin before the kubelet deletes
// its ResourceSlices of the node (the DRA manager's defaultWipingDelay): long enough for a
// plugin's pod to be replaced, short enough that pods are not scheduled to devices that are gone
// for long.
const WipingDelay = 30 * time.Second

// The retries of a wipe whose delete failed (wipeResourceSlices' backoff): 1s, doubled at each
// failure with up to 20% added at random; the ninth attempt is the last, and the wipe ends
// after one more wait.
const (
	wipeRetryFirst  = time.Second
	wipeRetryJitter = 0.2
	wipeAttempts    = 9
)

// ErrValidation is matched (errors.Is) by every refusal of ValidatePlugin.
var ErrValidation = errors.New("dra plugin validation failed")

// Rand is the randomness of the wipe's retries. math/rand/v2's *Rand satisfies it.
type Rand interface {
	Float64() float64
}

// Options configure a Manager.
type Options struct {
	// Clock is the time of the wipes. Required.
	Clock clock.PassiveClock
	// Tracer receives the manager's events. Required; trace.Discard drops them.
	Tracer trace.Tracer
	// Rand draws the jitter of a failed wipe's retries. Required.
	Rand Rand
	// NodeName is the node whose ResourceSlices are wiped. Required.
	NodeName string
	// Wipes says whether there is an API server to wipe ResourceSlices in. Without one (a
	// standalone kubelet) the manager schedules none.
	Wipes bool
}

func (o Options) validate() error {
	var missing []string
	for _, f := range []struct {
		name  string
		unset bool
	}{{"Clock", o.Clock == nil}, {"Tracer", o.Tracer == nil}, {"Rand", o.Rand == nil}, {"NodeName", o.NodeName == ""}} {
		if f.unset {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("new dra plugin manager: options %s: %w", strings.Join(missing, ", "), minikubelet.ErrMissingOption)
	}
	return nil
}

// Plugin is one registered plugin of a driver: its endpoint, the service the kubelet chose and
// whether its connection is up (monitoredPlugin).
type Plugin struct {
	Driver, Endpoint, Service string
	connected                 bool
}

// Wipe is one deletion of the node's ResourceSlices: of one driver, or of all of them at start.
type Wipe struct {
	// Driver is the driver whose slices go; "" is every driver's (the wipe at start).
	Driver string
	// Selector selects the slices.
	Selector fields.Set

	state    wipeState
	at       time.Time     // when the next attempt is due (or the wipe ends, once ending)
	attempts int           // failed attempts so far
	wait     time.Duration // the wait before the next retry, before jitter
	startup  bool          // the wipe of every driver at start, which no queue holds
}

// wipeState is where a wipe is: waiting for its delay, retrying its delete, or waiting out its
// last back-off after the last attempt failed.
type wipeState int

const (
	wipeScheduled wipeState = iota
	wipeRunning
	wipeEnding
)

func (s wipeState) String() string {
	switch s {
	case wipeScheduled:
		return "Scheduled"
	case wipeRunning:
		return "Running"
	case wipeEnding:
		return "Ending"
	}
	return fmt.Sprintf("wipeState(%d)", int(s))
}

// Manager is the core of the kubelet's DRA plugin manager (DRAPluginManager): the registered
// plugins of each driver, and the wipes of the node's ResourceSlices of drivers that have no
// connected plugin. It has no goroutine and no lock; Handler serialises the calls into it.
type Manager struct {
	opts Options
	// store holds each driver's plugins in the order they registered.
	store map[string][]*Plugin
	// queue is the timed worker queue's map of pending wipes by driver. An entry stays while its
	// wipe runs, and a wipe that ends removes its driver's entry, whichever wipe it holds, as
	// the kubelet's TimedWorkerQueue does.
	queue map[string]*Wipe
	// wipes are the wipes that will still do something, in the order they were created.
	wipes []*Wipe
}

// New returns a Manager with no plugins.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Manager{opts: opts, store: map[string][]*Plugin{}, queue: map[string]*Wipe{}}, nil
}

// Start queues the wipe of every ResourceSlice of the node, due at once: when the kubelet
// starts, no driver has registered yet and none of their devices can be used until one does.
func (m *Manager) Start() {
	if !m.opts.Wipes {
		return
	}
	m.wipes = append(m.wipes, &Wipe{Selector: m.selector(""), state: wipeRunning, at: m.opts.Clock.Now(), wait: wipeRetryFirst, startup: true})
}

func (m *Manager) selector(driver string) fields.Set {
	set := fields.Set{resourcev1.ResourceSliceSelectorNodeName: m.opts.NodeName}
	if driver != "" {
		set[resourcev1.ResourceSliceSelectorDriver] = driver
	}
	return set
}

// Validate picks the service the kubelet will call: the first of the plugin's services the
// kubelet supports. A plugin that lists none of them, or nothing, is refused.
func (m *Manager) Validate(driver, endpoint string, services []string) (string, error) {
	chosen, err := chooseService(services)
	if err != nil {
		return "", &validationError{msg: fmt.Sprintf("invalid supported gRPC versions of DRA driver plugin %s at endpoint %s: %v", driver, endpoint, err)}
	}
	return chosen, nil
}

func chooseService(services []string) (string, error) {
	if len(services) == 0 {
		return "", errors.New("empty list of supported gRPC services (aka supported versions)")
	}
	for _, s := range services {
		if slices.Contains(Services, s) {
			return s, nil
		}
	}
	return "", fmt.Errorf("none of services supported by the plugin (%q) are supported by the kubelet (%q)", services, Services)
}

// validationError carries the kubelet's message and matches ErrValidation.
type validationError struct{ msg string }

func (e *validationError) Error() string        { return e.msg }
func (e *validationError) Is(target error) bool { return target == ErrValidation }

// CheckEndpoint refuses a second plugin of the driver on an endpoint one already has: one plugin
// instance cannot take over another's endpoint.
func (m *Manager) CheckEndpoint(driver, endpoint string) error {
	for _, p := range m.store[driver] {
		if p.Endpoint == endpoint {
			return fmt.Errorf("endpoint %s already registered for DRA driver plugin %s", endpoint, driver)
		}
	}
	return nil
}

// Add records a plugin whose connection was just made; it is not connected yet, so the driver
// may need a wipe (sync).
func (m *Manager) Add(driver, endpoint, service string) *Plugin {
	p := &Plugin{Driver: driver, Endpoint: endpoint, Service: service}
	m.store[driver] = append(m.store[driver], p)
	m.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: trace.KindRegistered, Func: "RegisterPlugin",
		Message: fmt.Sprintf("driver=%s endpoint=%s service=%s plugins=%d", trace.Quote(driver), trace.Quote(endpoint), service, len(m.store[driver]))})
	m.sync(driver)
	return p
}

// Remove forgets the driver's plugin on endpoint and returns it, for its connection to be
// closed; nil when there is none.
func (m *Manager) Remove(driver, endpoint string) *Plugin {
	plugins := m.store[driver]
	i := slices.IndexFunc(plugins, func(p *Plugin) bool { return p.Endpoint == endpoint })
	if i < 0 {
		return nil
	}
	p := plugins[i]
	if len(plugins) == 1 {
		delete(m.store, driver)
	} else {
		m.store[driver] = slices.Delete(plugins, i, i+1)
	}
	m.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: trace.KindUnregistered, Func: "DeRegisterPlugin",
		Message: fmt.Sprintf("driver=%s endpoint=%s plugins=%d", trace.Quote(driver), trace.Quote(endpoint), len(m.store[driver]))})
	m.sync(driver)
	return p
}

// ConnectionChanged records that p's connection came up or went down (HandleConn), even when p
// is no longer registered, and syncs its driver.
func (m *Manager) ConnectionChanged(p *Plugin, connected bool) {
	kind := trace.KindDisconnected
	if connected {
		kind = trace.KindConnected
	}
	m.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: kind, Func: "HandleConn",
		Message: fmt.Sprintf("driver=%s endpoint=%s", trace.Quote(p.Driver), trace.Quote(p.Endpoint))})
	p.connected = connected
	m.sync(p.Driver)
}

// sync follows a change of the driver's plugins: a driver with a connected plugin needs no wipe,
// and its pending one is cancelled; one without gets a wipe WipingDelay from now, unless it has
// one pending already (whose time stands).
func (m *Manager) sync(driver string) {
	if !m.opts.Wipes {
		return
	}
	w, queued := m.queue[driver]
	if m.usable(driver) {
		if !queued {
			return
		}
		delete(m.queue, driver)
		// A wipe that has started goes on: the kubelet's cancel only stops a timer.
		if w.state == wipeScheduled {
			m.wipes = slices.DeleteFunc(m.wipes, func(o *Wipe) bool { return o == w })
			m.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: trace.KindWipeCancel, Func: "sync", Message: "driver=" + trace.Quote(driver)})
		}
		return
	}
	if queued {
		return
	}
	w = &Wipe{Driver: driver, Selector: m.selector(driver), at: m.opts.Clock.Now().Add(WipingDelay), wait: wipeRetryFirst}
	m.queue[driver] = w
	m.wipes = append(m.wipes, w)
	m.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: trace.KindWipeAt, Func: "sync", Delay: WipingDelay, Message: "driver=" + trace.Quote(driver)})
}

// usable reports whether one of the driver's plugins is connected.
func (m *Manager) usable(driver string) bool {
	return slices.ContainsFunc(m.store[driver], func(p *Plugin) bool { return p.connected })
}

// NextWake returns when the next wipe is due, if one is.
func (m *Manager) NextWake() (time.Time, bool) {
	var at time.Time
	for _, w := range m.wipes {
		if at.IsZero() || w.at.Before(at) {
			at = w.at
		}
	}
	return at, !at.IsZero()
}

// Due returns the wipes whose delete is due now, in the order they were created; the caller
// deletes and reports each with Done. A scheduled wipe whose delay is over starts here, and a
// wipe whose last back-off is over ends.
func (m *Manager) Due() []*Wipe {
	now := m.opts.Clock.Now()
	var due []*Wipe
	for _, w := range slices.Clone(m.wipes) {
		if w.at.After(now) {
			continue
		}
		switch w.state {
		case wipeScheduled:
			w.state = wipeRunning
			due = append(due, w)
		case wipeRunning:
			due = append(due, w)
		case wipeEnding:
			m.end(w)
		}
	}
	return due
}

// Done records the outcome of a wipe's delete: done on success (a NotFound is one), else a retry
// after the back-off, until the last attempt.
func (m *Manager) Done(w *Wipe, err error) {
	if err == nil {
		// The wipe at start is only traced when it fails: it is part of every start, and it
		// deletes nothing unless a kubelet before this one left slices.
		if !w.startup {
			m.opts.Tracer.Emit(trace.Event{Component: trace.DRA, Event: trace.KindWiped, Func: "wipeResourceSlices", Message: "fieldSelector=" + trace.Quote(w.Selector.String())})
		}
		m.end(w)
		return
	}
	w.attempts++
	ev := trace.Event{Component: trace.DRA, Event: trace.KindError, Reason: "WipeResourceSlices", Func: "wipeResourceSlices"}
	delay := time.Duration(float64(w.wait) * (1 + wipeRetryJitter*m.opts.Rand.Float64()))
	w.at = m.opts.Clock.Now().Add(delay)
	w.wait *= 2
	if w.attempts < wipeAttempts {
		ev.Delay = delay
		ev.Message = fmt.Sprintf("fieldSelector=%s: %s", trace.Quote(w.Selector.String()), trace.Quote(err.Error()))
	} else {
		// The back-off's steps are used up: after one more wait the wipe gives up.
		w.state = wipeEnding
		ev.Message = fmt.Sprintf("fieldSelector=%s: %s, no more attempts", trace.Quote(w.Selector.String()), trace.Quote(err.Error()))
	}
	m.opts.Tracer.Emit(ev)
}

// end removes a wipe that finished, and its driver's queue entry, whichever wipe that holds.
func (m *Manager) end(w *Wipe) {
	m.wipes = slices.DeleteFunc(m.wipes, func(o *Wipe) bool { return o == w })
	if !w.startup {
		delete(m.queue, w.Driver)
	}
}

// Drivers lists the registered drivers and their plugins' endpoints, in registration order.
func (m *Manager) Drivers() map[string][]string {
	out := map[string][]string{}
	for d, ps := range m.store {
		for _, p := range ps {
			out[d] = append(out[d], p.Endpoint)
		}
	}
	return out
}
