package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet"
)

// KubeletSocket is the registration socket's name in the device plugin directory.
const KubeletSocket = "kubelet.sock"

// ServerOptions configure a Server.
type ServerOptions struct {
	// Handler takes the registrations in. Required.
	Handler *Handler
	// Dir is the device plugin directory: kubelet.sock, the plugins' sockets, the checkpoint.
	// Required.
	Dir string
}

// Server is the device manager's runner: the manager's Start, and the Registration service on
// kubelet.sock, whose Register goes to the Handler as the plugin manager's registrations do.
type Server struct {
	pluginapi.UnimplementedRegistrationServer
	opts ServerOptions
}

// NewServer returns a Server; nothing listens before Run.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Handler == nil || opts.Dir == "" {
		return nil, fmt.Errorf("new device manager server: options Handler and Dir: %w", minikubelet.ErrMissingOption)
	}
	return &Server{opts: opts}, nil
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

// maxSocketPath is the longest path a unix socket may have on Linux, the kubelet's platform:
// sockaddr_un's 108 bytes less the terminating NUL. Other systems allow fewer (103 on macOS),
// where a path in between still meets the system's own error.
const maxSocketPath = 107

// Run is the manager's Start: it reads the checkpoint, removes stale sockets from the directory,
// serves kubelet.sock until ctx is done, then disconnects every plugin.
func (s *Server) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	if err := s.opts.Handler.Start(); err != nil {
		logger.Error(err, "Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date")
	}
	defer s.opts.Handler.Close()
	if err := os.MkdirAll(s.opts.Dir, 0o750); err != nil {
		return fmt.Errorf("device plugin directory: %w", err)
	}
	if err := cleanupSockets(s.opts.Dir); err != nil {
		logger.Error(err, "Failed to clean up stale device plugin sockets")
	}
	sock := filepath.Join(s.opts.Dir, KubeletSocket)
	if len(sock) > maxSocketPath {
		// Linux says only "invalid argument" for a path that does not fit sockaddr_un.
		return fmt.Errorf("device plugin registration socket %s: %d bytes, longer than the %d a unix socket's path may have on Linux: choose a shorter root directory", sock, len(sock), maxSocketPath)
	}
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
	return &pluginapi.Empty{}, s.opts.Handler.Register(ctx, r)
}
