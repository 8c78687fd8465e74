package minikubelet

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMissingOption is wrapped by every constructor when a required option is unset; the error
// names the constructor and the options that are missing. It is the one sentinel for this
// across the project, so that callers test for it with errors.Is whatever they built.
var ErrMissingOption = errors.New("missing required option")

// Missing collects the unset required options of a constructor, in the order checked:
//
//	var missing minikubelet.Missing
//	missing.Check("Clock", o.Clock == nil)
//	missing.Check("Tracer", o.Tracer == nil)
//	return missing.Err("new thing")
type Missing []string

// Check notes the option name when it is unset.
func (m *Missing) Check(name string, unset bool) {
	if unset {
		*m = append(*m, name)
	}
}

// Err is nil when no option is missing, else "<what>: options <names>: missing required option",
// wrapping ErrMissingOption. An empty what leaves the prefix to the caller.
func (m Missing) Err(what string) error {
	if len(m) == 0 {
		return nil
	}
	err := fmt.Errorf("options %s: %w", strings.Join(m, ", "), ErrMissingOption)
	if what == "" {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}
