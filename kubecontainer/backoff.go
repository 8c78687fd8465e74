package kubecontainer

import (
	"errors"
	"time"
)

// Reasons the runtime gives for not starting a container yet.
var (
	// ErrCrashLoopBackOff is wrapped by a BackoffError when a container's restart is held back.
	ErrCrashLoopBackOff = errors.New("CrashLoopBackOff")
	// ErrImagePullBackOff is wrapped by the plain error of an image pull held back: in v1.35.0
	// only the crash-loop back-off is a BackoffError.
	ErrImagePullBackOff = errors.New("ImagePullBackOff")
)

// BackoffError says that the runtime held an action back until Expiry. Since v1.35 the kubelet's
// pod workers requeue a pod when its earliest back-off expires instead of on the next resync.
type BackoffError struct {
	// Err is ErrCrashLoopBackOff, possibly wrapped with the container name.
	Err error
	// Expiry is when the held-back action may be tried again.
	Expiry time.Time
}

// Error returns the underlying reason.
func (e *BackoffError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying reason, so errors.Is(err, ErrCrashLoopBackOff) works.
func (e *BackoffError) Unwrap() error { return e.Err }

// MinBackoffExpiration returns the earliest Expiry of every BackoffError in err's tree, including
// errors joined with errors.Join, and false if there is none.
func MinBackoffExpiration(err error) (time.Time, bool) {
	var earliest time.Time
	found := false
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if be, ok := e.(*BackoffError); ok {
			if !found || be.Expiry.Before(earliest) {
				earliest, found = be.Expiry, true
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return earliest, found
}
