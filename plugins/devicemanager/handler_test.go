package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// fakeConnector connects to in-memory plugins by endpoint; each connection delivers the
// plugin's devices as its first ListAndWatch message.
type fakeConnector struct {
	plugins     map[string]string // endpoint → device spec (devs)
	optionsFail bool
	conns       []*fakeConn
}

func (c *fakeConnector) Connect(_ context.Context, endpoint string) (Conn, error) {
	spec, ok := c.plugins[endpoint]
	if !ok {
		return nil, fmt.Errorf("dial unix %s: connect: no such file or directory", endpoint)
	}
	conn := &fakeConn{spec: spec, optionsFail: c.optionsFail}
	c.conns = append(c.conns, conn)
	return conn, nil
}

type fakeConn struct {
	fakePlugin
	spec        string
	optionsFail bool
	stream      Stream
	closed      bool
}

func (c *fakeConn) GetDevicePluginOptions(context.Context) (*pluginapi.DevicePluginOptions, error) {
	if c.optionsFail {
		return nil, errors.New("unavailable")
	}
	return &pluginapi.DevicePluginOptions{}, nil
}

func (c *fakeConn) ListAndWatch(s Stream) {
	c.stream = s
	s.Update(devs(c.spec))
}

func (c *fakeConn) Close() error { c.closed = true; return nil }

func newHandler(t *testing.T, c *fakeConnector) (*Handler, *[]string) {
	t.Helper()
	var got []string
	tracer := trace.Func(func(e trace.Event) { got = append(got, fmt.Sprintf("%s %s %s", e.Event, e.Reason, e.Message)) })
	m, err := New(Options{Clock: vclock.New(time.Unix(0, 0)), Tracer: tracer, Checkpoint: &memCheckpoint{}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(HandlerOptions{Manager: m, Connector: c, Dir: "/dp", Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	return h, &got
}

// capacity is the resource's capacity/allocatable.
func capacity(h *Handler, res string) string {
	c, a, _ := h.GetCapacity()
	cq, aq := c[v1.ResourceName(res)], a[v1.ResourceName(res)]
	return cq.String() + "/" + aq.String()
}

// TestHandlerRegistrationPaths: the plugin manager's RegisterPlugin and kubelet.sock's Register
// take a plugin in by the same steps, and fail with the kubelet's messages.
func TestHandlerRegistrationPaths(t *testing.T) {
	const res = "example.com/gpu"
	for _, tc := range []struct {
		name        string
		register    func(h *Handler) error
		optionsFail bool
		wantErr     string
		want        []string
		wantCap     string
	}{
		{
			name:     "plugin manager",
			register: func(h *Handler) error { return h.RegisterPlugin(res, "/dp/gpu.sock", []string{"v1beta1"}, nil) },
			want:     []string{"registered  resource=example.com/gpu endpoint=/dp/gpu.sock", "devices  resource=example.com/gpu healthy=2 unhealthy=0"},
			wantCap:  "2/2",
		},
		{
			name: "kubelet.sock",
			register: func(h *Handler) error {
				return h.Register(context.Background(), &pluginapi.RegisterRequest{Version: "v1beta1", Endpoint: "gpu.sock", ResourceName: res})
			},
			want:    []string{"registered  resource=example.com/gpu endpoint=/dp/gpu.sock", "devices  resource=example.com/gpu healthy=2 unhealthy=0"},
			wantCap: "2/2",
		},
		{
			name:     "no such endpoint",
			register: func(h *Handler) error { return h.RegisterPlugin(res, "/dp/none.sock", []string{"v1beta1"}, nil) },
			wantErr:  "failed to dial device plugin: dial unix /dp/none.sock: connect: no such file or directory",
			wantCap:  "0/0",
		},
		{
			name:        "options fail",
			register:    func(h *Handler) error { return h.RegisterPlugin(res, "/dp/gpu.sock", []string{"v1beta1"}, nil) },
			optionsFail: true,
			wantErr:     "failed to get device plugin options: unavailable",
			wantCap:     "0/0",
		},
		{
			name: "kubelet.sock, bad version",
			register: func(h *Handler) error {
				return h.Register(context.Background(), &pluginapi.RegisterRequest{Version: "v1alpha", Endpoint: "gpu.sock", ResourceName: res})
			},
			wantErr: `requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]`,
			want:    []string{`error Register requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]`},
			wantCap: "0/0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeConnector{plugins: map[string]string{"/dp/gpu.sock": "A B"}, optionsFail: tc.optionsFail}
			h, got := newHandler(t, c)
			err := tc.register(h)
			if gotErr := fmt.Sprint(err); (err == nil) != (tc.wantErr == "") || (err != nil && gotErr != tc.wantErr) {
				t.Errorf("register error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("trace (-want +got):\n%s", diff)
			}
			if got := capacity(h, res); got != tc.wantCap {
				t.Errorf("capacity/allocatable = %s, want %s", got, tc.wantCap)
			}
			if tc.optionsFail && !c.conns[0].closed {
				t.Errorf("a connection whose options failed was left open")
			}
		})
	}
}

// TestHandlerConnectionLifecycle: a plugin registering again replaces its connection, whose
// stream then says nothing; a stream that ends disconnects the plugin; DeRegisterPlugin closes
// the connection; after Close nothing registers.
func TestHandlerConnectionLifecycle(t *testing.T) {
	const res = "example.com/gpu"
	c := &fakeConnector{plugins: map[string]string{"/dp/a.sock": "A B", "/dp/b.sock": "A B C"}}
	h, _ := newHandler(t, c)
	if err := h.RegisterPlugin(res, "/dp/a.sock", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.RegisterPlugin(res, "/dp/b.sock", nil, nil); err != nil {
		t.Fatal(err)
	}
	first, second := c.conns[0], c.conns[1]
	if !first.closed {
		t.Errorf("the replaced connection is open")
	}
	first.stream.Update(devs("A"))
	first.stream.End(errors.New("EOF"))
	if got := capacity(h, res); got != "3/3" {
		t.Errorf("after the replaced stream spoke: %s, want 3/3", got)
	}
	second.stream.Update(devs("A B C:u"))
	if got := capacity(h, res); got != "3/2" {
		t.Errorf("after an update: %s, want 3/2", got)
	}
	second.stream.End(errors.New("EOF"))
	if got := capacity(h, res); got != "3/0" {
		t.Errorf("after the stream ended: %s, want 3/0", got)
	}

	if err := h.RegisterPlugin(res, "/dp/a.sock", nil, nil); err != nil {
		t.Fatal(err)
	}
	third := c.conns[2]
	h.DeRegisterPlugin(res, "/dp/a.sock")
	if !third.closed {
		t.Errorf("DeRegisterPlugin left the connection open")
	}
	if got := capacity(h, res); got != "2/0" {
		t.Errorf("after DeRegisterPlugin: %s, want 2/0", got)
	}

	h.Close()
	if err := h.RegisterPlugin(res, "/dp/a.sock", nil, nil); !errors.Is(err, ErrStopped) {
		t.Errorf("RegisterPlugin after Close = %v, want %v", err, ErrStopped)
	}
	if last := c.conns[len(c.conns)-1]; !last.closed {
		t.Errorf("a connection made after Close is open")
	}
}

func TestNewHandlerNeedsOptions(t *testing.T) {
	if _, err := NewHandler(HandlerOptions{}); !errors.Is(err, minikubelet.ErrMissingOption) {
		t.Errorf("NewHandler({}) = %v, want %v", err, minikubelet.ErrMissingOption)
	}
}
