package draplugin

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcstats "google.golang.org/grpc/stats"
)

// GRPC is the Connector of `run`: a gRPC client connection to the plugin's unix socket, watched
// through a stats handler as the kubelet's monitoredPlugin watches it. No call is made on it: a
// v1.35 kubelet only calls NodePrepareResources and NodeUnprepareResources, for pods with
// claims, which minikubelet does not prepare.
type GRPC struct{}

var _ Connector = GRPC{}

// Connect creates the client connection; it connects once Start is called.
func (GRPC) Connect(endpoint string, watch func(connected bool)) (Conn, error) {
	s := &connStats{watch: watch}
	cc, err := grpc.NewClient("unix:"+endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(s))
	if err != nil {
		return nil, err
	}
	s.cc = cc
	return grpcConn{cc}, nil
}

type grpcConn struct{ cc *grpc.ClientConn }

func (c grpcConn) Start()       { c.cc.Connect() }
func (c grpcConn) Close() error { return c.cc.Close() }

// connStats reports a connection's transport coming up and going down.
type connStats struct {
	watch func(bool)
	cc    *grpc.ClientConn
}

func (*connStats) TagRPC(ctx context.Context, _ *grpcstats.RPCTagInfo) context.Context { return ctx }
func (*connStats) HandleRPC(context.Context, grpcstats.RPCStats)                       {}
func (*connStats) TagConn(ctx context.Context, _ *grpcstats.ConnTagInfo) context.Context {
	return ctx
}

func (s *connStats) HandleConn(_ context.Context, st grpcstats.ConnStats) {
	switch st.(type) {
	case *grpcstats.ConnBegin:
		s.watch(true)
	case *grpcstats.ConnEnd:
		// Without a new Connect an idle connection would not try again, and a plugin that comes
		// back would go unnoticed. gRPC deadlocks when Connect is called from inside HandleConn,
		// hence the goroutine, as in the kubelet; on a closed connection it does nothing.
		go s.cc.Connect()
		s.watch(false)
	}
}
