package kubelet

import (
	"context"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sources"
	"github.com/minikubelet/minikubelet/syncloop"
)

// Sources are the cores of the kubelet's pod sources; each is nil when it is not configured.
type Sources struct {
	// File reads staticPodPath.
	File *sources.File
	// HTTP polls staticPodURL.
	HTTP *sources.HTTP
	// API holds the pods bound to the node, as the reflector delivers them.
	API *sources.API
}

// buildSources is makePodSourceConfig: PodConfig's core, then the sources registered with it in
// the kubelet's order (file, http, api). The file source is configured by staticPodPath, the http
// source by staticPodURL, the api source by an API server.
func (k *Kubelet) buildSources(recorder podconfig.EventRecorder) error {
	opts := k.opts
	cfg, clk, tracer := opts.Config.Sources, opts.Clock, opts.Tracer
	var err error
	if k.PodConfig, err = podconfig.NewStorage(podconfig.StorageOptions{Clock: clk, Tracer: tracer, Recorder: recorder}); err != nil {
		return err
	}
	if cfg.StaticPodPath != "" {
		k.PodConfig.Register(podconfig.FileSource)
		if k.Sources.File, err = sources.NewFile(sources.FileOptions{Path: cfg.StaticPodPath, NodeName: opts.NodeName,
			Period: cfg.FileCheckFrequency, Clock: clk, Tracer: tracer, FS: opts.World.StaticPods}); err != nil {
			return err
		}
	}
	if cfg.StaticPodURL != "" {
		k.PodConfig.Register(podconfig.HTTPSource)
		if k.Sources.HTTP, err = sources.NewHTTP(sources.HTTPOptions{URL: cfg.StaticPodURL, Header: cfg.StaticPodURLHeader, NodeName: opts.NodeName,
			Period: cfg.HTTPCheckFrequency, Client: opts.World.ManifestClient, Clock: clk, Tracer: tracer}); err != nil {
			return err
		}
	}
	if opts.World.API != nil {
		k.PodConfig.Register(podconfig.APISource)
		if k.Sources.API, err = sources.NewAPI(sources.APIOptions{Tracer: tracer}); err != nil {
			return err
		}
	}
	return nil
}

// seenAllSources is PodConfig's SeenAllSources for the sync loop: through the mux's lock while
// Run runs it, from the core when a driver steps the kubelet.
func (k *Kubelet) seenAllSources(seen sets.Set[string]) bool {
	if k.mux != nil {
		return k.mux.SeenAllSources(seen)
	}
	return k.PodConfig.SeenAllSources(seen)
}

// listAPI makes the simulated reflector's first list, for a stepping driver's APIWatch.
func (k *Kubelet) listAPI() {
	if w := k.opts.World.APIWatch; w != nil && k.Sources.API != nil {
		k.pending = append(k.pending, w.List(k.Sources.API)...)
	}
}

// pumpAPI queues what the simulated watch delivered since the last pump, and reports whether it
// delivered anything.
func (k *Kubelet) pumpAPI() bool {
	w := k.opts.World.APIWatch
	if w == nil || k.Sources.API == nil {
		return false
	}
	us := w.Pump(k.Sources.API)
	k.pending = append(k.pending, us...)
	return len(us) > 0
}

func (k *Kubelet) queue(u *podconfig.Update) {
	if u != nil {
		k.pending = append(k.pending, *u)
	}
}

// merge hands every pending source update to PodConfig, and what PodConfig emits to the sync
// loop, in the order the sources produced them.
func (k *Kubelet) merge(ctx context.Context) {
	for len(k.pending) > 0 {
		in := k.pending[0]
		k.pending = k.pending[1:]
		for _, out := range k.PodConfig.Merge(in.Source, in) {
			var after func()
			if k.opts.OnConfig != nil {
				after = k.opts.OnConfig(out)
			}
			// The sync loop traces what it cannot handle (an unsupported operation) and goes on.
			_ = k.Loop.Step(ctx, syncloop.ConfigUpdate{Update: out})
			if after != nil {
				after()
			}
		}
	}
}
