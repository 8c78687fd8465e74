package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// fakePlugin answers GetInfo for one socket and records its notifications.
type fakePlugin struct {
	info     *registerapi.PluginInfo
	getInfo  error
	notified []string
}

// fakeDialer serves fakePlugins by socket path.
type fakeDialer struct {
	plugins map[string]*fakePlugin
}

func (d *fakeDialer) Dial(_ context.Context, path string) (Client, error) {
	p, ok := d.plugins[path]
	if !ok {
		return nil, fmt.Errorf("dial %s: %w", path, errors.New("connection refused"))
	}
	return fakeClient{p}, nil
}

type fakeClient struct{ p *fakePlugin }

func (c fakeClient) GetInfo(context.Context) (*registerapi.PluginInfo, error) {
	if c.p.getInfo != nil {
		return nil, c.p.getInfo
	}
	return proto.Clone(c.p.info).(*registerapi.PluginInfo), nil
}

func (c fakeClient) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) error {
	c.p.notified = append(c.p.notified, strconv.FormatBool(s.PluginRegistered)+" "+s.Error)
	return nil
}

func (fakeClient) Close() error { return nil }

// fakeHandler records calls like the kubelet's plugin manager test handler.
type fakeHandler struct {
	calls       []string
	validateErr error
	registerErr error
}

func (h *fakeHandler) ValidatePlugin(name, endpoint string, _ []string) error {
	h.calls = append(h.calls, "validate "+name+" "+endpoint)
	return h.validateErr
}

func (h *fakeHandler) RegisterPlugin(name, endpoint string, _ []string, _ *time.Duration) error {
	h.calls = append(h.calls, "register "+name+" "+endpoint)
	return h.registerErr
}

func (h *fakeHandler) DeRegisterPlugin(name, endpoint string) {
	h.calls = append(h.calls, "deregister "+name+" "+endpoint)
}

// counter is a deterministic id generator.
func counter() func() string {
	n := 0
	return func() string { n++; return "id-" + strconv.Itoa(n) }
}
