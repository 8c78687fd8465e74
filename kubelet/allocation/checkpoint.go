package allocation

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
)

// CheckpointFile is the allocation checkpoint's name in the kubelet's root directory
// (allocatedPodsStateFile).
const CheckpointFile = "allocated_pods_state"

// ErrCorruptCheckpoint is wrapped when the checkpoint's checksum does not match its data.
var ErrCorruptCheckpoint = errors.New("checkpoint is corrupted")

// Checkpointer stores the allocation checkpoint, which outlives the kubelet process.
type Checkpointer interface {
	Write(data []byte) error
	// Read returns the stored bytes; a missing file is (nil, nil).
	Read() ([]byte, error)
}

// FileCheckpoint is the checkpoint file in the kubelet's root directory.
type FileCheckpoint struct{ Path string }

// Write replaces the file through a temporary file, synced, and a rename, as the kubelet's
// checkpoint store does, so that a process or machine stopped meanwhile leaves the old file or
// the new one, never a part of the new one. The temporary file is removed on any error.
func (c FileCheckpoint) Write(b []byte) error {
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o750); err != nil {
		return err
	}
	tmp := c.Path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, c.Path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Read returns the file's bytes, nil when it does not exist.
func (c FileCheckpoint) Read() ([]byte, error) {
	b, err := os.ReadFile(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// The checkpoint has the v1.35 kubelet's shape (pkg/kubelet/allocation/state): the JSON of the
// allocations as a string, and the checksum of that string as the kubelet's checkpoint manager
// computes it (FNV-32a over its dump for hashing), so that either reads the other's file.

// podResourceInfo is one pod's allocation (PodResourceInfo). Its fields have no JSON tags, as
// the kubelet's; PodLevelResources is always null: pod-level resources are resized only under
// an alpha feature gate, which is off.
type podResourceInfo struct {
	ContainerResources map[string]v1.ResourceRequirements
	PodLevelResources  *v1.ResourceRequirements
}

// checkpointInfo is PodResourceCheckpointInfo, the JSON the checkpoint's data holds.
type checkpointInfo struct {
	Entries map[types.UID]podResourceInfo `json:"entries,omitempty"`
}

// checkpointFile is the file (Checkpoint).
type checkpointFile struct {
	Data     string `json:"data"`
	Checksum uint64 `json:"checksum"`
}

// checksum is the kubelet checkpoint manager's checksum of data.
func checksum(data string) uint64 {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(data))
	return uint64(h.Sum32())
}

// encodeCheckpoint returns the checkpoint of the allocations. The same allocations give the
// same bytes (JSON sorts map keys).
func encodeCheckpoint(allocated map[types.UID]map[string]v1.ResourceRequirements) ([]byte, error) {
	info := checkpointInfo{Entries: make(map[types.UID]podResourceInfo, len(allocated))}
	for uid, containers := range allocated {
		info.Entries[uid] = podResourceInfo{ContainerResources: containers}
	}
	data, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encode allocation checkpoint: %w", err)
	}
	b, err := json.Marshal(checkpointFile{Data: string(data), Checksum: checksum(string(data))})
	if err != nil {
		return nil, fmt.Errorf("encode allocation checkpoint: %w", err)
	}
	return b, nil
}

// decodeCheckpoint returns the allocations a checkpoint holds: none for an empty file's nil. A
// checkpoint that does not decode or whose checksum does not match its data is refused whole.
func decodeCheckpoint(b []byte) (map[types.UID]map[string]v1.ResourceRequirements, error) {
	allocated := map[types.UID]map[string]v1.ResourceRequirements{}
	if b == nil {
		return allocated, nil
	}
	var cp checkpointFile
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if sum := checksum(cp.Data); sum != cp.Checksum {
		return nil, fmt.Errorf("%w: checksum %d, the data's is %d", ErrCorruptCheckpoint, cp.Checksum, sum)
	}
	var info checkpointInfo
	if err := json.Unmarshal([]byte(cp.Data), &info); err != nil {
		return nil, fmt.Errorf("failed to get pod resource information: %w", err)
	}
	for uid, p := range info.Entries {
		containers := p.ContainerResources
		if containers == nil {
			containers = map[string]v1.ResourceRequirements{}
		}
		allocated[uid] = containers
	}
	return allocated, nil
}
