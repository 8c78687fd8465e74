package volumemanager

import (
	"errors"
	"fmt"
	"strings"
)

// Operation is a volume plugin operation a Faults script can make fail.
type Operation string

// The operations Faults can make fail: the plugin's SetUp (a mount or a remount) and its
// TearDown (an unmount).
const (
	OpSetUp    Operation = "setUp"
	OpTearDown Operation = "tearDown"
)

// Operations lists the operations Faults accepts, in the order a message names them.
var Operations = []Operation{OpSetUp, OpTearDown}

// ErrScripted is the cause of every failure a Faults script makes: the plugin's SetUp or
// TearDown fails with "scripted SetUp failure" or "scripted TearDown failure", which the
// FailedMount event and the failed TearDown's log line carry as they carry a plugin's error.
var ErrScripted = errors.New("scripted")

// PluginFaults is what the volume plugins ask before each SetUp and TearDown: a non-nil error
// fails the operation before it does anything (no directory made or removed).
type PluginFaults interface {
	// Fail returns the error the operation on the volume of the pod namespace/name fails
	// with, or nil. It is asked at every SetUp (a remount after each SyncPod too): the pod's
	// name comes in its two parts, which the volume manager has without building a string.
	Fail(namespace, name, volume string, op Operation) error
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
	namespace, name, volume string
	op                      Operation
}

// Script makes the next times calls of op on the pod's ("namespace/name") volume fail; it
// replaces what was scripted for them. times must be positive and op one of Operations.
func (f *Faults) Script(pod, volume string, op Operation, times int) error {
	if op != OpSetUp && op != OpTearDown {
		return fmt.Errorf("script volume fault %q for %s volume %q: want %s or %s", op, pod, volume, OpSetUp, OpTearDown)
	}
	if times < 1 {
		return fmt.Errorf("script volume fault %s for %s volume %q: times %d: want at least 1", op, pod, volume, times)
	}
	if f.left == nil {
		f.left = map[faultKey]int{}
	}
	ns, name, _ := strings.Cut(pod, "/")
	f.left[faultKey{namespace: ns, name: name, volume: volume, op: op}] = times
	return nil
}

// Fail uses up one scripted failure of op on the volume of the pod namespace/name and returns
// its error; nil when none is left.
func (f *Faults) Fail(namespace, name, volume string, op Operation) error {
	if f == nil || len(f.left) == 0 {
		return nil
	}
	k := faultKey{namespace: namespace, name: name, volume: volume, op: op}
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

// Left reports how many failures of op on the pod's volume are still scripted.
func (f *Faults) Left(pod, volume string, op Operation) int {
	if f == nil {
		return 0
	}
	ns, name, _ := strings.Cut(pod, "/")
	return f.left[faultKey{namespace: ns, name: name, volume: volume, op: op}]
}

var _ PluginFaults = (*Faults)(nil)
