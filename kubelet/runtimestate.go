package kubelet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/fakeruntime"
)

// runtimeCheckpointPeriod is how often, at most, `run` writes the runtime's state while it
// changes: a restart loses at most this much of it (a container started meanwhile is started
// again).
const runtimeCheckpointPeriod = time.Second

// runtimeKeeper keeps the fake runtime's state in a file, so that a restarted `run` finds its
// sandboxes and containers as a restarted kubelet finds them in its CRI runtime (whose state
// lives on the node's disk, not in the kubelet). It belongs to the sync loop's goroutine, which
// owns the runtime.
type runtimeKeeper struct {
	path  string
	rt    *fakeruntime.Runtime
	clock clock.PassiveClock
	// last is the SHA-256 of what the file holds, valid when saved, and at when it was last
	// checked. A digest rather than the bytes: each node of a fleet kept its whole last
	// checkpoint (about 1 KB a pod) only to tell an unchanged one from a changed one.
	last [sha256.Size]byte
	at   time.Time
	// version is the runtime's StateVersion that last describes, valid when saved: a state
	// that has not changed since is not encoded again.
	version uint64
	saved   bool
}

// restore gives the runtime the file's state, if there is a file. A missing file is a node
// without containers (a wiped root directory: a rebooted node); a file that cannot be read or
// restored is logged with its reason and the runtime starts empty.
func (k *runtimeKeeper) restore(ctx context.Context) {
	logger := klog.FromContext(ctx)
	data, err := os.ReadFile(k.path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		err = k.rt.Restore(data)
	}
	if err != nil {
		logger.Error(err, "Ignoring the container runtime's saved state", "path", k.path)
		return
	}
	k.last = sha256.Sum256(data)
	k.version, k.saved = k.rt.StateVersion(), true
	logger.Info("Restored the container runtime's state", "path", k.path)
}

// save writes the runtime's state when it changed, at most once per runtimeCheckpointPeriod
// unless force. An unchanged StateVersion skips the encoding too. A failure is logged; the next
// save tries again.
func (k *runtimeKeeper) save(ctx context.Context, force bool) {
	now := k.clock.Now()
	if !force && now.Sub(k.at) < runtimeCheckpointPeriod {
		return
	}
	k.at = now
	if k.saved && k.rt.StateVersion() == k.version {
		return
	}
	buf := checkpointBuffers.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		checkpointBuffers.Put(buf)
	}()
	version, err := k.rt.AppendCheckpoint(buf)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Unable to save the container runtime's state", "path", k.path)
		return
	}
	data := buf.Bytes()
	sum := sha256.Sum256(data)
	if k.saved && sum == k.last {
		k.version = version
		return
	}
	if err := writeFileAtomic(k.path, data); err != nil {
		klog.FromContext(ctx).Error(err, "Unable to save the container runtime's state", "path", k.path)
		return
	}
	k.last = sum
	k.version, k.saved = version, true
}

// checkpointBuffers are the buffers the keepers encode the runtime's state into: shared by the
// nodes of a fleet, which save at most once a second each, so that a few buffers serve them all
// instead of a new slice of the whole state at every save.
var checkpointBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeFileAtomic writes data to path through a temporary file and a rename, so that a process
// killed meanwhile leaves the old file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
