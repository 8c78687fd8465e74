package devicemanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// CheckpointFile is the checkpoint's name in the device plugin directory.
const CheckpointFile = "kubelet_internal_checkpoint"

// ErrCorruptCheckpoint is wrapped when the checkpoint's checksum does not match its data.
var ErrCorruptCheckpoint = errors.New("checkpoint is corrupted")

// podDevicesEntry is one container's devices for one resource, the kubelet's PodDevicesEntry.
type podDevicesEntry struct {
	PodUID        string
	ContainerName string
	ResourceName  string
	// DeviceIDs maps a NUMA node to device ids; -1 holds devices without topology.
	DeviceIDs map[int64][]string
	// AllocResp is the serialized ContainerAllocateResponse.
	AllocResp []byte
}

type checkpointData struct {
	PodDeviceEntries  []podDevicesEntry
	RegisteredDevices map[string][]string
}

type checkpointFile struct {
	Data     checkpointData
	Checksum uint32
}

func checksum(d checkpointData) (uint32, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return 0, err
	}
	h := fnv.New32a()
	_, _ = h.Write(b)
	return h.Sum32(), nil
}

// checkpoint is the manager's state in the checkpoint's form, in a stable order.
func (m *Manager) checkpoint() checkpointData {
	d := checkpointData{RegisteredDevices: map[string][]string{}}
	for _, uid := range slices.Sorted(maps.Keys(m.pods)) {
		for _, c := range slices.Sorted(maps.Keys(m.pods[uid])) {
			for _, res := range slices.Sorted(maps.Keys(m.pods[uid][c])) {
				a := m.pods[uid][c][res]
				d.PodDeviceEntries = append(d.PodDeviceEntries, podDevicesEntry{
					PodUID: uid, ContainerName: c, ResourceName: res,
					DeviceIDs: map[int64][]string{-1: slices.Clone(a.ids)}, AllocResp: a.resp,
				})
			}
		}
	}
	for res, set := range m.healthy {
		d.RegisteredDevices[res] = slices.Sorted(maps.Keys(set))
	}
	return d
}

// writeCheckpoint stores the checkpoint; a failure is traced, as the kubelet logs it.
func (m *Manager) writeCheckpoint() {
	if err := m.storeCheckpoint(); err != nil {
		m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "Checkpoint", Func: "writeCheckpoint", Message: err.Error()})
	}
}

func (m *Manager) storeCheckpoint() error {
	d := m.checkpoint()
	sum, err := checksum(d)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	b, err := json.Marshal(checkpointFile{Data: d, Checksum: sum})
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := m.opts.Checkpoint.Write(b); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// ReadCheckpoint is the manager's Start, readCheckpoint: it restores the pods' devices and, for
// every resource the checkpoint lists, an empty, stopped endpoint, so that capacity is 0 until the
// plugin registers again and the resource is removed if it does not within the grace period. A
// restored checkpoint is traced; a missing one is no error and leaves no trace; a checkpoint that
// cannot be read is traced and returned, and the manager starts empty.
func (m *Manager) ReadCheckpoint() error {
	d, err := m.readCheckpoint()
	if err != nil {
		m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindError, Reason: "Checkpoint", Func: "readCheckpoint", Message: err.Error()})
		return err
	}
	if d == nil {
		return nil
	}
	for _, e := range d.entries {
		m.record(e.uid, e.container, e.res, e.ids, e.resp)
	}
	now := m.opts.Clock.Now()
	for _, res := range d.resources {
		m.healthy[res], m.unhealthy[res] = map[string]bool{}, map[string]bool{}
		m.endpoints[res] = &endpoint{stopTime: now}
	}
	m.opts.Tracer.Emit(trace.Event{Component: trace.DeviceManager, Event: trace.KindRestored, Func: "readCheckpoint",
		Message: fmt.Sprintf("pods=%d resources=%s", d.pods, strings.Join(d.resources, ","))})
	return nil
}

// restored is a checkpoint as read, checked before anything of it is applied.
type restored struct {
	entries   []restoredEntry
	resources []string // sorted
	pods      int
}

type restoredEntry struct {
	uid, container, res string
	ids                 []string
	resp                []byte
}

// readCheckpoint reads and checks the checkpoint; nil without one.
func (m *Manager) readCheckpoint() (*restored, error) {
	b, err := m.opts.Checkpoint.Read()
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	if b == nil {
		return nil, nil
	}
	var f checkpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("checkpoint: %w: %w", ErrCorruptCheckpoint, err)
	}
	sum, err := checksum(f.Data)
	if err != nil || sum != f.Checksum {
		return nil, fmt.Errorf("checkpoint checksum %d, computed %d: %w", f.Checksum, sum, ErrCorruptCheckpoint)
	}
	d := &restored{resources: slices.Sorted(maps.Keys(f.Data.RegisteredDevices))}
	pods := map[string]bool{}
	for _, e := range f.Data.PodDeviceEntries {
		var ids []string
		for _, numa := range slices.Sorted(maps.Keys(e.DeviceIDs)) {
			ids = append(ids, e.DeviceIDs[numa]...)
		}
		slices.Sort(ids)
		resp := &pluginapi.ContainerAllocateResponse{}
		if err := proto.Unmarshal(e.AllocResp, resp); err != nil {
			return nil, fmt.Errorf("checkpoint entry %s/%s/%s: %w: %w", e.PodUID, e.ContainerName, e.ResourceName, ErrCorruptCheckpoint, err)
		}
		d.entries = append(d.entries, restoredEntry{uid: e.PodUID, container: e.ContainerName, res: e.ResourceName, ids: ids, resp: e.AllocResp})
		pods[e.PodUID] = true
	}
	d.pods = len(pods)
	return d, nil
}
