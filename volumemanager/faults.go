package volumemanager

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// Operation is a volume plugin operation a Faults script can make fail.
type Operation string

// The operations Faults can make fail: the plugin's SetUp (a first mount: a remount never
// reaches the mounter) and its TearDown (an unmount).
const (
	OpSetUp    Operation = "setUp"
	OpTearDown Operation = "tearDown"
)

// operations are the operations Faults accepts, in the order a message names them.
var operations = [...]Operation{OpSetUp, OpTearDown}

// Operations lists the operations Faults accepts, in the order a message names them; a replay's
// failVolumeOperation step accepts the same. The slice is a new copy at each call, the caller's
// to change.
func Operations() []Operation { return slices.Clone(operations[:]) }

// ErrScripted is the cause of every failure a Faults script makes: the plugin's SetUp or
// TearDown fails with "scripted SetUp failure" or "scripted TearDown failure", which the
// FailedMount event and the failed TearDown's log line carry as they carry a plugin's error.
var ErrScripted = errors.New("scripted")

// PluginFaults is what the volume plugins ask where the node would fail them: a first mount asks
// after it read its objects (and asked its token), once a tmpfs's directory is made or instead
// of making a disk-backed one's; a TearDown asks before it removes anything. A non-nil error
// fails the operation there.
type PluginFaults interface {
	// Fail returns the error the operation on the volume of the pod with this UID fails with,
	// or nil. It is asked at every first mount and every TearDown. The UID names one
	// pod for its whole life, across kubelet restarts, and never a later pod of the same name;
	// a pod reconstructed from its directory alone has it too.
	Fail(uid types.UID, volume string, op Operation) error
}

// Faults scripts failures of the volume plugins' SetUp and TearDown, per pod and volume: the
// node's mounter failing, which the kubelet sees only as the plugin's error. It belongs to the
// node, not to the kubelet process: a script outlives a kubelet restart, as a failing mount
// does. The zero value scripts nothing. Every call comes from the volume manager's goroutine
// or, between its passes, from the driver that scripts it.
type Faults struct {
	left map[faultKey]int
}

// faultKey names one operation on one pod's volume.
type faultKey struct {
	uid    types.UID
	volume string
	op     Operation
}

// Script makes the next times calls of op on the volume of the pod with this UID fail; it
// replaces what was scripted for them. times must be positive and op one of Operations. A
// failure the pod never uses up stays with its UID, so a later pod of the same name does not
// inherit it, until the volume manager forgets the pod (ForgetPod).
func (f *Faults) Script(uid types.UID, volume string, op Operation, times int) error {
	if !slices.Contains(operations[:], op) {
		return fmt.Errorf("script volume fault %q for pod %s volume %q: want one of %v", op, uid, volume, operations)
	}
	if times < 1 {
		return fmt.Errorf("script volume fault %s for pod %s volume %q: times %d: want at least 1", op, uid, volume, times)
	}
	if f.left == nil {
		f.left = map[faultKey]int{}
	}
	f.left[faultKey{uid: uid, volume: volume, op: op}] = times
	return nil
}

// Fail uses up one scripted failure of op on the volume of the pod with this UID and returns
// its error; nil when none is left.
func (f *Faults) Fail(uid types.UID, volume string, op Operation) error {
	if f == nil || len(f.left) == 0 {
		return nil
	}
	k := faultKey{uid: uid, volume: volume, op: op}
	n, ok := f.left[k]
	if !ok {
		return nil
	}
	if n <= 1 {
		delete(f.left, k)
	} else {
		f.left[k] = n - 1
	}
	what := "SetUp"
	if op == OpTearDown {
		what = "TearDown"
	}
	return fmt.Errorf("%w %s failure", ErrScripted, what)
}

// Left reports how many failures of op on the volume of the pod with this UID are still
// scripted.
func (f *Faults) Left(uid types.UID, volume string, op Operation) int {
	if f == nil {
		return 0
	}
	return f.left[faultKey{uid: uid, volume: volume, op: op}]
}

// ForgetPod drops what is still scripted for the pod with this UID. The volume manager calls it
// once it has forgotten the pod (no volume of it desired or possibly mounted) and the pod's
// directory holds no volume's directory for a restarted kubelet to reconstruct: a failure the
// pod never used up would otherwise stay for the node's life, as no later pod has its UID.
func (f *Faults) ForgetPod(uid types.UID) {
	if f == nil {
		return
	}
	for k := range f.left {
		if k.uid == uid {
			delete(f.left, k)
		}
	}
}

var (
	_ PluginFaults = (*Faults)(nil)
	_ podForgetter = (*Faults)(nil)
)
