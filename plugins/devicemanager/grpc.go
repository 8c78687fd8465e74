package devicemanager

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// DialTimeout bounds the blocking dial of a plugin's endpoint.
const DialTimeout = 10 * time.Second

// Dial connects to a unix socket over gRPC and blocks until ready or the timeout: the plugin
// manager's DialUnix, passed in to keep the packages apart.
type Dial func(ctx context.Context, socketPath string, timeout time.Duration) (*grpc.ClientConn, error)

// GRPC is the Connector of `run`: it dials a plugin's unix socket with the kubelet's blocking
// dial, and streams ListAndWatch on a goroutine of its own per connection.
type GRPC struct {
	// Dial connects to a socket. Required.
	Dial Dial
}

var _ Connector = GRPC{}

// Connect dials endpoint, at most DialTimeout.
func (g GRPC) Connect(ctx context.Context, endpoint string) (Conn, error) {
	if g.Dial == nil {
		return nil, errors.New("no dialer")
	}
	cc, err := g.Dial(ctx, endpoint, DialTimeout)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	return &grpcConn{cc: cc, client: pluginapi.NewDevicePluginClient(cc), ctx: sctx, cancel: cancel, done: make(chan struct{})}, nil
}

// grpcConn is one plugin's connection; its stream runs on a goroutine that ends when the stream
// ends or Close cancels it.
type grpcConn struct {
	cc     *grpc.ClientConn
	client pluginapi.DevicePluginClient
	ctx    context.Context // the stream's, ended by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when the stream's goroutine has ended

	mu      sync.Mutex // guards started and closed
	started bool
	closed  bool
}

func (c *grpcConn) Allocate(ctx context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	return c.client.Allocate(ctx, r)
}

func (c *grpcConn) GetPreferredAllocation(ctx context.Context, r *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	return c.client.GetPreferredAllocation(ctx, r)
}

func (c *grpcConn) GetDevicePluginOptions(ctx context.Context) (*pluginapi.DevicePluginOptions, error) {
	return c.client.GetDevicePluginOptions(ctx, &pluginapi.Empty{})
}

// ListAndWatch starts the stream's goroutine, unless the connection is closed already.
func (c *grpcConn) ListAndWatch(s Stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.started {
		return
	}
	c.started = true
	go c.watch(s)
}

// watch hands every message to s until the stream ends; an end that Close did not cause is
// reported to s.End.
func (c *grpcConn) watch(s Stream) {
	defer close(c.done)
	stream, err := c.client.ListAndWatch(c.ctx, &pluginapi.Empty{})
	for err == nil {
		var resp *pluginapi.ListAndWatchResponse
		if resp, err = stream.Recv(); err == nil {
			s.Update(resp.Devices)
		}
	}
	_ = c.cc.Close()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if !closed {
		s.End(err)
	}
}

// Close cancels the stream, closes the connection and waits for the stream's goroutine.
func (c *grpcConn) Close() error {
	c.mu.Lock()
	c.closed = true
	started := c.started
	c.mu.Unlock()
	c.cancel()
	_ = c.cc.Close() // the stream's goroutine may have closed it first
	if started {
		<-c.done
	}
	return nil
}
