package world

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Manifests is the server behind the manifest URL: it answers every request with what Serve
// set last, 404 until then. The http source's own code runs unchanged; only the network is
// replaced.
type Manifests struct {
	status int
	body   string
}

// NewManifests returns a server that answers 404.
func NewManifests() *Manifests { return &Manifests{status: http.StatusNotFound} }

// Serve sets the answer to every later request.
func (s *Manifests) Serve(status int, body string) { s.status, s.body = status, body }

// Client is an HTTP client whose requests this server answers in process.
func (s *Manifests) Client() *http.Client { return &http.Client{Transport: s} }

// RoundTrip answers a request.
func (s *Manifests) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", s.status, http.StatusText(s.status)),
		StatusCode:    s.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/yaml"}},
		Body:          io.NopCloser(bytes.NewReader([]byte(s.body))),
		ContentLength: int64(len(s.body)),
		Request:       r,
	}, nil
}
