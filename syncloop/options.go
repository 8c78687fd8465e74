package syncloop

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pleg"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/status"
	"github.com/minikubelet/minikubelet/trace"
	"github.com/minikubelet/minikubelet/workqueue"
)

// The kubelet's sync loop periods.
const (
	// SyncPeriod is the kubelet's syncTicker period: how often due work queue entries are synced.
	SyncPeriod = time.Second
	// HousekeepingPeriod is the kubelet's housekeepingPeriod: how often HandlePodCleanups runs.
	HousekeepingPeriod = 2 * time.Second
	// NodeStatusPeriod is the kubelet's default nodeStatusUpdateFrequency.
	NodeStatusPeriod = 10 * time.Second
	// LeaseRenewPeriod is how often the node lease is renewed: the kubelet's default
	// nodeLeaseDurationSeconds (40s) times its renew interval fraction (0.25).
	LeaseRenewPeriod = 10 * time.Second
)

// minDeadContainerInPod is how many dead instances of a container the container deletor keeps after
// a ContainerDied event, unless the pod's content should be removed.
const minDeadContainerInPod = 1

// orphanKillGracePeriod is the grace, in seconds, housekeeping and SyncTerminatingRuntimePod give a
// pod that exists only in the runtime.
const orphanKillGracePeriod int64 = 1

// MirrorClient creates and deletes mirror pods: the part of the kubelet's mirror client that the
// sync loop calls. A nil MirrorClient is a standalone kubelet: nothing is created or deleted.
type MirrorClient interface {
	// CreateMirrorPod creates the mirror pod of the static pod.
	CreateMirrorPod(ctx context.Context, static *v1.Pod) error
	// DeleteMirrorPod deletes the mirror pod with the full name, with grace 0 and, when uid is not
	// nil, a UID precondition. It reports whether the API deleted it.
	DeleteMirrorPod(ctx context.Context, fullName string, uid *types.UID) (bool, error)
}

// Options holds a Loop's collaborators. It is the list of the kubelet components the sync loop
// talks to, which is why it is longer than an options struct should be; each collaborator is
// its own small core.
type Options struct {
	// NodeName is this node's name. Required.
	NodeName string
	// NodeIP is the node's InternalIP address, reported as every pod's hostIP when there is a
	// NodeClient. Empty reports none.
	NodeIP string
	// Clock is the time source of every decision. Required.
	Clock clock.PassiveClock
	// Tracer receives the loop's trace events. Nil means trace.Discard.
	Tracer trace.Tracer
	// Rand is the seeded random source of the pod workers' jitter, used when Workers.Rand is
	// nil. Nil leaves the workers' own fixed-seed default.
	Rand *rand.Rand

	// PodManager is the desired pod set. Required.
	PodManager *podmanager.Manager
	// Workers configures the pod workers New builds; New sets their Syncer to the Loop and fills
	// the clock, tracer, random source, cache and queue from these Options where they are unset.
	Workers podworkers.Options
	// WorkQueue is the timestamped work queue the pod workers fill and the sync tick drains.
	// Required.
	WorkQueue *workqueue.Queue
	// Runtime is the container runtime. Required.
	Runtime *fakeruntime.Runtime
	// PLEG relists the runtime; Cache is the pod cache it fills. Both required.
	PLEG  *pleg.PLEG
	Cache *pleg.Cache
	// Status configures the status manager New builds; New fills its clock, tracer, pod manager
	// and deletion safety (the Loop, asking the pod workers) where they are unset.
	Status status.Options
	// MirrorClient creates and deletes mirror pods. Nil is a standalone kubelet.
	MirrorClient MirrorClient
	// Recorder receives the kubelet's Kubernetes events. Nil records none.
	Recorder record.EventRecorder
	// SourcesReady reports whether every configured source has been seen, given the sources the
	// loop has seen so far: PodConfig's SeenAllSources. Nil means always ready.
	SourcesReady func(seen sets.Set[string]) bool
	// NodeClient registers the node and sends its heartbeats. Nil is a standalone kubelet: no
	// node object, no lease.
	NodeClient NodeClient
}

// Errors from New.
var (
	// ErrMissingOption is wrapped by New when a required option is unset.
	ErrMissingOption = errors.New("missing required option")
)

func (o *Options) validate() error {
	var missing []string
	if o.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.PodManager == nil {
		missing = append(missing, "PodManager")
	}
	if o.WorkQueue == nil {
		missing = append(missing, "WorkQueue")
	}
	if o.Runtime == nil {
		missing = append(missing, "Runtime")
	}
	if o.PLEG == nil {
		missing = append(missing, "PLEG")
	}
	if o.Cache == nil {
		missing = append(missing, "Cache")
	}
	if len(missing) > 0 {
		return fmt.Errorf("options %s: %w", strings.Join(missing, ", "), ErrMissingOption)
	}
	return nil
}
