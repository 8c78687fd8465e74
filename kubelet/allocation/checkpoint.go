package allocation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// CheckpointFile is the allocation checkpoint's name in the kubelet's root directory
// (allocatedPodsStateFile).
const CheckpointFile = "allocated_pods_state"

// ErrCorruptCheckpoint is wrapped when the checkpoint's checksum does not match its data.
var ErrCorruptCheckpoint = errors.New("checkpoint is corrupted")

// Checkpointer stores the allocation checkpoint, which outlives the kubelet process.
type Checkpointer interface {
	// Write replaces the stored bytes with data, which is lent for the call only: the caller
	// reuses it, so Write copies what it keeps.
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

// checksum is the kubelet checkpoint manager's checksum of data: FNV-32a over the data's dump
// for hashing, which for a string is its type in parentheses and then its bytes, unquoted. The
// data is a string when read back and bytes when saved.
func checksum[T string | []byte](data T) uint64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte("(string)"))
	_, _ = h.Write([]byte(data))
	return uint64(h.Sum32())
}

// checkpointBuffers are what a save encodes into: the file, its data, and the sorted UIDs.
type checkpointBuffers struct {
	file, data bytes.Buffer
	keys       []types.UID
}

// reset empties the buffers, keeping their room. The UIDs are cleared before the slice is
// truncated, so that pooled buffers do not keep the strings of pods long gone alive.
func (b *checkpointBuffers) reset() {
	b.file.Reset()
	b.data.Reset()
	clear(b.keys)
	b.keys = b.keys[:0]
}

// savePool holds the buffers the allocation managers save into: shared by the nodes of a
// fleet, each of which saves at most once a second, so that a few buffers serve them all
// instead of new copies of the checkpoint at every save.
var savePool = sync.Pool{New: func() any { return new(checkpointBuffers) }}

// appendCheckpoint appends the checkpoint of the allocations to b.file: json.Marshal's bytes of
// a checkpointFile whose data is json.Marshal's bytes of their checkpointInfo, the file the
// kubelet writes. The data is encoded into b.data, a pod at a time in the order Marshal sorts
// the map's keys, then written into the file as a JSON string and hashed where it lies. The
// kubelet's way (the data marshalled, copied into a string, hashed through a dump of it, and the
// whole marshalled again) made each save a few copies of the file.
func (b *checkpointBuffers) appendCheckpoint(allocated map[types.UID]podAllocation) error {
	data := &b.data
	data.Reset()
	// Entries is omitted when empty, as Marshal omits an empty map.
	if len(allocated) == 0 {
		data.WriteString("{}")
	} else {
		clear(b.keys) // as reset: no UID outlives its save in the room past len
		b.keys = b.keys[:0]
		for uid := range allocated {
			b.keys = append(b.keys, uid)
		}
		slices.Sort(b.keys)
		data.WriteString(`{"entries":{`)
		// An Encoder writes Marshal's bytes (escaped alike) and a newline, which is dropped.
		// A pod's podResourceInfo is written as Marshal writes it: its containers' map as an
		// object with the names in increasing order, and PodLevelResources null. The
		// allocation is written in its own order, with no sorting or deduplication here: it
		// matches Marshal's keys only because every podAllocation is sorted by compareName and
		// holds a name once, which with (inserting in place or replacing) and allocationOf (a
		// map's keys, sorted) keep.
		enc := json.NewEncoder(data)
		for i, uid := range b.keys {
			if i > 0 {
				data.WriteByte(',')
			}
			data.Write(appendJSONString(data.AvailableBuffer(), string(uid)))
			data.WriteString(`:{"ContainerResources":{`)
			for j := range allocated[uid] {
				c := &allocated[uid][j]
				if j > 0 {
					data.WriteByte(',')
				}
				data.Write(appendJSONString(data.AvailableBuffer(), c.name))
				data.WriteByte(':')
				if err := enc.Encode(&c.resources); err != nil {
					return fmt.Errorf("encode allocation checkpoint: pod %s: container %s: %w", uid, c.name, err)
				}
				data.Truncate(data.Len() - 1) // the newline
			}
			data.WriteString(`},"PodLevelResources":null}`)
		}
		data.WriteString("}}")
	}
	file := &b.file
	file.WriteString(`{"data":`)
	file.Write(appendJSONString(file.AvailableBuffer(), data.Bytes()))
	file.WriteString(`,"checksum":`)
	file.Write(strconv.AppendUint(file.AvailableBuffer(), checksum(data.Bytes()), 10))
	file.WriteByte('}')
	return nil
}

// appendJSONString appends s as encoding/json writes a string (with HTML escaping, its
// default): quoted, with '"' and '\' escaped, the control characters as \b, \f, \n, \r, \t or
// \u00XX, '<', '>' and '&' as \u00XX, each byte that is not valid UTF-8 as \ufffd, and U+2028
// and U+2029 as \u2028 and \u2029. TestAppendJSONStringIsMarshals holds it to Marshal.
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// decodeCheckpoint returns the allocations a checkpoint holds: none for an empty file's nil. A
// checkpoint that does not decode or whose checksum does not match its data is refused whole.
func decodeCheckpoint(b []byte) (map[types.UID]podAllocation, error) {
	allocated := map[types.UID]podAllocation{}
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
		allocated[uid] = allocationOf(p.ContainerResources)
	}
	return allocated, nil
}

// allocationOf returns the allocation of containers, a map by container name as the checkpoint
// holds it.
func allocationOf(containers map[string]v1.ResourceRequirements) podAllocation {
	alloc := make(podAllocation, 0, len(containers))
	for name, r := range containers {
		alloc = append(alloc, containerAllocation{name: name, resources: r})
	}
	slices.SortFunc(alloc, byName)
	return alloc
}
