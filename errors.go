package minikubelet

import "errors"

// ErrMissingOption is wrapped by every constructor when a required option is unset; the error
// names the constructor and the options that are missing. It is the one sentinel for this
// across the project, so that callers test for it with errors.Is whatever they built.
var ErrMissingOption = errors.New("missing required option")
