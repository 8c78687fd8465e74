package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	// last is what the file holds, and at when it was last checked.
	last []byte
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
	k.last = data
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
	data, version, err := k.rt.VersionedCheckpoint()
	if err == nil && bytes.Equal(data, k.last) {
		k.version, k.saved = version, true
		return
	}
	if err == nil {
		err = writeFileAtomic(k.path, data)
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Unable to save the container runtime's state", "path", k.path)
		return
	}
	k.last = data
	k.version, k.saved = version, true
}

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
