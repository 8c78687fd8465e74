package devicemanager

import "fmt"

// kubeletError carries the kubelet's exact message and matches a sentinel of this package with
// errors.Is, so that the sentinel does not change the text pods and plugins are shown.
type kubeletError struct {
	msg  string
	kind error
}

func (e *kubeletError) Error() string        { return e.msg }
func (e *kubeletError) Is(target error) bool { return target == e.kind }

func kerr(kind error, format string, args ...any) error {
	return &kubeletError{msg: fmt.Sprintf(format, args...), kind: kind}
}
