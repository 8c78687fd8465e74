package replay

import (
	"context"
	"fmt"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// ServeHTTP sets what the manifest URL answers from now on.
type ServeHTTP struct {
	Status  int    `json:"status"`
	Content string `json:"content"`
}

var (
	_ change     = (*ServeHTTP)(nil)
	_ sourceUser = (*ServeHTTP)(nil)
)

func (*ServeHTTP) source() string { return podconfig.HTTPSource }

func (s *ServeHTTP) validate() error {
	if s.Status < 100 || s.Status > 599 {
		return fmt.Errorf("serveHTTP.status %d is not an HTTP status code", s.Status)
	}
	return nil
}

// apply changes what the node's manifest URL answers; the next poll sees it.
func (s *ServeHTTP) apply(_ context.Context, e *engine, n *node) {
	n.manifests.Serve(s.Status, s.Content)
	e.stepEvent(trace.KindServeHTTP, "", fmt.Sprintf("%d, %d bytes", s.Status, len(s.Content)))
}
