package kubelet

import (
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubelet/envvars"
	"github.com/minikubelet/minikubelet/volumemanager/objects"
)

// ObjectSource is what the kubelet reads of the API server besides pods and its node: a watch of
// each ConfigMap and Secret its pods reference, and the Services of the service informer.
type ObjectSource interface {
	objects.Source
	objects.Services
}

// Objects are the kubelet's ConfigMap and Secret managers (NewMainKubelet's
// secretManager and configMapManager, watch-based as v1.35's default strategy is) and the
// environment maker that reads them. A standalone kubelet has none of the managers: a reference
// to a ConfigMap or Secret then fails as it does there.
type Objects struct {
	ConfigMaps *objects.Manager
	Secrets    *objects.Manager
	Env        *envvars.Maker
	// reflectors are the watches Run runs; nil when the world steps them (a replay) or without an
	// API server.
	reflectors *objects.Reflectors
}

// buildObjects builds the managers over the world's source, or, in `run`, over reflectors of
// the API server that Run runs.
func buildObjects(opts Options) (Objects, error) {
	eopts := envvars.Options{}
	if opts.NodeIP != "" {
		eopts.HostIPs = []string{opts.NodeIP}
	}
	machine := opts.Config.Machine
	eopts.Allocatable = func() v1.ResourceList {
		_, allocatable := machine.Resources()
		return allocatable
	}
	client := opts.World.API
	if client == nil {
		return Objects{Env: envvars.New(eopts)}, nil
	}
	var o Objects
	src := opts.World.Objects
	if src == nil {
		o.reflectors = objects.NewReflectors(client)
		src = o.reflectors
	}
	var err error
	if o.ConfigMaps, err = objects.New(objects.ConfigMaps, src); err != nil {
		return Objects{}, err
	}
	if o.Secrets, err = objects.New(objects.Secrets, src); err != nil {
		return Objects{}, err
	}
	eopts.ConfigMaps, eopts.Secrets, eopts.Services = o.ConfigMaps, o.Secrets, src
	o.Env = envvars.New(eopts)
	return o, nil
}

// RegisterPod and UnregisterPod tell both managers what a pod references (SyncPod and
// SyncTerminatedPod).
func (o Objects) RegisterPod(pod *v1.Pod) {
	if o.ConfigMaps != nil {
		o.Secrets.RegisterPod(pod)
		o.ConfigMaps.RegisterPod(pod)
	}
}

// UnregisterPod drops what the pod referenced.
func (o Objects) UnregisterPod(pod *v1.Pod) {
	if o.ConfigMaps != nil {
		o.Secrets.UnregisterPod(pod)
		o.ConfigMaps.UnregisterPod(pod)
	}
}
