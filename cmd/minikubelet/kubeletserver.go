package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

// The kubelet server's timeouts (pkg/kubelet/server): idle 90s, read and write 4h, 1 MiB headers.
const (
	serverIdleTimeout    = 90 * time.Second
	serverStreamTimeout  = 4 * time.Hour
	serverMaxHeaderBytes = 1 << 20
	serverShutdownGrace  = 5 * time.Second
)

// kubeletServing is the one listener every simulated node of the process is served on.
type kubeletServing struct {
	fleet *kubeletserver.Fleet
	host  string // the address the nodes advertise
	port  int32
}

// startKubeletServer listens on addr and serves the fleet there until ctx is done; g waits for
// it. Port 0 picks a free port.
func startKubeletServer(ctx context.Context, addr string, g *group) (*kubeletServing, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kubelet server: listen on %s: %w", addr, err)
	}
	tcp := l.Addr().(*net.TCPAddr)
	s := &kubeletServing{fleet: kubeletserver.NewFleet(l.Addr().String()), host: tcp.IP.String(), port: int32(tcp.Port)}
	srv := &http.Server{
		Handler:        forwardedToNode(s.fleet),
		IdleTimeout:    serverIdleTimeout,
		ReadTimeout:    serverStreamTimeout,
		WriteTimeout:   serverStreamTimeout,
		MaxHeaderBytes: serverMaxHeaderBytes,
		BaseContext:    func(net.Listener) context.Context { return ctx },
	}
	g.Go(ctx, "kubelet server", func(ctx context.Context) error {
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(l) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverShutdownGrace)
		defer cancel()
		// Followers of a log end with ctx (their requests' base context); Shutdown waits for them.
		err := srv.Shutdown(sctx)
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	})
	klog.FromContext(ctx).Info("Started kubelet server", "address", l.Addr().String())
	if exposed(l.Addr()) {
		klog.FromContext(ctx).Info("WARNING: the kubelet server has no authentication and listens on a non-loopback address: anyone who can reach it can read every pod, its logs and the node's metrics",
			"address", l.Addr().String())
	}
	return s, nil
}

// add serves the node's kubelet on s, with cfg shown at /configz.
func (s *kubeletServing) add(name string, k *kubelet.Kubelet, clk clock.PassiveClock, cfg *runConfig) error {
	h, err := kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{
		Board:             k.Board,
		Clock:             clk,
		Metrics:           k.Metrics.Handler(),
		ProbeMetrics:      k.Metrics.ProbesHandler(),
		Configz:           configz(cfg, s),
		SyncLoopThreshold: max(2*cfg.Kubelet.SyncFrequency, 5*time.Minute),
	})
	if err != nil {
		return fmt.Errorf("serve node %s: %w", name, err)
	}
	s.fleet.Add(name, h, k.Board)
	return nil
}

// defaultSnapshotPeriod bounds how often `run` takes a node's snapshot: at the end of a sync loop
// pass, at most once per period. Taking one copies every pod's status, and a fleet's nodes pass
// through their loops many times a second; the server's view is then at most this old.
const defaultSnapshotPeriod = 500 * time.Millisecond

// configz is the part of the KubeletConfiguration the simulated kubelet honours, with the v1beta1
// field names.
func configz(cfg *runConfig, s *kubeletServing) map[string]any {
	return map[string]any{
		"enableServer":       cfg.Kubelet.Server.Enable,
		"staticPodPath":      cfg.Kubelet.Sources.StaticPodPath,
		"staticPodURL":       cfg.Kubelet.Sources.StaticPodURL,
		"syncFrequency":      cfg.Kubelet.SyncFrequency.String(),
		"fileCheckFrequency": cfg.Kubelet.Sources.FileCheckFrequency.String(),
		"httpCheckFrequency": cfg.Kubelet.Sources.HTTPCheckFrequency.String(),
		"address":            s.host,
		"port":               s.port,
		"readOnlyPort":       0,
		"healthzPort":        0,
		"authentication":     map[string]any{"anonymous": map[string]any{"enabled": true}, "webhook": map[string]any{"enabled": false}},
		"authorization":      map[string]any{"mode": "AlwaysAllow"},
	}
}

// kubeletServerAddr joins --address and --port.
func kubeletServerAddr(address string, port int) string {
	return net.JoinHostPort(address, strconv.Itoa(port))
}
