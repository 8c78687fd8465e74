package sampleplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// DeviceOptions configure a Device plugin.
type DeviceOptions struct {
	// Dir is the kubelet's device plugin directory (where kubelet.sock is). Required.
	Dir string
	// Resource is the extended resource name, such as example.com/gpu. Required.
	Resource string
	// Count is how many devices the plugin offers, all healthy at first. Required, at least 1.
	Count int
	// Socket is the plugin's socket name in Dir; empty derives one from the resource name.
	Socket string
	// PreferredAllocation makes the plugin offer GetPreferredAllocation (it prefers the highest ids).
	PreferredAllocation bool
}

// Device is a sample device plugin: Count devices named <resource base>-<i>.
type Device struct {
	pluginapi.UnimplementedDevicePluginServer
	opts DeviceOptions

	mu      sync.Mutex // guards devices and watchers
	devices []*pluginapi.Device
	// watchers are the open ListAndWatch streams, each told to resend on a change.
	watchers map[chan struct{}]bool
}

// NewDevice returns a Device; nothing listens before Run.
func NewDevice(opts DeviceOptions) (*Device, error) {
	if opts.Dir == "" || opts.Resource == "" || opts.Count < 1 {
		return nil, errors.New("new sample device plugin: options Dir, Resource and Count (at least 1) are required")
	}
	if opts.Socket == "" {
		opts.Socket = strings.NewReplacer("/", "-", ".", "-").Replace(opts.Resource) + ".sock"
	}
	base := opts.Resource[strings.LastIndex(opts.Resource, "/")+1:]
	d := &Device{opts: opts, watchers: map[chan struct{}]bool{}}
	for i := range opts.Count {
		d.devices = append(d.devices, &pluginapi.Device{ID: base + "-" + strconv.Itoa(i), Health: pluginapi.Healthy})
	}
	return d, nil
}

// Endpoint is the plugin's socket path.
func (d *Device) Endpoint() string { return filepath.Join(d.opts.Dir, d.opts.Socket) }

// SetHealth marks devices healthy or unhealthy (all of them for no ids) and sends the new list on
// every ListAndWatch stream.
func (d *Device) SetHealth(healthy bool, ids ...string) error {
	h := pluginapi.Unhealthy
	if healthy {
		h = pluginapi.Healthy
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	found := 0
	for _, dev := range d.devices {
		if len(ids) == 0 || slices.Contains(ids, dev.ID) {
			dev.Health = h
			found++
		}
	}
	if len(ids) > 0 && found != len(ids) {
		return fmt.Errorf("set health of %v: unknown device", ids)
	}
	for w := range d.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	return nil
}

// Run serves the plugin on its socket, registers it on kubelet.sock, and serves until ctx is done;
// it removes its socket on the way out.
func (d *Device) Run(ctx context.Context) error {
	// Like real device plugins, wait for the kubelet's registration socket: the device manager
	// removes every other socket in the directory when it starts.
	if err := waitForFile(ctx, filepath.Join(d.opts.Dir, "kubelet.sock")); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	sock := d.Endpoint()
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("device plugin socket: %w", err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, d)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() { srv.Stop(); <-served }()
	if err := d.register(ctx); err != nil {
		// The kubelet may be using the plugin before its answer to Register arrives; a stop in
		// that window is a stop, not a failed registration.
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return fmt.Errorf("device plugin server: %w", err)
	}
}

func (d *Device) register(ctx context.Context) error {
	kubelet := filepath.Join(d.opts.Dir, "kubelet.sock")
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", kubelet, err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     d.opts.Socket,
		ResourceName: d.opts.Resource,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: d.opts.PreferredAllocation},
	}, grpc.WaitForReady(true))
	if err != nil {
		return fmt.Errorf("register %s with the kubelet: %w", d.opts.Resource, err)
	}
	return nil
}

// GetDevicePluginOptions answers the kubelet's first call.
func (d *Device) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: d.opts.PreferredAllocation}, nil
}

// ListAndWatch sends the device list, then again after every health change.
func (d *Device) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	changed := make(chan struct{}, 1)
	d.mu.Lock()
	d.watchers[changed] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.watchers, changed)
		d.mu.Unlock()
	}()
	for {
		if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: d.snapshot()}); err != nil {
			return err
		}
		select {
		case <-s.Context().Done():
			return nil
		case <-changed:
		}
	}
}

func (d *Device) snapshot() []*pluginapi.Device {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*pluginapi.Device, len(d.devices))
	for i, dev := range d.devices {
		out[i] = &pluginapi.Device{ID: dev.ID, Health: dev.Health}
	}
	return out
}

// GetPreferredAllocation prefers the highest device ids.
func (d *Device) GetPreferredAllocation(_ context.Context, r *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, c := range r.ContainerRequests {
		ids := slices.Sorted(slices.Values(c.AvailableDeviceIDs))
		slices.Reverse(ids)
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids[:min(int(c.AllocationSize), len(ids))]})
	}
	return resp, nil
}

// Allocate hands each container its devices as an environment variable.
func (d *Device) Allocate(_ context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	key := strings.ToUpper(strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(d.opts.Resource))
	for _, c := range r.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{key: strings.Join(c.DevicesIds, ",")},
		})
	}
	return resp, nil
}

// waitForFile returns once path exists, watching its directory (created if needed) for it.
func waitForFile(ctx context.Context, path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	if err := w.Add(dir); err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-w.Events:
			if ev.Name == path && ev.Has(fsnotify.Create) {
				return nil
			}
		case err := <-w.Errors:
			return fmt.Errorf("watch %s: %w", dir, err)
		}
	}
}
