package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
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
	// serverWriteBlockTimeout is how long one write of a response may wait for a client that
	// does not read before the connection is closed; the kubelet lets it wait for the whole
	// 4h write timeout, holding what it was writing. The API server allows a watch the same.
	serverWriteBlockTimeout = 5 * time.Second
	// serverShutdownGrace is how long requests in flight get at shutdown before their
	// connections are closed, as the API server gives them.
	serverShutdownGrace = time.Second
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
	g.Go(ctx, "kubelet server", func(ctx context.Context) error { return serveKubelet(ctx, l, forwardedToNode(s.fleet)) })
	klog.FromContext(ctx).Info("Started kubelet server", "address", l.Addr().String())
	if exposed(l.Addr()) {
		klog.FromContext(ctx).Info("WARNING: the kubelet server has no authentication and listens on a non-loopback address: anyone who can reach it can read every pod, its logs and the node's metrics",
			"address", l.Addr().String())
	}
	return s, nil
}

// serveKubelet serves h on l with the kubelet server's bounds until ctx is done. Then requests in
// flight get serverShutdownGrace, and the connections of those still running (a follower of a
// log ends with ctx; a client that reads slowly may not) are closed: the server stops within
// about a second whatever its clients do, and that is no error.
func serveKubelet(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:        boundWrites(h),
		IdleTimeout:    serverIdleTimeout,
		ReadTimeout:    serverStreamTimeout,
		WriteTimeout:   serverStreamTimeout,
		MaxHeaderBytes: serverMaxHeaderBytes,
		BaseContext:    func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		klog.FromContext(ctx).V(2).Info("Closing kubelet server connections still busy after the shutdown grace period", "grace", serverShutdownGrace)
		err = srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// boundWrites gives every write of a response serverWriteBlockTimeout to reach the client, and
// no more than the request's write timeout allows: a client that stops reading then loses its
// connection, and with it what the handler was writing, instead of holding it for hours.
func boundWrites(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&boundedWriter{ResponseWriter: w, rc: http.NewResponseController(w), end: time.Now().Add(serverStreamTimeout)}, r)
	})
}

// boundedWriter sets the connection's write deadline before each write and flush. The deadline
// is wall time by nature; between writes it does not matter, since the next write sets it anew,
// and the last one also bounds the flush that ends the response.
type boundedWriter struct {
	http.ResponseWriter
	rc  *http.ResponseController
	end time.Time // the request's WriteTimeout
}

func (b *boundedWriter) deadline() {
	d := time.Now().Add(serverWriteBlockTimeout)
	if d.After(b.end) {
		d = b.end
	}
	_ = b.rc.SetWriteDeadline(d)
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.deadline()
	return b.ResponseWriter.Write(p)
}

// Flush flushes, for the log followers that flush after each batch.
func (b *boundedWriter) Flush() {
	b.deadline()
	_ = b.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (b *boundedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// add serves the node's kubelet on s, with cfg shown at /configz.
func (s *kubeletServing) add(name string, k *kubelet.Kubelet, clk clock.PassiveClock, cfg *runConfig) error {
	h, err := kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{
		Board:             k.Board,
		Clock:             clk,
		Metrics:           k.Metrics.Handler(),
		ProbeMetrics:      k.Metrics.ProbesHandler(),
		Configz:           configz(cfg, s),
		SyncLoopThreshold: max(2*cfg.Kubelet.SyncFrequency, 5*time.Minute),
		DisableDebugging:  !cfg.Kubelet.Server.EnableDebuggingHandlers,
		Profiling:         cfg.Kubelet.Server.EnableProfilingHandler,
		Cmdline:           redactedArgs(os.Args),
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
		"enableServer":            cfg.Kubelet.Server.Enable,
		"staticPodPath":           cfg.Kubelet.Sources.StaticPodPath,
		"staticPodURL":            cfg.Kubelet.Sources.StaticPodURL,
		"syncFrequency":           cfg.Kubelet.SyncFrequency.String(),
		"fileCheckFrequency":      cfg.Kubelet.Sources.FileCheckFrequency.String(),
		"httpCheckFrequency":      cfg.Kubelet.Sources.HTTPCheckFrequency.String(),
		"address":                 s.host,
		"port":                    s.port,
		"readOnlyPort":            0,
		"enableDebuggingHandlers": cfg.Kubelet.Server.EnableDebuggingHandlers,
		"enableProfilingHandler":  cfg.Kubelet.Server.EnableProfilingHandler,
		"healthzPort":             0,
		"authentication":          map[string]any{"anonymous": map[string]any{"enabled": true}, "webhook": map[string]any{"enabled": false}},
		"authorization":           map[string]any{"mode": "AlwaysAllow"},
	}
}

// kubeletServerAddr joins --address and --port.
func kubeletServerAddr(address string, port int) string {
	return net.JoinHostPort(address, strconv.Itoa(port))
}
