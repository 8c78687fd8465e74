package replay

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// manifestURL is the static pod URL of a replay. The .invalid domain can never resolve, so no
// request can leave the process even if the transport were bypassed.
const manifestURL = "http://static-pods.invalid/manifests"

// scriptedHTTP answers every request with what the last serveHTTP step set: the real HTTP
// source code runs unchanged, only the network is replaced.
type scriptedHTTP struct {
	status int
	body   string
}

func (s *scriptedHTTP) RoundTrip(r *http.Request) (*http.Response, error) {
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
