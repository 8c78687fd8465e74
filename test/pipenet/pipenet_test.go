package pipenet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/minikubelet/minikubelet/test/pipenet"
)

// A dialled pipe reaches the accepted end; once the listener is closed, Accept and Dial fail
// with net.ErrClosed, and a Dial whose context ends gives up.
func TestListener(t *testing.T) {
	l := pipenet.New()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	client, err := l.Dial(context.Background(), "tcp", "ignored:1")
	if err != nil {
		t.Fatal(err)
	}
	server := <-accepted
	go func() { _, _ = io.WriteString(client, "ping") }()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "ping" {
		t.Errorf("read %q, %v; want ping", buf, err)
	}
	_ = client.Close()
	_ = server.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Dial(ctx, "", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with an ended context = %v, want context.Canceled", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close = %v, want net.ErrClosed", err)
	}
	if _, err := l.Dial(context.Background(), "", ""); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Dial after Close = %v, want net.ErrClosed", err)
	}
	if got := l.Addr().Network(); got != "pipe" {
		t.Errorf("Addr().Network() = %q, want pipe", got)
	}
}
