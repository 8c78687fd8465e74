package kubelet

import (
	"context"
	"math/rand/v2"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"

	"github.com/minikubelet/minikubelet/housekeeping"
	"github.com/minikubelet/minikubelet/podmanager"
	"github.com/minikubelet/minikubelet/podsync"
	"github.com/minikubelet/minikubelet/podworkers"
	"github.com/minikubelet/minikubelet/syncloop"
	"github.com/minikubelet/minikubelet/volumemanager"
	"github.com/minikubelet/minikubelet/volumemanager/objects"
)

// volumeDeps are what the volume manager takes from the sync side and the rest of the process.
type volumeDeps struct {
	n        *Sync
	recorder volumemanager.EventRecorder
	objects  Objects
	// sourcesReady is the sync loop's sources-ready check, asked by the populator.
	sourcesReady func(seen sets.Set[string]) bool
}

// buildVolumes builds the volume manager (NewMainKubelet's NewVolumeManager, with the token
// manager its projected volumes ask, over the API client) once the pod manager and the pod
// workers exist. A standalone kubelet has no ConfigMap, Secret or token source: its volumes of
// those kinds fail to set up, as they do there, and no token manager (nil).
func buildVolumes(opts Options, d volumeDeps) (*volumemanager.Manager, *volumemanager.TokenManager, error) {
	vopts := volumemanager.Options{
		Clock: opts.Clock, Tracer: opts.Tracer, Pods: d.n.Pods, States: d.n.Workers, Recorder: d.recorder,
		PodDirs: opts.World.PodDirs, Faults: opts.World.VolumeFaults, Logger: opts.Logger,
		// The runtime's sandboxes name a pod reconstructed from its directory alone.
		PodName: func(uid types.UID) (string, string, bool) {
			if d.n.Runtime == nil {
				return "", "", false
			}
			return d.n.Runtime.PodName(uid)
		},
		SourcesReady: func() bool {
			if d.sourcesReady == nil || d.n.Loop == nil {
				return true
			}
			return d.sourcesReady(sets.New(d.n.Loop.SourcesSeen()...))
		},
	}
	if d.objects.ConfigMaps != nil {
		vopts.ConfigMaps, vopts.Secrets = d.objects.ConfigMaps, d.objects.Secrets
	}
	var tokens *volumemanager.TokenManager
	if client := opts.World.API; client != nil {
		var tc volumemanager.TokenClient = tokenClient{client: client}
		if w := opts.World.Writes; w != nil && w.Tokens != nil {
			tc = w.Tokens
		}
		var err error
		tokens, err = volumemanager.NewTokenManager(volumemanager.TokenOptions{
			Clock: opts.Clock, Tracer: opts.Tracer, Client: tc,
			Rand: rand.New(rand.NewPCG(opts.Seed, opts.Seed+3)),
		})
		if err != nil {
			return nil, nil, err
		}
		vopts.Tokens = tokens
	}
	m, err := volumemanager.New(vopts)
	return m, tokens, err
}

// tokenClient is the token manager's client: create serviceaccounts/token.
type tokenClient struct{ client kubernetes.Interface }

// CreateToken requests a token for the service account.
func (c tokenClient) CreateToken(ctx context.Context, namespace, serviceAccount string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return c.client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, tr, metav1.CreateOptions{})
}

// volumeWaits is the volume manager as the sync functions wait on it. The sync functions are
// built before the pod workers, which the volume manager asks, so m is set once it exists.
type volumeWaits struct{ m *volumemanager.Manager }

// WaitForAttachAndMount starts SyncPod's wait; nil when there is nothing to wait for.
func (v *volumeWaits) WaitForAttachAndMount(pod *v1.Pod) podsync.VolumeWait {
	if w := v.m.WaitForAttachAndMount(pod); w != nil {
		return w
	}
	return nil
}

// WaitForUnmount starts SyncTerminatedPod's wait.
func (v *volumeWaits) WaitForUnmount(pod *v1.Pod) podsync.VolumeWait { return v.m.WaitForUnmount(pod) }

// WaitForVolumesGone starts SyncTerminatedPod's second poll.
func (v *volumeWaits) WaitForVolumesGone(pod *v1.Pod) podsync.VolumeWait {
	return v.m.WaitForVolumesGone(pod)
}

// The wiring relies on these implementations.
var (
	_ volumemanager.PodLister       = (*podmanager.Manager)(nil)
	_ volumemanager.PodStates       = (*podworkers.Workers)(nil)
	_ volumemanager.ConfigMapGetter = (*objects.Manager)(nil)
	_ volumemanager.SecretGetter    = (*objects.Manager)(nil)
	_ volumemanager.TokenGetter     = (*volumemanager.TokenManager)(nil)
	_ volumemanager.TokenClient     = tokenClient{}
	_ podsync.Volumes               = (*volumeWaits)(nil)
	_ podsync.VolumeWait            = (*volumemanager.Wait)(nil)
	_ syncloop.Timed                = (*volumemanager.Manager)(nil)
	_ housekeeping.PodDirs          = (*volumemanager.Manager)(nil)
)
