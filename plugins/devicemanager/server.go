package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// KubeletSocket is the registration socket's name in the device plugin directory.
const KubeletSocket = "kubelet.sock"

// DialTimeout bounds the blocking dial of a plugin's endpoint.
const DialTimeout = 10 * time.Second

// Dial connects to a unix socket over gRPC and blocks until ready or the timeout: the plugin
// manager's DialUnix, passed in to keep the packages apart.
type Dial func(ctx context.Context, socketPath string, timeout time.Duration) (*grpc.ClientConn, error)

// ServerOptions configure a Server.
type ServerOptions struct {
	// Manager is the core the server drives. Required.
	Manager *Manager
	// Dir is the device plugin directory: kubelet.sock, the plugins' sockets, the checkpoint.
	// Required.
	Dir string
	// Dial connects to plugin endpoints. Required.
	Dial Dial
	// Tracer receives refused registrations. Required.
	Tracer trace.Tracer
}

// Server is the device manager's runner: the Registration service on kubelet.sock, the plugin
// manager's DevicePlugin handler, and one ListAndWatch goroutine per connected plugin.
type Server struct {
	pluginapi.UnimplementedRegistrationServer
	opts ServerOptions

	mu      sync.Mutex // guards opts.Manager and conns
	conns   map[string]*grpc.ClientConn
	streams sync.WaitGroup
	// ctx ends the ListAndWatch streams; set by Run before it serves.
	ctx context.Context
}

// NewServer returns a Server; nothing listens before Run.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Manager == nil || opts.Dir == "" || opts.Dial == nil || opts.Tracer == nil {
		return nil, fmt.Errorf("new device manager server: options Manager, Dir, Dial and Tracer: %w", minikubelet.ErrMissingOption)
	}
	return &Server{opts: opts, conns: map[string]*grpc.ClientConn{}}, nil
}

// FileCheckpoint is the checkpoint file in the device plugin directory.
type FileCheckpoint struct{ Path string }

// Write replaces the file atomically.
func (c FileCheckpoint) Write(b []byte) error {
	tmp := c.Path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.Path)
}

// Read returns the file's bytes, nil when it does not exist.
func (c FileCheckpoint) Read() ([]byte, error) {
	b, err := os.ReadFile(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Run is the manager's Start: it reads the checkpoint, removes stale sockets from the directory,
// serves kubelet.sock until ctx is done, then disconnects every plugin.
func (s *Server) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	s.mu.Lock()
	s.ctx = ctx
	err := s.opts.Manager.ReadCheckpoint()
	s.mu.Unlock()
	if err != nil {
		logger.Error(err, "Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date")
	}
	if err := os.MkdirAll(s.opts.Dir, 0o750); err != nil {
		return fmt.Errorf("device plugin directory: %w", err)
	}
	if err := cleanupSockets(s.opts.Dir); err != nil {
		logger.Error(err, "Failed to clean up stale device plugin sockets")
	}
	sock := filepath.Join(s.opts.Dir, KubeletSocket)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("device plugin registration socket: %w", err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, s)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	srv.Stop()
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.streams.Wait()
	if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("device plugin registration server: %w", err)
	}
	return nil
}

// cleanupSockets removes every unix socket in dir but the checkpoint, the manager's
// CleanupPluginDirectory.
func cleanupSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Name() == CheckpointFile || e.Type()&fs.ModeSocket == 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Register is the classic registration on kubelet.sock.
func (s *Server) Register(ctx context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	if err := validateRegisterRequest(r.Version, r.ResourceName); err != nil {
		s.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "Register", Func: "Register", Message: trace.Quote(err.Error())})
		return &pluginapi.Empty{}, err
	}
	if err := s.connect(ctx, r.ResourceName, filepath.Join(s.opts.Dir, r.Endpoint)); err != nil {
		s.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "Register", Func: "Register", Message: trace.Quote(err.Error())})
		return &pluginapi.Empty{}, err
	}
	return &pluginapi.Empty{}, nil
}

// ValidatePlugin is the plugin manager path's validation.
func (s *Server) ValidatePlugin(name, _ string, versions []string) error {
	return ValidatePlugin(name, versions)
}

// RegisterPlugin connects a plugin the plugin manager found.
func (s *Server) RegisterPlugin(name, endpoint string, _ []string, _ *time.Duration) error {
	ctx := context.Background()
	s.mu.Lock()
	if s.ctx != nil {
		ctx = s.ctx
	}
	s.mu.Unlock()
	return s.connect(ctx, name, endpoint)
}

// DeRegisterPlugin disconnects the plugin registered under name.
func (s *Server) DeRegisterPlugin(name, endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.conns[name]; ok {
		_ = c.Close()
		delete(s.conns, name)
	}
	s.opts.Manager.PluginDisconnected(name, endpoint)
}

// connect dials the plugin, asks for its options, records it and starts its ListAndWatch.
func (s *Server) connect(ctx context.Context, res, path string) error {
	conn, err := s.opts.Dial(ctx, path, DialTimeout)
	if err != nil {
		return fmt.Errorf("failed to dial device plugin: %w", err)
	}
	client := pluginapi.NewDevicePluginClient(conn)
	options, err := client.GetDevicePluginOptions(ctx, &pluginapi.Empty{})
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("failed to get device plugin options: %w", err)
	}
	streamCtx := context.Background()
	s.mu.Lock()
	if s.ctx != nil {
		streamCtx = s.ctx
	}
	if old, ok := s.conns[res]; ok {
		_ = old.Close()
	}
	s.conns[res] = conn
	s.opts.Manager.PluginConnected(res, path, grpcPlugin{client}, options)
	s.streams.Add(1)
	s.mu.Unlock()
	go s.listAndWatch(streamCtx, res, path, conn, client)
	return nil
}

// listAndWatch hands every ListAndWatch message to the manager and disconnects the plugin when
// the stream ends.
func (s *Server) listAndWatch(ctx context.Context, res, path string, conn *grpc.ClientConn, client pluginapi.DevicePluginClient) {
	defer s.streams.Done()
	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	for err == nil {
		var resp *pluginapi.ListAndWatchResponse
		if resp, err = stream.Recv(); err == nil {
			s.mu.Lock()
			s.opts.Manager.Update(res, resp.Devices)
			s.mu.Unlock()
		}
	}
	s.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "ListAndWatch", Func: "ListAndWatch", Message: fmt.Sprintf("resource=%s: %v", res, err)})
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = conn.Close()
	// Only the current connection's end stops the resource: a stream of a plugin that
	// registered again, or that DeRegisterPlugin already let go, ends without effect.
	if s.conns[res] == conn {
		delete(s.conns, res)
		s.opts.Manager.PluginDisconnected(res, path)
	}
}

// GetCapacity is Manager.GetCapacity under the server's lock, for the node status.
func (s *Server) GetCapacity() (capacity, allocatable v1.ResourceList, removed []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Manager.GetCapacity()
}

// Admit is Manager.Admit under the server's lock, for pod admission.
func (s *Server) Admit(ctx context.Context, pod *v1.Pod) (bool, string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts.Manager.Admit(ctx, pod)
}

// grpcPlugin is a plugin's DevicePlugin service as a Plugin.
type grpcPlugin struct{ c pluginapi.DevicePluginClient }

func (p grpcPlugin) Allocate(ctx context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	return p.c.Allocate(ctx, r)
}

func (p grpcPlugin) GetPreferredAllocation(ctx context.Context, r *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return p.c.GetPreferredAllocation(ctx, r)
}

// RemovePods is Manager.RemovePods under the server's lock.
func (s *Server) RemovePods(active map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Manager.RemovePods(active)
}
