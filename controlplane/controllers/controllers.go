package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/controllers/nodelifecycle"
	"github.com/minikubelet/minikubelet/controlplane/controllers/podgc"
	"github.com/minikubelet/minikubelet/controlplane/controllers/scheduler"
	"github.com/minikubelet/minikubelet/controlplane/controllers/tainteviction"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// The names `--controllers` takes.
const (
	NodeLifecycle = "nodelifecycle" // the node lifecycle and taint eviction controllers
	PodGC         = "podgc"         // the pod garbage collector
	Scheduler     = "scheduler"     // the scheduler
)

// Names lists every controller, in the order they run.
var Names = []string{NodeLifecycle, PodGC, Scheduler}

// The event sources of the controllers' Kubernetes events, as kube-controller-manager and
// kube-scheduler name them.
const (
	NodeLifecycleSource = "node-controller"
	TaintEvictionSource = "taint-eviction-controller"
	SchedulerSource     = "default-scheduler"
)

// ErrUnknownController is wrapped by ParseNames for a name not in Names.
var ErrUnknownController = errors.New("unknown controller")

// ParseNames parses a comma-separated list of names; an empty string is none. Each name must be
// one of Names, and the result is in Names' order without repeats.
func ParseNames(s string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(Names, n) {
			return nil, fmt.Errorf("%q (known: %s): %w", n, strings.Join(Names, ", "), ErrUnknownController)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(Names, a) - slices.Index(Names, b) })
	return out, nil
}

// Core is one controller: Sync does what is due now and reacts to the API's state; NextWake says
// when it next wants to run even if nothing changes, and false for never, as every core's does.
type Core interface {
	Sync(ctx context.Context) error
	NextWake() (time.Time, bool)
}

// Options configure New.
type Options struct {
	// Names are the controllers to build (see Names).
	Names []string
	// Clock is the controllers' clock. Required.
	Clock clock.PassiveClock
	// Client reaches the API server. Its Clientset is required.
	Client Client
	// Tracer receives the controllers' trace events. Required.
	Tracer trace.Tracer
	// Recorder returns the event recorder of one event source (NodeLifecycleSource, ...). Nil
	// records no Kubernetes events.
	Recorder func(source string) record.EventRecorder
	// NodeMonitorPeriod and NodeMonitorGracePeriod are kube-controller-manager's
	// --node-monitor-period and --node-monitor-grace-period; zero means the defaults (5s, 50s).
	NodeMonitorPeriod, NodeMonitorGracePeriod time.Duration
}

// New builds the named controllers' cores, in the order they must run: node lifecycle, taint
// eviction, pod GC, scheduler.
func New(opts Options) ([]Core, error) {
	if opts.Clock == nil || opts.Client.Clientset == nil || opts.Tracer == nil {
		return nil, errors.New("controllers: clock, client and tracer are required")
	}
	recorder := func(source string) record.EventRecorder {
		if opts.Recorder == nil {
			return nil
		}
		return opts.Recorder(source)
	}
	var cores []Core
	for _, name := range opts.Names {
		switch name {
		case NodeLifecycle:
			nl, err := nodelifecycle.New(nodelifecycle.Options{Clock: opts.Clock, Lister: opts.Client, Writer: opts.Client,
				Tracer: opts.Tracer, Recorder: recorder(NodeLifecycleSource),
				MonitorPeriod: opts.NodeMonitorPeriod, MonitorGracePeriod: opts.NodeMonitorGracePeriod,
				Changes: opts.Client.nodeFeed()})
			if err != nil {
				return nil, err
			}
			te, err := tainteviction.New(tainteviction.Options{Clock: opts.Clock, Lister: opts.Client, Writer: opts.Client,
				Tracer: opts.Tracer, Recorder: recorder(TaintEvictionSource), Changes: opts.Client.nodeFeed()})
			if err != nil {
				return nil, err
			}
			cores = append(cores, nl, te)
		case PodGC:
			gc, err := podgc.New(podgc.Options{Clock: opts.Clock, Lister: opts.Client, Writer: opts.Client, Tracer: opts.Tracer})
			if err != nil {
				return nil, err
			}
			cores = append(cores, gc)
		case Scheduler:
			s, err := scheduler.New(scheduler.Options{Clock: opts.Clock, Lister: opts.Client, Writer: opts.Client,
				Tracer: opts.Tracer, Recorder: recorder(SchedulerSource), Changes: opts.Client.schedulerChanges()})
			if err != nil {
				return nil, err
			}
			cores = append(cores, s)
		default:
			return nil, fmt.Errorf("%q: %w", name, ErrUnknownController)
		}
	}
	return cores, nil
}

// Compile-time checks that the cores and the client fit the interfaces.
var (
	_ Core = (*nodelifecycle.Controller)(nil)
	_ Core = (*tainteviction.Controller)(nil)
	_ Core = (*podgc.Controller)(nil)
	_ Core = (*scheduler.Scheduler)(nil)

	_ nodelifecycle.Lister = Client{}
	_ nodelifecycle.Writer = Client{}
	_ tainteviction.Writer = Client{}
	_ podgc.Writer         = Client{}
	_ scheduler.Writer     = Client{}
)
