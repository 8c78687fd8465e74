package devicemanager

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestReadCheckpointTraces: a restored checkpoint is traced with its pods and resources, a
// missing one leaves no trace, and an unreadable one is traced as an error and restores nothing.
func TestReadCheckpointTraces(t *testing.T) {
	cp := &memCheckpoint{}
	m, _ := newManager(t, cp)
	m.PluginConnected("example.com/gpu", "/s", &fakePlugin{}, &pluginapi.DevicePluginOptions{})
	m.Update("example.com/gpu", devs("A B"))
	if ok, _, msg := m.Admit(context.Background(), gpuPod("p1", 1)); !ok {
		t.Fatalf("p1 rejected: %s", msg)
	}
	good := append([]byte(nil), cp.data...)

	for _, tc := range []struct {
		name string
		data []byte
		want []trace.Event
	}{
		{name: "none", data: nil},
		{name: "restored", data: good, want: []trace.Event{{Component: trace.DeviceManager, Event: trace.KindRestored, Func: "readCheckpoint",
			Message: "pods=1 resources=example.com/gpu"}}},
		{name: "corrupt", data: []byte("{"), want: []trace.Event{{Component: trace.DeviceManager, Event: trace.KindError, Reason: "Checkpoint", Func: "readCheckpoint",
			Message: "checkpoint: checkpoint is corrupted: unexpected end of JSON input"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []trace.Event
			m2, err := New(Options{Clock: vclock.New(time.Unix(0, 0)), Tracer: trace.Func(func(e trace.Event) { got = append(got, e) }),
				Checkpoint: &memCheckpoint{data: tc.data}})
			if err != nil {
				t.Fatal(err)
			}
			_ = m2.ReadCheckpoint() // the error is traced
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadCheckpoint() trace (-want +got):\n%s", diff)
			}
		})
	}
}
