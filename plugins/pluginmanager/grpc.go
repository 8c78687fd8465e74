package pluginmanager

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// The kubelet's timeouts for the calls to a registration socket.
const (
	// DialTimeout bounds the blocking dial of the registration socket.
	DialTimeout = 10 * time.Second
	// GetInfoTimeout bounds GetInfo.
	GetInfoTimeout = time.Second
	// NotifyTimeout bounds each NotifyRegistrationStatus.
	NotifyTimeout = 5 * time.Second
)

// GRPCDialer dials registration sockets over gRPC on unix sockets, with insecure credentials as
// the kubelet does.
type GRPCDialer struct{}

var _ Dialer = GRPCDialer{}

// Dial connects to socketPath and waits until the connection is ready, at most DialTimeout.
func (GRPCDialer) Dial(ctx context.Context, socketPath string) (Client, error) {
	conn, err := DialUnix(ctx, socketPath, DialTimeout)
	if err != nil {
		return nil, err
	}
	return &grpcClient{conn: conn, api: registerapi.NewRegistrationClient(conn)}, nil
}

// DialUnix connects to a unix socket over gRPC and blocks until the connection is ready or the
// timeout passes: the kubelet's blocking dial.
func DialUnix(ctx context.Context, socketPath string, timeout time.Duration) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+socketPath, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("failed to dial socket %s, err: %w", socketPath, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return conn, nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			_ = conn.Close()
			return nil, fmt.Errorf("failed to dial socket %s, err: %w (last state %s)", socketPath, ctx.Err(), s)
		}
	}
}

type grpcClient struct {
	conn *grpc.ClientConn
	api  registerapi.RegistrationClient
}

func (c *grpcClient) GetInfo(ctx context.Context) (*registerapi.PluginInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, GetInfoTimeout)
	defer cancel()
	return c.api.GetInfo(ctx, &registerapi.InfoRequest{})
}

func (c *grpcClient) NotifyRegistrationStatus(ctx context.Context, s *registerapi.RegistrationStatus) error {
	ctx, cancel := context.WithTimeout(ctx, NotifyTimeout)
	defer cancel()
	_, err := c.api.NotifyRegistrationStatus(ctx, s)
	return err
}

func (c *grpcClient) Close() error { return c.conn.Close() }
