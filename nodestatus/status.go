package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/vclock"
)

// The heartbeat's timing.
const (
	// StatusPeriod is the kubelet's default nodeStatusUpdateFrequency.
	StatusPeriod = 10 * time.Second
	// LeaseRenewPeriod is how often the node lease is renewed: the kubelet's default
	// nodeLeaseDurationSeconds (40s) times its renew interval fraction (0.25).
	LeaseRenewPeriod = 10 * time.Second
	// registerBackoffMin and registerBackoffMax bound the retry delay of node registration, as
	// the kubelet's do.
	registerBackoffMin = 100 * time.Millisecond
	registerBackoffMax = 7 * time.Second
)

// RuntimeState is what Ready follows: the kubelet's runtimeState.
type RuntimeState interface {
	// Errors is nil while the runtime answers and the PLEG is healthy.
	Errors() error
	// PLEGHealthy reports the PLEG's health alone, which decides Ready at registration.
	PLEGHealthy() bool
}

// Options configure a Status.
type Options struct {
	// NodeName is the node's name. Required.
	NodeName string
	// NodeIP is reported as the node's InternalIP address. Empty reports none.
	NodeIP string
	// Clock is the time of every write. Required.
	Clock clock.PassiveClock
	// Tracer receives registration, readiness changes and failed writes. Required.
	Tracer trace.Tracer
	// Client writes the node and its lease. Required.
	Client Client
	// RuntimeState decides the Ready condition. Required.
	RuntimeState RuntimeState
	// KubeletPort is advertised in status.daemonEndpoints. Zero is the kubelet's 10250.
	KubeletPort int32
}

// ErrMissingOption is wrapped by New when a required option is unset.
var ErrMissingOption = errors.New("missing required option")

func (o Options) validate() error {
	var missing []string
	if o.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Tracer == nil {
		missing = append(missing, "Tracer")
	}
	if o.Client == nil {
		missing = append(missing, "Client")
	}
	if o.RuntimeState == nil {
		missing = append(missing, "RuntimeState")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), ErrMissingOption)
	}
	return nil
}

// Status registers the node and keeps its status and lease fresh.
type Status struct {
	opts       Options
	registered bool
	uid        types.UID
	// retry is when registration is tried again, and backoff its current delay.
	retry   time.Time
	backoff time.Duration
	// status and lease are when the node status and the lease are next written.
	status, lease time.Time
	// ready is the Ready condition last reported.
	ready bool
}

// New returns a Status whose registration is due at once.
func New(opts Options) (*Status, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new node status: %w", err)
	}
	return &Status{opts: opts}, nil
}

// Registered reports whether the node object exists.
func (s *Status) Registered() bool { return s.registered }

// NextWake returns when the heartbeat next has work: now while registration has not been tried.
func (s *Status) NextWake() (time.Time, bool) {
	if !s.registered {
		if s.retry.IsZero() {
			return s.opts.Clock.Now(), true
		}
		return s.retry, true
	}
	if s.lease.Before(s.status) {
		return s.lease, true
	}
	return s.status, true
}

// Register creates the node object (the kubelet's registerWithAPIServer), adopting an existing
// one, unless it is registered or its retry is not due. A failure is retried with a doubling delay
// from 100ms to 7s.
func (s *Status) Register(ctx context.Context) error {
	now := s.opts.Clock.Now()
	if s.registered || (!s.retry.IsZero() && now.Before(s.retry)) {
		return nil
	}
	ready := s.opts.RuntimeState.PLEGHealthy()
	name := s.opts.NodeName
	created, err := s.opts.Client.CreateNode(ctx, initialNode(name, s.opts.NodeIP, s.opts.KubeletPort, now, ready))
	if apierrors.IsAlreadyExists(err) {
		created, err = s.opts.Client.GetNode(ctx, name)
	}
	ev := trace.Event{Component: trace.Node, Pod: name, Func: "registerWithAPIServer"}
	if err != nil {
		s.backoff = min(max(2*s.backoff, registerBackoffMin), registerBackoffMax)
		s.retry = now.Add(s.backoff)
		ev.Event, ev.Reason, ev.Message = trace.KindError, "FailedToRegisterNode", err.Error()
		s.opts.Tracer.Emit(ev)
		return fmt.Errorf("register node %s: %w", name, err)
	}
	s.registered, s.uid, s.ready = true, created.UID, ready
	s.status, s.lease = now.Add(StatusPeriod), now
	ev.Event = trace.KindRegister
	s.opts.Tracer.Emit(ev)
	return nil
}

// Heartbeat renews the lease and writes the node status when they are due.
func (s *Status) Heartbeat(ctx context.Context) error {
	if !s.registered {
		return nil
	}
	now := s.opts.Clock.Now()
	name := s.opts.NodeName
	var errs []error
	if vclock.Due(s.lease, now) {
		s.lease = vclock.NextTick(s.lease, LeaseRenewPeriod, now)
		if err := s.opts.Client.RenewLease(ctx, newLease(name, s.uid, now)); err != nil {
			s.opts.Tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindError, Pod: name, Reason: "FailedToRenewLease", Message: err.Error(), Func: "renewLease"})
			errs = append(errs, fmt.Errorf("renew lease of node %s: %w", name, err))
		}
	}
	if vclock.Due(s.status, now) {
		s.status = vclock.NextTick(s.status, StatusPeriod, now)
		if err := s.updateNodeStatus(ctx, now); err != nil {
			s.opts.Tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindError, Pod: name, Reason: "FailedToUpdateNodeStatus", Message: err.Error(), Func: "updateNodeStatus"})
			errs = append(errs, fmt.Errorf("update status of node %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// updateNodeStatus reads the node and writes its conditions with a fresh heartbeat time.
func (s *Status) updateNodeStatus(ctx context.Context, now time.Time) error {
	node, err := s.opts.Client.GetNode(ctx, s.opts.NodeName)
	if err != nil {
		return err
	}
	ready, msg := s.readiness()
	upd := node.DeepCopy()
	setConditions(upd, now, ready, msg)
	if _, err := s.opts.Client.UpdateNodeStatus(ctx, upd); err != nil {
		return err
	}
	if ready != s.ready {
		s.ready = ready
		to := string(v1.ConditionFalse)
		if ready {
			to = string(v1.ConditionTrue)
		}
		s.opts.Tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindReady, Pod: s.opts.NodeName, To: to, Message: msg, Func: "setNodeReadyCondition"})
	}
	return nil
}

// readiness is the Ready condition the kubelet would report: not ready while the runtime state
// has errors (the runtime is down, or the PLEG is not healthy).
func (s *Status) readiness() (bool, string) {
	if err := s.opts.RuntimeState.Errors(); err != nil {
		return false, strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return true, readyMessage
}
