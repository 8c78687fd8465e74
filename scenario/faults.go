package scenario

import (
	"errors"
	"fmt"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/trace"
)

// ContainerStop scripts how a container reacts to SIGTERM from now on: it takes After to exit
// (instead of the runtime's containerStop latency), or, with IgnoreSIGTERM, it does not exit and
// every stop waits out the grace period and ends in SIGKILL.
type ContainerStop struct {
	Pod           string    `json:"pod"`
	Container     string    `json:"container"`
	After         *Duration `json:"after,omitempty"`
	IgnoreSIGTERM bool      `json:"ignoreSIGTERM,omitempty"`
}

func (c *ContainerStop) validate() error {
	errs := []error{podKey(c.Pod), required("container", c.Container)}
	switch {
	case c.After == nil && !c.IgnoreSIGTERM:
		errs = append(errs, errors.New("containerStop needs after or ignoreSIGTERM: true"))
	case c.After != nil && c.IgnoreSIGTERM:
		errs = append(errs, errors.New("containerStop: after and ignoreSIGTERM exclude each other: a container that ignores SIGTERM stops at the grace period's end"))
	}
	return errors.Join(errs...)
}

// containerStop scripts the container's reaction to SIGTERM.
func (e *engine) containerStop(c *ContainerStop) {
	s := fakeruntime.StopBehavior{IgnoreSIGTERM: c.IgnoreSIGTERM}
	msg := fmt.Sprintf("container %s ignores SIGTERM", c.Container)
	if c.After != nil {
		s.After = c.After.Duration
		msg = fmt.Sprintf("container %s stops %v after SIGTERM", c.Container, c.After.Duration)
	}
	e.stepEvent(trace.KindContainerStop, c.Pod, msg)
	e.node.Runtime.SetStopBehavior(c.Pod, c.Container, s)
}
