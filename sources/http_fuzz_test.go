package sources

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fuzzTransport answers every request with one status and body, in-process.
type fuzzTransport struct {
	status int
	body   []byte
}

func (t fuzzTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: t.status, Status: http.StatusText(t.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(t.body)), Request: r,
	}, nil
}

// FuzzHTTPPoll polls the HTTP source through a whole poll (request, status, read, decode of one
// pod or a list, the SET) with whatever status and body the fuzzer picks, twice. No input may
// panic; every SET is for the http source and holds pods bound to the node; and the second poll
// of the same body is silent, as the kubelet's stored-body check makes it (quirks Q1 and Q2).
func FuzzHTTPPoll(f *testing.F) {
	f.Add(200, []byte(podYAMLForFuzz))
	f.Add(200, []byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"i"}]}}]}`))
	f.Add(200, []byte(""))
	f.Add(200, []byte("{"))
	f.Add(200, []byte("apiVersion: v1\nkind: List\nitems: [1]\n"))
	f.Add(404, []byte("not found"))
	f.Add(500, []byte(strings.Repeat("x", 2000)))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			status = 200
		}
		h, err := NewHTTP(HTTPOptions{
			URL: "http://manifests.invalid/pods", NodeName: "node-1",
			Client: &http.Client{Transport: fuzzTransport{status: status, body: body}},
			Clock:  vclock.New(vclock.Epoch), Tracer: trace.Discard,
		})
		if err != nil {
			t.Fatal(err)
		}
		for poll := range 2 {
			u, err := h.Poll(context.Background())
			if u != nil {
				if u.Source != podconfig.HTTPSource || u.Op != podconfig.SET {
					t.Fatalf("poll %d: update %s %s, want a SET from %s", poll, u.Source, u.Op, podconfig.HTTPSource)
				}
				for _, p := range u.Pods {
					if p.Spec.NodeName != "node-1" {
						t.Errorf("poll %d: pod %s/%s bound to %q, want node-1", poll, p.Namespace, p.Name, p.Spec.NodeName)
					}
				}
			}
			if err != nil && u != nil && !errors.Is(err, ErrEmptyBody) {
				t.Errorf("poll %d: update and error %v, want only an empty body to give both", poll, err)
			}
			if poll == 1 && status == http.StatusOK && len(body) > 0 && (u != nil || err != nil) {
				t.Errorf("second poll of the same body = %v, %v, want nothing", u, err)
			}
		}
	})
}

const podYAMLForFuzz = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: c
    image: nginx
`
