package replay

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/api/eventrecord"
	"github.com/minikubelet/minikubelet/controlplane/controllers"
	"github.com/minikubelet/minikubelet/nodestatus"
)

// controlPlane is what replay runs beside the API server: the controllers, and the peer nodes
// that keep the cluster from looking fully disrupted when the simulated node stops.
type controlPlane struct {
	cores []controllers.Core
	peers []*nodestatus.Status
	// rv is the API server's resource version when the controllers last ran: they run again
	// when it moved (what their informers would have delivered) or when one wants to.
	rv     uint64
	synced bool
}

// healthyRuntime is a peer node's runtime: always up, its PLEG healthy.
type healthyRuntime struct{}

func (healthyRuntime) Errors() error     { return nil }
func (healthyRuntime) PLEGHealthy() bool { return true }

// newControlPlane builds the scenario's controllers and peer nodes.
func (e *engine) newControlPlane() (*controlPlane, error) {
	s := e.s
	if len(s.Controllers) == 0 && len(s.PeerNodes) == 0 {
		return nil, nil
	}
	cp := &controlPlane{}
	recorders := map[string]record.EventRecorder{}
	recorder := func(source string) record.EventRecorder {
		if r, ok := recorders[source]; ok {
			return r
		}
		api, err := eventrecord.NewAPIRecorder(eventrecord.APIRecorderOptions{Clock: e.clk, Client: e.client, Source: v1.EventSource{Component: source}, LastNano: &e.eventNano})
		if err != nil {
			return nil
		}
		r, err := eventrecord.NewTracing(api, e.rec)
		if err != nil {
			return nil
		}
		recorders[source] = r
		return r
	}
	cores, err := controllers.New(controllers.Options{Names: s.Controllers, Clock: e.clk, Tracer: e.rec,
		Client: controllers.Client{Clientset: e.client}, Recorder: recorder})
	if err != nil {
		return nil, err
	}
	cp.cores = cores
	for i, name := range s.PeerNodes {
		st, err := nodestatus.New(nodestatus.Options{NodeName: name, NodeIP: fmt.Sprintf("10.0.0.%d", 10+len(e.nodes)+i), Clock: e.clk, Tracer: e.rec,
			Client: nodestatus.ClientsetClient{Client: e.client}, RuntimeState: healthyRuntime{},
			Rand: rand.New(rand.NewPCG(uint64(e.seed), uint64(i)))})
		if err != nil {
			return nil, err
		}
		cp.peers = append(cp.peers, st)
	}
	return cp, nil
}

// advance runs the peers' heartbeats and the controllers that are due, and reports whether it
// did anything.
func (e *engine) advanceControlPlane(ctx context.Context) bool {
	cp := e.cp
	if cp == nil {
		return false
	}
	now := e.clk.Now()
	progressed := false
	for _, p := range cp.peers {
		if t, ok := p.NextWake(); ok && !t.After(now) {
			_ = p.Register(ctx)  // failures are in the trace
			_ = p.Heartbeat(ctx) // failures are in the trace
			progressed = true
		}
	}
	due := !cp.synced || e.server.ResourceVersion() != cp.rv
	for _, c := range cp.cores {
		if t, ok := c.NextWake(); ok && !t.After(now) {
			due = true
		}
	}
	if !due || len(cp.cores) == 0 {
		return progressed
	}
	cp.synced = true
	before := e.server.ResourceVersion()
	for _, c := range cp.cores {
		_ = c.Sync(ctx) // failures are retried at the next pass, as the controllers do
	}
	cp.rv = e.server.ResourceVersion()
	return progressed || cp.rv != before
}

// controlPlaneWakes lists when the controllers and peers next want to run.
func (e *engine) controlPlaneWakes() []time.Time {
	if e.cp == nil {
		return nil
	}
	var out []time.Time
	for _, c := range e.cp.cores {
		if t, ok := c.NextWake(); ok {
			out = append(out, t)
		}
	}
	for _, p := range e.cp.peers {
		if t, ok := p.NextWake(); ok {
			out = append(out, t)
		}
	}
	return out
}

// validateControlPlane checks the controllers and peer nodes.
func (s *Scenario) validateControlPlane() error {
	var errs []error
	if (len(s.Controllers) > 0 || len(s.PeerNodes) > 0) && !s.hasSource("api") {
		errs = append(errs, errors.New("controllers and peerNodes need the api source: add it to sources"))
	}
	if names, err := controllers.ParseNames(strings.Join(s.Controllers, ",")); err != nil {
		errs = append(errs, fmt.Errorf("controllers: %w", err))
	} else {
		s.Controllers = names
	}
	for _, p := range s.PeerNodes {
		if p == "" || slices.Contains(s.nodeNames(), p) {
			errs = append(errs, fmt.Errorf("peerNodes: %q must be named and differ from the simulated nodes", p))
		}
	}
	return errors.Join(errs...)
}
