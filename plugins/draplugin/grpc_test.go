package draplugin

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
)

// TestGRPCWatchesTheConnection: the connection reports up once started against a serving plugin,
// down when the plugin stops, and nothing after Close.
func TestGRPCWatchesTheConnection(t *testing.T) {
	dir, err := os.MkdirTemp("", "dra") // short: a unix socket's path has at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "dra.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	states := make(chan bool, 16)
	conn, err := GRPC{}.Connect(sock, func(up bool) { states <- up })
	if err != nil {
		t.Fatal(err)
	}
	conn.Start()
	if up := <-states; !up {
		t.Fatal("first report is down, want up")
	}
	srv.Stop()
	<-served
	if up := <-states; up {
		t.Fatal("report after the plugin stopped is up, want down")
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
