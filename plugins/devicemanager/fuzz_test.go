package devicemanager

import (
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// FuzzReadCheckpoint: any bytes in the checkpoint file give an error or a manager whose own
// checkpoint reads back, never a panic.
func FuzzReadCheckpoint(f *testing.F) {
	f.Add([]byte(`{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"example.com/gpu":["A"]}},"Checksum":0}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := New(Options{Clock: vclock.New(time.Unix(0, 0)), Tracer: trace.Discard, Checkpoint: &memCheckpoint{data: b}})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ReadCheckpoint(); err != nil {
			return
		}
		if err := m.storeCheckpoint(); err != nil {
			t.Fatal(err)
		}
		if err := m.ReadCheckpoint(); err != nil {
			t.Fatalf("own checkpoint does not read back: %v", err)
		}
	})
}
